// A driver who never misses an offer (issue 35, docs/push.md), on a 390×844 phone: an offer that arrives while the
// driver has scrolled down the shift takes the whole screen, with its countdown, and is answered there; declining
// asks once; with the page hidden (another app in front), the offer is also shown as a system notification through
// the service worker. Ana is this spec's own driver, in a town of her own (Sorocaba), so that dispatch offers her
// and none of the seed's drivers; the dispatch settings are put back as they were.
import { randomUUID } from "node:crypto";
import { Api, expect, newContext, signIn, test } from "./support.ts";

const ANA = { name: "Ana Alerta", email: `ana-${randomUUID().slice(0, 8)}@example.com`, password: "ana-pass-12345" };
const SOROCABA = { lat: -23.5015, lng: -47.4526 };
const north = (km: number) => ({ lat: SOROCABA.lat + km / 111.195, lng: SOROCABA.lng });
const run = Date.now().toString(36).slice(-4);

let owner: Api;
let ana: Api;
let settings: Record<string, unknown>;
const made: string[] = [];

test.beforeAll(async () => {
  owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  settings = await owner.call("GET", "/api/v1/dispatch/settings");
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", {
    photo: false,
    signature: false,
    note: false,
    handover_code: false,
  });
  await owner.call("POST", "/api/v1/drivers", ANA);
  ana = await Api.signIn(ANA.email, ANA.password);
});

test.afterAll(async () => {
  await owner?.call("PUT", "/api/v1/dispatch/settings", settings);
  for (const id of made) {
    const now = await owner.call<{ status: string }>("GET", `/api/v1/deliveries/${id}`);
    if (["pending", "accepted"].includes(now.status)) {
      await owner.call("POST", `/api/v1/deliveries/${id}/cancel`, { reason: "fim do teste" });
    }
  }
  await ana?.dispose();
  await owner?.dispose();
});

async function deliver(to: string, driverId?: string) {
  const created = await owner.call<{ id: string; destination_address: string }>("POST", "/api/v1/deliveries", {
    origin_address: `Rua XV de Novembro, ${run}, Sorocaba`,
    origin: north(0.2),
    destination_address: to,
    destination: north(1.5),
    payment_method: "invoice",
    ...(driverId ? { driver_id: driverId } : {}),
  });
  made.push(created.id);
  return created;
}

test("an offer takes the phone's screen while scrolled down, and is a notification when the page is hidden", async ({ browser }) => {
  const phone = await newContext(browser, { viewport: { width: 390, height: 844 }, permissions: ["notifications"] });
  // What the app asks the system to show: every notification through the service worker, recorded, then shown.
  await phone.addInitScript(() => {
    if (typeof ServiceWorkerRegistration === "undefined") return; // about:blank
    const shown: { title: string; body?: string; tag?: string }[] = [];
    (window as unknown as { shownNotifications: typeof shown }).shownNotifications = shown;
    const original = ServiceWorkerRegistration.prototype.showNotification;
    ServiceWorkerRegistration.prototype.showNotification = function (title, options) {
      shown.push({ title, body: options?.body, tag: options?.tag });
      return original.call(this, title, options).catch(() => {});
    };
  });
  const page = await phone.newPage();
  const anaId = (await ana.call<{ driver_id: string }>("GET", "/api/v1/wallets/me")).driver_id;

  // Ana's shift: three deliveries under way, so that the screen scrolls.
  for (const n of [1, 2, 3]) await deliver(`Avenida Itavuvu, ${n}${run}0`, anaId);
  await owner.call("PUT", "/api/v1/dispatch/settings", {
    mode: "offer",
    offer_timeout_s: 90,
    offer_batch: 1,
    max_active_per_driver: 10,
    max_distance_km: 5,
  });
  await signIn(page, ANA.email, ANA.password);
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  await expect(page.getByRole("listitem").filter({ hasText: `Avenida Itavuvu, 3${run}0` })).toBeVisible();
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.mouse.wheel(0, 5000);
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(300);

  // An offer arrives: the whole screen, with the countdown, wherever the page was.
  await ana.call("PUT", "/api/v1/locations/me", north(1));
  const first = await deliver(`Rua da Penha, 1${run}`);
  const alert = page.getByRole("alertdialog", { name: "Nova oferta de entrega" });
  await expect(alert).toBeVisible({ timeout: 20_000 });
  await expect(alert).toContainText(first.destination_address);
  await expect(alert.getByRole("timer")).toHaveText(/^Responda em 1:[0-3]\d \(até \d\d:\d\d:\d\d\)$/);
  const box = (await alert.boundingBox())!;
  expect(box).toMatchObject({ x: 0, y: 0, width: 390, height: 844 });
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(300);
  await expect(alert.getByRole("button", { name: "Aceitar" })).toBeFocused();

  // Declining asks once: dismissed, the offer stays; confirmed, it is declined.
  const asked: string[] = [];
  page.once("dialog", (dialog) => {
    asked.push(dialog.message());
    void dialog.dismiss();
  });
  await alert.getByRole("button", { name: "Recusar" }).click();
  expect(asked).toEqual(["Recusar esta entrega? Ela será oferecida a outro entregador."]);
  await expect(alert).toBeVisible();
  page.once("dialog", (dialog) => void dialog.accept());
  await alert.getByRole("button", { name: "Recusar" }).click();
  await expect(alert).toBeHidden();
  await expect.poll(async () =>
    (await owner.call<{ offers: { outcome: string | null }[] }>("GET", `/api/v1/deliveries/${first.id}/dispatch`))
      .offers.map((o) => o.outcome)
  ).toEqual(["declined"]);

  // The page hidden (another app in front): the next offer is also a system notification.
  await page.evaluate(() => {
    Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });
    Object.defineProperty(document, "hidden", { value: true, configurable: true });
    document.dispatchEvent(new Event("visibilitychange"));
  });
  const second = await deliver(`Rua da Penha, 2${run}`);
  await expect.poll(
    () => page.evaluate(() => (window as unknown as { shownNotifications: unknown[] }).shownNotifications),
    { timeout: 20_000 },
  ).toEqual([{
    title: "Nova oferta de entrega",
    body:
      `Retirada em ${`Rua XV de Novembro, ${run}, Sorocaba`}, entrega em ${second.destination_address}. Toque para responder.`,
    tag: `offer-${second.id}`,
  }]);
  await expect(alert).toBeVisible();
  await alert.getByRole("button", { name: "Aceitar" }).click();
  await expect(alert).toBeHidden();
  await expect.poll(async () => (await owner.call<{ status: string }>("GET", `/api/v1/deliveries/${second.id}`)).status)
    .toBe("accepted");
  await phone.close();
});

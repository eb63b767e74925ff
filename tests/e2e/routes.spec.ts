// Routes (issue 32) through the browser: a dispatcher plans a day of 30 deliveries over 4 drivers on the Routes page,
// moves a stop to another route and one up (whose capacity violation the page says in words), and publishes; a
// driver on a phone follows the route through three stops, with a reload and the connection lost on the way; the
// recipient of the route's last drop-off sees how many stops come before theirs fall. The deliveries and drivers are
// seeded through the API; every check of an effect reads the server. Each vehicle carries one delivery at a time
// (capacity 1), so every route alternates pickup and drop-off, and the driver's three stops include a drop-off.
import type { Page } from "@playwright/test";
import { Api, expect, expectNoSidewaysScroll, newContext, shot, signIn, test } from "./support.ts";

interface Delivery {
  id: string;
  status: string;
  destination_address: string;
  tracking_token: string | null;
}
interface Stop {
  seq: number;
  delivery_id: string;
  kind: "pickup" | "dropoff";
  status: string;
  address: string;
}
interface Route {
  id: string;
  status: string;
  driver_id: string;
  stops: Stop[];
  violations: { seq: number; kind: string }[];
}

const run = Date.now().toString(36).slice(-4);
const PASSWORD = "correct-horse-battery";
/** Four shops, each a cluster of deliveries around it, far enough apart that each driver keeps to one. */
const SHOPS = [
  { lat: -23.5503, lng: -46.6339 },
  { lat: -23.6203, lng: -46.6339 },
  { lat: -23.5503, lng: -46.7039 },
  { lat: -23.6203, lng: -46.7039 },
];
const NAMES = ["Ana", "Bia", "Caio", "Davi"].map((n) => `${n} Rota ${run}`);

let owner: Api;
const drivers: { name: string; email: string; id: string; api: Api }[] = [];
const deliveries: Delivery[] = [];

test.beforeAll(async () => {
  test.setTimeout(180_000);
  owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  // Deliveries stay pending (nobody's) until a route is published; completing needs no proof here.
  await owner.call("PUT", "/api/v1/dispatch/settings", { mode: "broadcast" });
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: false, signature: false, note: false });
  for (const [i, name] of NAMES.entries()) {
    const email = `rota-${i}-${run}@example.com`;
    const driver = await owner.call<{ id: string }>("POST", "/api/v1/drivers", {
      name,
      email,
      password: PASSWORD,
      vehicle: { type: "moto", plate: `ROT${i}A${run.slice(0, 2).toUpperCase()}`, capacity: 1 },
    });
    const api = await Api.signIn(email, PASSWORD);
    await api.call("PUT", "/api/v1/locations/me", SHOPS[i]);
    drivers.push({ name, email, id: driver.id, api });
  }
  for (let batch = 0; batch < 30; batch += 6) {
    deliveries.push(
      ...await Promise.all(Array.from({ length: 6 }, (_, k) => {
        const i = batch + k;
        const shop = SHOPS[i % 4];
        const j = Math.floor(i / 4);
        return owner.call<Delivery>("POST", "/api/v1/deliveries", {
          origin: shop,
          destination: { lat: shop.lat + 0.002 * (j + 1), lng: shop.lng + 0.0015 * ((j % 3) - 1) },
          origin_address: `Loja ${i % 4 + 1} (${run})`,
          destination_address: `Rua da Rota, ${i + 1} (${run})`,
          payment_method: "invoice",
          recipient_name: `Rita ${i + 1}`,
          recipient_phone: "+5511988887777",
        });
      })),
    );
  }
});
test.afterAll(async () => {
  if (!owner) return;
  try {
    await cleanUp();
  } finally {
    for (const d of drivers) await d.api.dispose();
    await owner.dispose();
  }
});
async function cleanUp() {
  // Nothing left for the other journeys: the routes cancelled, this run's deliveries still open cancelled.
  const { items } = await owner.call<{ items: Route[] }>("GET", "/api/v1/routes?limit=100");
  for (const r of items.filter((r) => drivers.some((d) => d.id === r.driver_id))) {
    if (["draft", "published", "in_progress"].includes(r.status)) {
      await owner.call("POST", `/api/v1/routes/${r.id}/cancel`);
    }
  }
  for (const d of deliveries) {
    const now = await owner.call<Delivery & { driver_id: string | null }>("GET", `/api/v1/deliveries/${d.id}`);
    // Picked up: the driver delivers it (a delivery under way cannot be cancelled).
    const holder = drivers.find((x) => x.id === now.driver_id);
    if (now.status === "in_progress" && holder) await holder.api.call("POST", `/api/v1/deliveries/${d.id}/complete`);
    else if (["pending", "accepted"].includes(now.status)) {
      await owner.call("POST", `/api/v1/deliveries/${d.id}/cancel`, { reason: "fim do teste" });
    }
  }
  for (const d of drivers) await owner.call("PATCH", `/api/v1/drivers/${d.id}`, { active: false });
}

const routesOf = async () =>
  (await owner.call<{ items: Route[] }>("GET", "/api/v1/routes?limit=100")).items.filter((r) =>
    drivers.some((d) => d.id === r.driver_id) && r.status !== "cancelled"
  );
const routeOf = async (id: string) => await owner.call<Route>("GET", `/api/v1/routes/${id}`);
const nameOf = (driverId: string) => drivers.find((d) => d.id === driverId)!.name;
const addressOf = (deliveryId: string) => deliveries.find((d) => d.id === deliveryId)!.destination_address;

test("a day planned over four drivers, a stop moved, published; a driver follows the route; the recipient counts the stops", async ({ browser }) => {
  test.setTimeout(300_000);
  // The plan is for tomorrow in São Paulo, chosen on the page: its shifts run the whole day, whatever the hour now
  // (today's would run from now to midnight, too short late in the evening).
  const tomorrow = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" })
    .format(new Date(Date.now() + 24 * 3600_000));

  // 1. The dispatcher chooses this run's 30 deliveries and its 4 drivers, and plans.
  const panel = await newContext(browser, { viewport: { width: 1366, height: 768 } });
  const page = await panel.newPage();
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  await page.getByRole("link", { name: "Rotas", exact: true }).first().click();
  await expect(page.getByRole("heading", { name: "Rotas", level: 1 })).toBeVisible();
  await page.getByText("Entregas pendentes sem rota").click();
  await page.getByRole("button", { name: "Nenhuma", exact: true }).click();
  const mine = page.getByRole("checkbox", { name: new RegExp(`\\(${run}\\)`) });
  await expect(mine).toHaveCount(30, { timeout: 20_000 });
  for (const box of await mine.all()) await box.check();
  await expect(page.getByText(/^Entregas pendentes sem rota: 30 de \d+ entregas escolhidas$/)).toBeVisible();
  const driverBoxes = page.getByRole("group", { name: "Entregadores" }).getByRole("checkbox");
  for (const box of await driverBoxes.all()) {
    const label = await box.evaluate((e) => (e as HTMLInputElement).labels?.[0]?.textContent ?? "");
    if (NAMES.some((n) => label.includes(n))) await box.check();
    else await box.uncheck();
  }
  await expect(page.getByRole("group", { name: "Entregadores" })).toContainText("Moto, 1 unidade");
  await page.getByLabel("Dia", { exact: true }).fill(tomorrow);
  await page.getByRole("button", { name: "Planejar rotas" }).click();
  await expect(page.getByText(/^Planejado em [\d,]+ s pelo otimizador (embutido|VROOM)\.$/)).toBeVisible({
    timeout: 60_000,
  });
  await expect(page.getByText(/^Sem rota/)).toHaveCount(0);
  const planned = await routesOf();
  expect(planned).toHaveLength(4);
  expect(planned.every((r) => r.status === "draft")).toBe(true);
  expect(planned.flatMap((r) => r.stops).filter((s) => s.kind === "dropoff")).toHaveLength(30);
  const card = (driverId: string) => page.getByRole("article", { name: `Rota de ${nameOf(driverId)}` });
  for (const r of planned) await expect(card(r.driver_id).getByRole("listitem")).toHaveCount(r.stops.length);
  await expect(page.getByRole("img", { name: "Mapa das rotas" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, "routes-01-planned");

  // The route the driver will follow: the longest; the moves are made on two others.
  const [followed, from, to] = [...planned].sort((a, b) => b.stops.length - a.stops.length);

  // 2. A delivery moves from one route to another: its pickup and drop-off join the end of that route.
  const moved = from.stops.find((s) => s.kind === "pickup")!;
  await card(from.driver_id).getByLabel(`Mover a parada ${moved.seq} para outra rota`).selectOption({
    label: nameOf(to.driver_id),
  });
  await expect(card(to.driver_id).getByRole("listitem")).toHaveCount(to.stops.length + 2);
  await expect(card(to.driver_id)).toContainText(addressOf(moved.delivery_id));
  await expect(card(from.driver_id).getByRole("listitem")).toHaveCount(from.stops.length - 2);
  const after = await routeOf(to.id);
  expect(after.stops.slice(-2).map((s) => [s.delivery_id, s.kind])).toEqual([
    [moved.delivery_id, "pickup"],
    [moved.delivery_id, "dropoff"],
  ]);

  // 3. A stop moved up: its route's second pickup before the first drop-off carries two at once, over capacity.
  await card(to.driver_id).getByRole("button", { name: "Subir 3", exact: true }).click();
  await expect(card(to.driver_id).getByText(/^Parada \d+: passa da capacidade do veículo$/).first()).toBeVisible();
  const reordered = await routeOf(to.id);
  expect(reordered.violations.map((v) => v.kind)).toContain("capacity");
  expect(reordered.stops.slice(0, 3).map((s) => s.kind)).toEqual(["pickup", "pickup", "dropoff"]);
  await shot(page, "routes-02-moved");

  // 4. Every route published: its deliveries are its driver's.
  for (const r of planned) {
    await card(r.driver_id).getByRole("button", { name: "Publicar" }).click();
    await expect(card(r.driver_id).getByText("Publicada", { exact: true })).toBeVisible();
  }
  const published = await routeOf(followed.id);
  expect(published.status).toBe("published");
  const first = await owner.call<Delivery & { driver_id: string }>(
    "GET",
    `/api/v1/deliveries/${published.stops[0].delivery_id}`,
  );
  expect([first.status, first.driver_id]).toEqual(["accepted", followed.driver_id]);

  // 5. The recipient of the followed route's last drop-off: the drop-offs before theirs.
  const lastDrop = published.stops.filter((s) => s.kind === "dropoff").at(-1)!;
  const before = published.stops.filter((s) => s.kind === "dropoff").length - 1;
  const recipient = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const track = await recipient.newPage();
  await track.goto(`/track/${deliveries.find((d) => d.id === lastDrop.delivery_id)!.tracking_token}`);
  await expect(track.getByText(`Faltam ${before} paradas antes da sua.`)).toBeVisible();
  await shot(track, "routes-03-recipient");

  // 6. The driver's phone: the route's stops in order, the next one first.
  const driver = drivers.find((d) => d.id === followed.driver_id)!;
  const phone = await newContext(browser, {
    viewport: { width: 390, height: 844 },
    geolocation: { latitude: SHOPS[0].lat, longitude: SHOPS[0].lng },
    permissions: ["geolocation"],
  });
  const app = await phone.newPage();
  await signIn(app, driver.email, PASSWORD);
  const route = app.getByRole("region", { name: "Sua rota" });
  await expect(route).toBeVisible({ timeout: 20_000 });
  await expect.poll(() => app.evaluate(() => !!navigator.serviceWorker.controller), { timeout: 20_000 }).toBe(true);
  const total = published.stops.length;
  const progress = route.getByText(new RegExp(`^\\d+ de ${total} paradas feitas$`));
  await expect(progress).toHaveText(`0 de ${total} paradas feitas`);
  const next = route.locator("li[aria-current=step]");
  const s1 = published.stops[0];
  await expect(next).toContainText(`1. Coleta`);
  await expect(next).toContainText(s1.address);
  await expect(next.getByRole("link", { name: "Navegar" })).toHaveAttribute(
    "href",
    new RegExp(`^https://www\\.google\\.com/maps/dir/\\?api=1&destination=-?[\\d.]+,-?[\\d.]+`),
  );
  await expectNoSidewaysScroll(app);
  await shot(app, "routes-04-driver-route");

  const cards = app.getByRole("region", { name: "Suas entregas" });
  const cardOf = (deliveryId: string) => cards.getByRole("listitem").filter({ hasText: addressOf(deliveryId) });
  /** The driver does the next stop on the card the app puts first. */
  const doStop = async (stop: Stop) => {
    const c = cardOf(stop.delivery_id);
    await expect(c.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
    await c.getByRole("button", { name: stop.kind === "pickup" ? "Iniciar entrega" : "Concluir entrega" }).click();
  };
  const serverDone = async () => (await routeOf(followed.id)).stops.filter((s) => s.status === "done").length;

  // Stop 1, the pickup: the delivery starts; the route is in progress.
  await doStop(s1);
  await expect(progress).toHaveText(`1 de ${total} paradas feitas`);
  await expect.poll(serverDone, { timeout: 20_000 }).toBe(1);
  await expect.poll(async () => (await routeOf(followed.id)).status).toBe("in_progress");

  // A reload: the route is read again, the next stop is its drop-off.
  await app.reload();
  await expect(progress).toHaveText(`1 de ${total} paradas feitas`, { timeout: 20_000 });
  const s2 = published.stops[1];
  expect([s2.delivery_id, s2.kind]).toEqual([s1.delivery_id, "dropoff"]);
  await expect(next).toContainText(`2. Entrega para`);
  await expect(next).toContainText(s2.address);

  // Stop 2, the drop-off: completed; the recipient now has one stop fewer before theirs.
  await doStop(s2);
  await expect(progress).toHaveText(`2 de ${total} paradas feitas`);
  await expect.poll(serverDone, { timeout: 20_000 }).toBe(2);
  await expect(async () => {
    await track.reload();
    await expect(track.getByText(`Faltam ${before - 1} paradas antes da sua.`)).toBeVisible({ timeout: 3_000 });
  }).toPass({ timeout: 30_000, intervals: [2_000] });
  await shot(track, "routes-05-recipient-one-fewer");

  // Stop 3 with the connection lost: done on the phone at once, through a reload, and on the server once back.
  const s3 = published.stops[2];
  await expect(next).toContainText(s3.address);
  await phone.setOffline(true);
  await doStop(s3);
  await expect(progress).toHaveText(`3 de ${total} paradas feitas`);
  await app.reload();
  await expect(progress).toHaveText(`3 de ${total} paradas feitas`, { timeout: 20_000 });
  await expect(app.getByText("1 ação aguardando conexão.")).toBeVisible();
  await expectNoSidewaysScroll(app);
  await shot(app, "routes-06-driver-offline");
  expect(await serverDone()).toBe(2);
  await phone.setOffline(false);
  await expect(app.getByText("1 ação aguardando conexão.")).toHaveCount(0, { timeout: 30_000 });
  await expect.poll(serverDone, { timeout: 20_000 }).toBe(3);
  await expect(progress).toHaveText(`3 de ${total} paradas feitas`);

  // The panel follows the route under way.
  await expect(card(followed.driver_id).getByText("Em andamento", { exact: true })).toBeVisible({ timeout: 20_000 });
  await expect(card(followed.driver_id)).toContainText(`3 de ${total} paradas feitas`);
  await shot(page, "routes-07-panel-in-progress");
  for (const c of [panel, recipient, phone]) await c.close();
});

/** Only for a look at the page on a phone: the planned routes' list and map at 390 px. */
test("the Routes page on a phone", async ({ browser }) => {
  const phone = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const page: Page = await phone.newPage();
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  await page.goto("/routes");
  await expect(page.getByRole("heading", { name: "Rotas", level: 1 })).toBeVisible();
  await expect(page.getByRole("button", { name: "Planejar rotas" })).toBeVisible();
  await expect(page.getByText("Carregando", { exact: false })).toHaveCount(0, { timeout: 20_000 });
  await expectNoSidewaysScroll(page);
  await shot(page, "routes-08-phone");
  await phone.close();
});

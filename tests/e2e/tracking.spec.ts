// The recipient's tracking page follows a driver to the door: the owner copies
// the link from the delivery's page, the recipient opens it without an account,
// and sees the driver assigned, on the way on the map with an ETA, then arrived.
// The driver's moves go through the API, as the driver app would send them.
import type { APIRequestContext, Page } from "@playwright/test";
import { accessToken, baseURL, expect, newContext, shot, signIn, test } from "./support.ts";

async function driverToken(request: APIRequestContext, anonKey: string) {
  const res = await request.post("/auth/v1/token?grant_type=password", {
    headers: { apikey: anonKey },
    data: { email: "driver2@demo.test", password: "demo-driver-pass" },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token as string;
}

/** A position, sent again when the 10-second limit asks to wait (an earlier spec may have sent one). */
async function putLocation(page: Page, token: string, data: { lat: number; lng: number }) {
  for (;;) {
    const res = await page.request.put("/api/v1/locations/me", { headers: { authorization: `Bearer ${token}` }, data });
    if (res.status() !== 429) {
      expect(res.status(), await res.text()).toBe(200);
      return await res.json();
    }
    await page.waitForTimeout(Number(res.headers()["retry-after"]) * 1000);
  }
}

async function asDriver(page: Page, token: string, path: string) {
  const res = await page.request.post(path, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status(), await res.text()).toBe(200);
  return await res.json();
}

test("the recipient's page follows a driver to the door; the panel shows and copies the link", async ({ browser }) => {
  const owner = await newContext(browser, { permissions: ["clipboard-read", "clipboard-write"] });
  const recipient = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  const page = await recipient.newPage();

  await signIn(ownerPage, "owner@demo.test", "demo-owner-pass");
  await expect(ownerPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
  // This journey completes without proof: the company requires none (whatever an earlier spec left).
  const ownerToken = await accessToken(ownerPage);
  const none = await ownerPage.request.put("/api/v1/companies/me/proof-requirements", {
    headers: { authorization: `Bearer ${ownerToken}` },
    data: { photo: false, signature: false, note: false },
  });
  expect(none.status()).toBe(200);
  await ownerPage.getByRole("link", { name: "Nova entrega" }).first().click();
  await ownerPage.getByLabel("Endereço de retirada").fill("Praça da Sé, São Paulo");
  await ownerPage.getByLabel("Endereço de entrega").fill("Rua Vergueiro, 1000");
  await ownerPage.getByLabel("Forma de pagamento", { exact: true }).selectOption("invoice");
  await ownerPage.getByRole("button", { name: "Criar entrega" }).click();
  await expect(ownerPage.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  const deliveryId = ownerPage.url().split("/").pop()!;
  await ownerPage.getByLabel("Atribuir a um entregador").selectOption({ label: "Dino Driver" });
  await ownerPage.getByRole("button", { name: "Atribuir", exact: true }).click();
  await expect(ownerPage.getByText("Aceita", { exact: true }).first()).toBeVisible();

  // The link is on the delivery's page, and copies.
  const link = ownerPage.getByLabel("Link de acompanhamento para quem recebe");
  await expect(link).toHaveValue(new RegExp(`^${baseURL()}/track/[A-Za-z0-9_-]{22}$`));
  const url = await link.inputValue();
  await ownerPage.getByRole("button", { name: "Copiar link" }).click();
  await expect(ownerPage.getByRole("button", { name: "Link copiado" })).toBeVisible();
  expect(await ownerPage.evaluate(() => navigator.clipboard.readText())).toBe(url);

  // The recipient opens it with no account: the driver is assigned, not yet on the way.
  await page.goto(url);
  await expect(page.getByRole("heading", { name: "Sua entrega" })).toBeVisible();
  const summary = page.getByRole("status", { name: "Situação da entrega" });
  await expect(summary).toHaveText("Dino vai retirar sua entrega em breve.");
  await expect(page.getByRole("img", { name: "Posição do entregador" })).toHaveCount(0);
  await expect(page.getByText("Dino Driver")).toHaveCount(0); // only the first name, in the sentence
  expect(await page.evaluate(() => localStorage.length)).toBe(0); // nobody is signed in

  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );
  const token = await driverToken(page.request, anonKey);
  await asDriver(page, token, `/api/v1/deliveries/${deliveryId}/start`);
  // Live, through the link's channel: no reload.
  await expect(summary).toHaveText("Dino está a caminho com sua entrega.");
  const map = page.getByRole("img", { name: "Posição do entregador" });
  await expect(map).toBeVisible();

  const first = await putLocation(page, token, { lat: -23.5540, lng: -46.6380 });
  await expect(map.getByTitle("Seu entregador")).toHaveCount(1);
  const seen = page.getByText(/^Posição atualizada às \d{2}:\d{2}:\d{2}\.$/);
  await expect(seen).toBeVisible();
  const firstSeen = await seen.textContent();
  // The ETA, refreshed from the routing service after the position.
  await expect(page.getByRole("status", { name: "Chegada" })).toHaveText(
    /^Chega por volta das \d{2}:\d{2} \(faltam \d+(,\d)? km\)\.$/,
  );
  await expect(ownerPage.getByText(/^por volta das \d{2}:\d{2}, faltam \d+(,\d)? km$/)).toBeVisible();

  // The next position is accepted 10 s after the first: the marker follows it.
  await page.waitForTimeout(Math.max(0, Date.parse(first.updated_at) + 10_200 - Date.now()));
  await putLocation(page, token, { lat: -23.5790, lng: -46.6400 });
  await expect(seen).not.toHaveText(firstSeen!);
  await expect(map.getByTitle("Seu entregador")).toHaveCount(1);
  await shot(page, "tracking-on-the-way");

  // At the door.
  await asDriver(page, token, `/api/v1/deliveries/${deliveryId}/complete`);
  await expect(summary).toHaveText("Sua entrega chegou.");
  await expect(page.getByText("Entregue", { exact: true }).first()).toBeVisible();
  await expect(page.getByRole("img", { name: "Posição do entregador" })).toHaveCount(0);
  await expect(page.getByRole("status", { name: "Chegada" })).toHaveCount(0);
  await expect(page.getByRole("listitem").filter({ hasText: "Retirada feita" })).toHaveCount(1);

  // A link that is not one.
  await page.goto(`${url.slice(0, -1)}${url.endsWith("A") ? "B" : "A"}`);
  await expect(page.getByRole("alert")).toHaveText(
    "Este link de acompanhamento não é válido. Confira se você copiou o link inteiro.",
  );

  await owner.close();
  await recipient.close();
});

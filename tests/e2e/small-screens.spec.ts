// Small screens: every page of the company panel is usable 320 px wide (the navigation behind a menu button,
// tables as cards, nothing wider than the window) and the driver app 390 px wide. Screenshots of each page go
// to tests/e2e/screenshots/ (320-*, 1280-*, 390-*).
import {
  accessToken,
  expect,
  expectLabelled,
  expectNoSidewaysScroll,
  newContext,
  shot,
  signIn,
  test,
} from "./support.ts";

const PANEL: [link: string, heading: string][] = [
  ["Entregas", "Entregas"],
  ["Nova entrega", "Nova entrega"],
  ["Entregadores", "Entregadores"],
  ["Mapa ao vivo", "Mapa ao vivo dos entregadores"],
  ["Despacho", "Quadro de despacho"],
  ["Rotas", "Rotas"],
  ["Preços", "Preços"],
  ["Saques", "Saques"],
  ["Caixa", "Caixa do dia"],
  ["Registro de webhooks", "Registro de webhooks"],
  ["Relatórios", "Relatórios"],
  ["Notificações", "Notificações para quem recebe"],
  ["Regras de despacho", "Regras de despacho"],
  ["Gateway de pagamento", "Gateway de pagamento"],
  ["Assinatura", "Assinatura"],
  ["Simuladores", "Simuladores (só no ambiente local)"],
];
const slug = (text: string) => text.normalize("NFD").replace(/[^\w]+/g, "-").toLowerCase();

test("every panel page fits 320 px without sideways scrolling, through a menu button; the driver app fits 390 px", async ({ browser }) => {
  const context = await newContext(browser, { viewport: { width: 320, height: 640 } });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Entrar" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, "320-signin");
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();

  // A delivery of its own, so its page and the recipient's page are measured too.
  const headers = { authorization: `Bearer ${await accessToken(page)}` };
  const created = await page.request.post("/api/v1/deliveries", {
    headers,
    data: {
      origin: { lat: -23.5503, lng: -46.6339 },
      destination: { lat: -23.5614, lng: -46.6559 },
      origin_address: "Praça da Sé, 1 - Sé, São Paulo - SP",
      destination_address: "Avenida Paulista, 1578 - Bela Vista, São Paulo - SP",
      payment_method: "invoice",
      recipient_name: "Rita Recebedora",
      recipient_phone: "+5511988887777",
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const delivery = await created.json();

  const menu = page.getByRole("button", { name: "Menu" });
  const nav = page.getByRole("navigation", { name: "Principal" });
  await expect(nav).toBeHidden();
  for (const [link, heading] of PANEL) {
    await menu.click();
    await expect(menu).toHaveAttribute("aria-expanded", "true");
    await nav.getByRole("link", { name: link, exact: true }).click();
    await expect(page.getByRole("heading", { name: heading, exact: true })).toBeVisible();
    await expect(nav).toBeHidden();
    await expect(page.getByText("Carregando…")).toHaveCount(0);
    await expectLabelled(page);
    await expectNoSidewaysScroll(page);
    await shot(page, `320-${slug(link)}`);
  }
  await page.goto(`/deliveries/${delivery.id}`);
  await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  await expect(page.getByRole("img", { name: "Mapa do trajeto" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, "320-delivery");
  await page.goto(delivery.tracking_url);
  await expect(page.getByRole("heading", { name: "Sua entrega" })).toBeVisible();
  await expectNoSidewaysScroll(page);

  // The same panel on a desktop screen: the navigation always there, tables as tables.
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto("/deliveries");
  await expect(page.getByRole("navigation", { name: "Principal" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Menu" })).toBeHidden();
  await expect(page.getByRole("columnheader", { name: "Trajeto" })).toBeVisible();
  await shot(page, "1280-deliveries");
  await page.goto(`/deliveries/${delivery.id}`);
  await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  await shot(page, "1280-delivery");

  // The driver app on a phone.
  const phone = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const driver = await phone.newPage();
  await signIn(driver, "driver2@demo.test", "demo-driver-pass");
  await expect(driver.getByRole("heading", { name: "Entregas disponíveis" })).toBeVisible();
  await expect(driver.getByText("Carregando…")).toHaveCount(0);
  await expectNoSidewaysScroll(driver);
  await shot(driver, "390-driver-home");
  await driver.getByRole("link", { name: "Carteira" }).click();
  await expect(driver.getByRole("heading", { name: "Carteira" })).toBeVisible();
  await expect(driver.getByText("Carregando…")).toHaveCount(0);
  await expectNoSidewaysScroll(driver);
  await shot(driver, "390-driver-wallet");

  const cancel = await page.request.post(`/api/v1/deliveries/${delivery.id}/cancel`, { headers, data: {} });
  expect(cancel.status(), await cancel.text()).toBe(200);
  await phone.close();
  await context.close();
});

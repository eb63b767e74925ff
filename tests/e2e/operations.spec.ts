// The rest of the operation in the browser (issue 33, DESIGN.md §11.2): the dispatcher changes a delivery's recipient
// and window; calls back a delivery in progress and the driver returns it from the app; a 1,200-row file imported
// with its progress bar; a driver's day page. On a company of its own with its own driver (Olga), so that nothing
// here changes what the seed's company and drivers show other specs.
import { randomUUID } from "node:crypto";
import { request } from "@playwright/test";
import { largeFile } from "../support/import-files.ts";
import { Api, baseURL, expect, newContext, saoPauloDateTime, signIn, test } from "./support.ts";

const tag = randomUUID().slice(0, 8);
const OWNER = { email: `ops-owner-${tag}@example.com`, password: "ops-owner-pass-123" };
const OLGA = { name: "Olga Operações", email: `olga-${tag}@example.com`, password: "olga-pass-123" };
let owner: Api;
let olga: string;

test.beforeAll(async () => {
  const http = await request.newContext({ baseURL: baseURL() });
  const registered = await http.post("/api/v1/companies/register", {
    data: { company_name: `Operações ${tag}`, owner_name: "Otávia", ...OWNER },
  });
  expect(registered.status(), await registered.text()).toBe(201);
  await http.dispose();
  owner = await Api.signIn(OWNER.email, OWNER.password);
  olga = (await owner.call<{ id: string }>("POST", "/api/v1/drivers", OLGA)).id;
});

test.afterAll(async () => {
  await owner?.dispose();
});

const delivery = (destination: string, extra: Record<string, unknown> = {}) =>
  owner.call<{ id: string }>("POST", "/api/v1/deliveries", {
    origin_address: "Praça da Sé, São Paulo",
    origin: { lat: -23.5503, lng: -46.6339 },
    destination_address: destination,
    destination: { lat: -23.5469, lng: -46.6362 },
    payment_method: "invoice",
    recipient_name: "Rita Antiga",
    ...extra,
  });

test("the dispatcher changes a delivery's recipient and window", async ({ browser }) => {
  const { id } = await delivery("Rua Direita, 10");
  const page = await (await newContext(browser)).newPage();
  await signIn(page, OWNER.email, OWNER.password);
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  await page.goto(`/deliveries/${id}`);
  await page.getByText("Alterar destinatário ou janela").click();
  await page.getByLabel("Nome do destinatário").fill("Rita Nova");
  await page.getByLabel("Telefone do destinatário").fill("+55 11 97777-6666");
  const start = new Date(Date.now() + 2 * 3_600_000);
  start.setUTCMinutes(0, 0, 0);
  const end = new Date(start.getTime() + 3 * 3_600_000);
  await page.getByLabel("Início da janela").fill(saoPauloDateTime(start.toISOString()));
  await page.getByLabel("Fim da janela").fill(saoPauloDateTime(end.toISOString()));
  await page.getByRole("button", { name: "Salvar alterações" }).click();
  await expect(page.getByText("Alterações salvas; o entregador foi avisado.")).toBeVisible();
  await expect(page.getByText(/Rita Nova/).first()).toBeVisible();

  const saved = await owner.call<Record<string, string>>("GET", `/api/v1/deliveries/${id}`);
  expect(saved.recipient_name).toBe("Rita Nova");
  expect(saved.recipient_phone).toBe("+5511977776666");
  expect(Date.parse(saved.window_start)).toBe(start.getTime());
  expect(Date.parse(saved.window_end)).toBe(end.getTime());
});

test("the company calls back a delivery in progress and the driver returns it; her day shows it", async ({ browser }) => {
  const { id } = await delivery("Rua Boa Vista, 200", { driver_id: olga });
  const driverPage = await (await newContext(browser, { viewport: { width: 390, height: 844 } })).newPage();
  await signIn(driverPage, OLGA.email, OLGA.password);
  const card = driverPage.getByRole("listitem").filter({ hasText: "Rua Boa Vista, 200" });
  await card.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(card.getByRole("button", { name: "Concluir entrega" })).toBeVisible();

  const page = await (await newContext(browser)).newPage();
  await signIn(page, OWNER.email, OWNER.password);
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  await page.goto(`/deliveries/${id}`);
  await page.getByLabel("Por que ela volta").fill("Cliente desistiu");
  await page.getByRole("button", { name: "Chamar a entrega de volta" }).click();
  await expect(page.getByText(/Chamada de volta \(Cliente desistiu\)/)).toBeVisible();

  await expect(card.getByText(/A empresa chamou esta entrega de volta \(Cliente desistiu\)/)).toBeVisible({
    timeout: 15_000,
  });
  await card.getByRole("button", { name: "Devolvida ao remetente" }).click();
  await expect(card).toHaveCount(0, { timeout: 15_000 });
  await expect.poll(async () => (await owner.call<{ status: string }>("GET", `/api/v1/deliveries/${id}`)).status)
    .toBe("returned");

  // Her day in the panel: the returned delivery, on the map and in the list, with its time.
  await page.goto("/drivers");
  await page.getByRole("link", { name: `Dia: ${OLGA.name}` }).click();
  await expect(page.getByRole("heading", { name: `Dia de ${OLGA.name}` })).toBeVisible();
  const figures = page.locator("dl.driver-day-figures");
  await expect(figures.getByText("Devolvidas")).toBeVisible();
  await expect(figures.locator("dt:has-text('Devolvidas') + dd")).toHaveText("1");
  await expect(page.getByRole("img", { name: "As paradas do dia no mapa" })).toBeVisible();
  const stop = page.locator("ol.driver-day-stops li").filter({ hasText: "Rua Boa Vista, 200" });
  await expect(stop).toContainText("Devolvida");
  await expect(stop).toContainText(/Horário: \d{2}:\d{2}/);
});

test("a 1,200-row file is imported as a job, with its progress bar", async ({ browser }) => {
  // 1,200 rows located, measured and created in batches: minutes on a busy machine.
  test.setTimeout(480_000);
  const page = await (await newContext(browser)).newPage();
  await signIn(page, OWNER.email, OWNER.password);
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const importer = page.locator("details.csv-import");
  await importer.locator("summary").click();
  await page.getByLabel("Arquivo CSV").setInputFiles({
    name: "entregas.csv",
    mimeType: "text/csv",
    buffer: Buffer.from(largeFile(`E2E${tag}`, 1200)),
  });
  await importer.locator('button[type="submit"]').click();
  const bar = page.getByRole("progressbar");
  await expect(bar).toBeVisible();
  await expect(page.getByText(/Importando \d+ de 1200 linhas…/)).toBeVisible();
  await expect(page.getByText("Criadas: 1200. Já existiam (puladas): 0. Com erro: 0.")).toBeVisible({
    timeout: 420_000,
  });
  await expect(bar).toHaveCount(0);
});

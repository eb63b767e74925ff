// A dispatcher's day beyond success and cancellation (issue 25): finding a delivery by the recipient's name
// typed without accents, a late delivery standing out, reopening one a driver could not deliver (its reason, note
// and photo shown; after a confirmation), the Reports page with its charts (a period typed dd/mm/aaaa), the list
// exported as CSV and the template imported with a bad row. The deliveries are arranged through the API as the
// company's systems and the driver app would send them.
import type { APIRequestContext, Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { accessToken, expect, newContext, PHOTO, saoPauloDateTime, shot, signIn, test } from "./support.ts";

const DORA = "e0000000-0000-4000-8000-000000000004";

async function post(request: APIRequestContext, token: string, path: string, data?: unknown) {
  const res = await request.post(path, { headers: { authorization: `Bearer ${token}` }, data });
  expect(res.status(), await res.text()).toBeLessThan(300);
  return await res.json();
}

async function driverToken(page: Page) {
  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );
  const res = await page.request.post("/auth/v1/token?grant_type=password", {
    headers: { apikey: anonKey },
    data: { email: "driver1@demo.test", password: "demo-driver-pass" },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token as string;
}

const invoice = (recipient: string, extra: Record<string, unknown> = {}) => ({
  origin_address: "Praça da Sé, São Paulo",
  origin: { lat: -23.5503, lng: -46.6339 },
  destination_address: "Rua Conselheiro Crispiniano, 40",
  destination: { lat: -23.5447, lng: -46.6383 },
  payment_method: "invoice",
  recipient_name: recipient,
  ...extra,
});

test("a dispatcher finds, sees late, reopens, reads the reports and exports CSV", async ({ browser }) => {
  const context = await newContext(browser, { acceptDownloads: true });
  const page = await context.newPage();
  // The scripts the page loads: the Reports page and its chart library come only when it is opened.
  const scripts: string[] = [];
  page.on("response", (res) => res.url().endsWith(".js") && scripts.push(new URL(res.url()).pathname));
  await signIn(page, "admin@demo.test", "demo-admin-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const admin = await accessToken(page);
  const driver = await driverToken(page);
  // The company requires no proof here (whatever an earlier spec left); this journey fails a delivery anyway.
  const tag = Date.now().toString(36);

  // A delivery for Conceição Araújo; one whose window closes in a few seconds; one Dora cannot deliver.
  const found = await post(page.request, admin, "/api/v1/deliveries", invoice(`Conceição Araújo ${tag}`));
  const late = await post(
    page.request,
    admin,
    "/api/v1/deliveries",
    invoice(`Cliente Atrasado ${tag}`, { window_end: new Date(Date.now() + 4_000).toISOString() }),
  );
  const failed = await post(
    page.request,
    admin,
    "/api/v1/deliveries",
    invoice(`Porta Fechada ${tag}`, { driver_id: DORA }),
  );
  await post(page.request, driver, `/api/v1/deliveries/${failed.id}/start`);
  // The photo of the closed door, as the driver app uploads it before reporting: the first attempt's.
  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );
  const photoUpload = await page.request.post(
    `/storage/v1/object/delivery-proofs/${failed.company_id}/${failed.id}/failed-1.png`,
    { headers: { authorization: `Bearer ${driver}`, apikey: anonKey, "content-type": "image/png" }, data: PHOTO },
  );
  expect(photoUpload.status(), await photoUpload.text()).toBe(200);
  await post(page.request, driver, `/api/v1/deliveries/${failed.id}/fail`, {
    reason: "recipient_absent",
    note: "Ninguém atendeu o interfone",
  });

  // Found by the name typed without accents, in lower case; the search stays in the address.
  await page.getByRole("searchbox", { name: "Buscar" }).fill(`conceicao araujo ${tag}`);
  await page.getByRole("button", { name: "Buscar", exact: true }).click();
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows.filter({ hasText: `Conceição Araújo ${tag}` })).toHaveCount(1);
  await expect(rows).toHaveCount(2); // the header and the one delivery found
  expect(new URL(page.url()).searchParams.get("q")).toBe(`conceicao araujo ${tag}`);
  await page.reload();
  await expect(page.getByRole("searchbox", { name: "Buscar" })).toHaveValue(`conceicao araujo ${tag}`);
  await expect(rows.filter({ hasText: `Conceição Araújo ${tag}` })).toHaveCount(1);
  await shot(page, "lifecycle-1-search");
  expect(found.id).toBeTruthy();

  // The late one stands out: its row says so and is marked.
  await page.waitForTimeout(Math.max(0, Date.parse(late.window_end) - Date.now()) + 500);
  await page.getByRole("button", { name: "Limpar filtros" }).click();
  await page.getByRole("checkbox", { name: "Só as atrasadas" }).check();
  const lateRow = rows.filter({ hasText: `Cliente Atrasado ${tag}` });
  await expect(lateRow).toContainText("Atrasada");
  await expect(lateRow).toHaveClass(/late/);
  await expect(rows.filter({ hasText: `Conceição Araújo ${tag}` })).toHaveCount(0);
  await shot(page, "lifecycle-2-late");

  // Days typed dd/mm/aaaa, whatever the browser's own date format: kept in the address as the API's YYYY-MM-DD.
  const today = saoPauloDateTime(new Date().toISOString()).slice(0, 10);
  const todayIso = today.split("/").reverse().join("-");
  const createdFrom = page.getByLabel("Criadas de");
  await expect(createdFrom).toHaveAttribute("placeholder", "dd/mm/aaaa");
  await createdFrom.pressSequentially(today.replace(/\D/g, ""));
  await expect(createdFrom).toHaveValue(today);
  await expect(page).toHaveURL(new RegExp(`[?&]from=${todayIso}(&|$)`));
  await expect(lateRow).toHaveCount(1);
  await page.reload();
  await expect(createdFrom).toHaveValue(today);
  // A day being corrected leaves the filter as it was, with a sentence under the field; emptied, the filter goes.
  await createdFrom.press("End");
  await createdFrom.press("Backspace");
  await createdFrom.blur();
  await expect(page.getByText("Digite uma data que exista, como 31/12/2026.")).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`[?&]from=${todayIso}(&|$)`));
  await createdFrom.fill("");
  await expect(page).not.toHaveURL(/[?&]from=/);

  // The failed one: its page shows why, and Reopen asks first.
  await page.getByRole("checkbox", { name: "Só as atrasadas" }).uncheck();
  await page.getByLabel("Situação", { exact: true }).selectOption("failed");
  await rows.filter({ hasText: `Porta Fechada ${tag}` }).getByRole("link").click();
  await expect(page.getByText("Não entregue", { exact: true }).first()).toBeVisible();
  await expect(page.getByText(/Destinatário ausente em \d\d\/\d\d\/\d{4} \d\d:\d\d/)).toBeVisible();
  await expect(page.getByText("Observação do entregador: Ninguém atendeu o interfone")).toBeVisible();
  // With the photo the driver took, read through a signed URL.
  const photo = page.getByRole("img", { name: "Foto da tentativa" });
  await expect(photo).toBeVisible();
  await expect.poll(() => photo.evaluate((i: HTMLImageElement) => i.complete ? i.naturalWidth : 0)).toBe(2);
  await page.getByRole("button", { name: "Tentar de novo" }).click();
  await page.getByRole("button", { name: "Não", exact: true }).click();
  await expect(page.getByText("Não entregue", { exact: true }).first()).toBeVisible();
  await page.getByRole("button", { name: "Tentar de novo" }).click();
  await expect(page.getByText(/Abrir uma nova tentativa desta entrega\?/)).toBeVisible();
  await page.getByRole("button", { name: "Sim, tentar de novo" }).click();
  await expect(page.getByText("Aguardando entregador", { exact: true }).first()).toBeVisible();
  await expect(page.getByText("Tentativa 2")).toBeVisible();
  // The last failure stays readable on the new attempt: why, the note and the photo.
  await expect(page.getByText(/Destinatário ausente em \d\d\/\d\d\/\d{4} \d\d:\d\d/)).toBeVisible();
  await expect(photo).toBeVisible();
  await shot(page, "lifecycle-3-reopened");

  // Reports: the figures and both charts for the chosen period, in Brazilian formats.
  expect(scripts.filter((path) => /\/Reports-[\w-]+\.js$/.test(path))).toEqual([]);
  await page.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: "Relatórios" }).click();
  await expect(page.getByRole("heading", { name: "Relatórios" })).toBeVisible();
  await expect(page.getByRole("img", { name: "Entregas por dia" })).toBeVisible();
  expect(scripts.filter((path) => /\/Reports-[\w-]+\.js$/.test(path))).toHaveLength(1);
  await expect(page.getByRole("img", { name: "Receita por dia" })).toBeVisible();
  await expect(page.locator("dl.figures")).toContainText("Receita");
  await expect(page.locator("dl.figures")).toContainText(/R\$\s[\d.]+,\d\d/);
  await expect(page.getByRole("table", { name: "Entregas e receita por dia" }).getByRole("row").nth(1))
    .toContainText(/\d\d\/\d\d\/\d{4}/);
  // A period of one day, typed dd/mm/aaaa.
  await page.getByLabel("Criadas de").fill("");
  await page.getByLabel("Criadas de").pressSequentially(today.replace(/\D/g, ""));
  await page.getByRole("button", { name: "Mostrar" }).click();
  await expect(page).toHaveURL(new RegExp(`from=${todayIso}&to=${todayIso}$`));
  const days = page.getByRole("table", { name: "Entregas e receita por dia" }).getByRole("row");
  await expect(days).toHaveCount(2);
  await expect(days.nth(1).getByRole("rowheader")).toHaveText(today);
  await shot(page, "lifecycle-4-reports");

  // The list as CSV: the file holds the deliveries the list shows.
  await page.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: "Entregas" }).click();
  await page.getByRole("searchbox", { name: "Buscar" }).fill(tag);
  await page.getByRole("button", { name: "Buscar", exact: true }).click();
  await expect(rows).toHaveCount(4);
  const downloading = page.waitForEvent("download");
  await page.getByRole("button", { name: "Exportar CSV" }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toMatch(/^deliveries-\d{4}-\d\d-\d\d\.csv$/);
  const csv = readFileSync((await download.path())!, "utf8");
  const lines = csv.trimEnd().split("\n");
  expect(lines[0]).toContain("origin.lat");
  expect(lines).toHaveLength(4);
  for (const name of ["Conceição Araújo", "Cliente Atrasado", "Porta Fechada"]) expect(csv).toContain(`${name} ${tag}`);

  // The template, filled in and uploaded: the good row is created, the bad one said by its row and its cell in
  // words; the same file again creates nothing.
  await page.locator("summary", { hasText: "Importar CSV" }).click();
  const templating = page.waitForEvent("download");
  await page.getByRole("button", { name: "Baixar modelo" }).click();
  const template = readFileSync((await (await templating).path())!, "utf8").split("\r\n");
  expect(template[0]).toMatch(/^external_id,origin_address,origin\.lat,origin\.lng,destination_address,/);
  const columns = template[0].split(",");
  const row = (cells: Record<string, string>) => columns.map((c) => cells[c] ?? "").join(",");
  const file = [
    template[0],
    row({
      external_id: `IMP-${tag}`,
      origin_address: "Praça da Sé",
      "origin.lat": "-23.5503",
      "origin.lng": "-46.6339",
      destination_address: "Rua Augusta",
      "destination.lat": "-23.5562",
      "destination.lng": "-46.6576",
      recipient_name: `Importada ${tag}`,
    }),
    row({ external_id: `IMP-${tag}-2`, origin_address: "A", destination_address: "B", "destination.lat": "abc" }),
  ].join("\r\n");
  const upload = async () => {
    await page.getByLabel("Arquivo CSV").setInputFiles({
      name: "entregas.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(file),
    });
    await page.getByRole("button", { name: "Importar CSV", exact: true }).click();
  };
  await upload();
  const report = page.getByRole("status").filter({ hasText: "Criadas:" });
  await expect(report).toContainText("Criadas: 1. Já existiam (puladas): 0. Com erro: 1.");
  await expect(report.getByRole("listitem")).toHaveText(
    "Linha 3: Latitude da entrega: tem o tipo errado (um número, um texto, uma data?); " +
      "Longitude da entrega: está faltando",
  );
  await expect(rows.filter({ hasText: `Importada ${tag}` })).toHaveCount(1);
  await shot(page, "lifecycle-5-import");
  await upload();
  await expect(report).toContainText("Criadas: 0. Já existiam (puladas): 1. Com erro: 1.");
  // A file the import cannot read as a whole is said in words, naming what to fix.
  await page.getByLabel("Arquivo CSV").setInputFiles({
    name: "planilha.csv",
    mimeType: "text/csv",
    buffer: Buffer.from("origin_address;destination_address;cor\r\nA;B;azul\r\n"),
  });
  await page.getByRole("button", { name: "Importar CSV", exact: true }).click();
  await expect(page.getByRole("alert")).toHaveText(
    "O arquivo tem colunas que não conhecemos: cor. Use as colunas do modelo.",
  );
  await rows.filter({ hasText: `Importada ${tag}` }).getByRole("link").click();
  await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  await post(page.request, admin, `/api/v1/deliveries/${page.url().split("/").pop()}/cancel`, {});
  await context.close();
});

// Money at the door in the browser (issue 34): the driver sees what to collect and the change to bring
// ("cobrar R$ 57,50, levar troco para R$ 100,00 (R$ 42,50)"), completes with the amount received, and the owner's
// end-of-day cash page shows what Cida owes and records the cash she hands in. Cida is this spec's own driver: a
// credit in the seed's drivers' wallets would change what journeys.spec.ts counts.
import { randomUUID } from "node:crypto";
import { accessToken, expect, expectNoSidewaysScroll, newContext, signIn, test } from "./support.ts";

const DUDA = {
  name: "Duda Dinheiro",
  email: `duda-${randomUUID().slice(0, 8)}@example.com`,
  password: "duda-pass-123",
};
const CIDA = { name: "Cida Caixa", email: `cida-${randomUUID().slice(0, 8)}@example.com`, password: "cida-pass-123" };

test("the driver collects cash with change; the owner settles the day's cash", async ({ browser }) => {
  const owner = await newContext(browser);
  const driver = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  const driverPage = await driver.newPage();

  await signIn(ownerPage, "owner@demo.test", "demo-owner-pass");
  await expect(ownerPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const token = await accessToken(ownerPage);
  // Whatever an earlier spec left: no proof and no handover code required here.
  const requirements = await ownerPage.request.put("/api/v1/companies/me/proof-requirements", {
    headers: { authorization: `Bearer ${token}` },
    data: { photo: false, signature: false, note: false, handover_code: false },
  });
  expect(requirements.status()).toBe(200);
  const hired = await ownerPage.request.post("/api/v1/drivers", {
    headers: { authorization: `Bearer ${token}` },
    data: CIDA,
  });
  expect(hired.status(), await hired.text()).toBe(201);
  const cida = (await hired.json()).id as string;
  const created = await ownerPage.request.post("/api/v1/deliveries", {
    headers: { authorization: `Bearer ${token}` },
    data: {
      origin_address: "Praça da Sé, São Paulo",
      origin: { lat: -23.5503, lng: -46.6339 },
      destination_address: "Rua Líbero Badaró, 425",
      destination: { lat: -23.5469, lng: -46.6362 },
      payment_method: "invoice",
      driver_id: cida,
      collect: { amount: 57.5, method: "cash", change_for: 100 },
    },
  });
  expect(created.status(), await created.text()).toBe(201);

  await signIn(driverPage, CIDA.email, CIDA.password);
  const card = driverPage.getByRole("listitem").filter({ hasText: "Rua Líbero Badaró, 425" });
  await expect(card.getByText(/^cobrar R\$\s57,50, levar troco para R\$\s100,00 \(R\$\s42,50\)$/)).toBeVisible();
  await card.getByRole("button", { name: "Iniciar entrega" }).click();
  const received = card.getByLabel("Valor recebido");
  await expect(received).toHaveValue("57,50");
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(driverPage.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();

  await ownerPage.getByRole("link", { name: "Caixa", exact: true }).click();
  await expect(ownerPage.getByRole("heading", { name: "Caixa do dia" })).toBeVisible();
  const row = ownerPage.getByRole("row").filter({ has: ownerPage.getByRole("rowheader", { name: CIDA.name }) });
  await expect(row.getByRole("cell").nth(0)).toHaveText(/57,50/);
  const settle = row.getByRole("form", { name: `Receber dinheiro de ${CIDA.name}` });
  await expect(settle.getByLabel("Valor recebido")).not.toHaveValue("");
  await settle.getByRole("button", { name: "Receber" }).click();
  await expect(row.getByRole("cell").nth(3)).toHaveText(/0,00/);
});

test("on phones: the driver sees what to collect before accepting; the owner takes part of the cash, then the rest, and downloads the day as CSV", async ({ browser }) => {
  const phone = { viewport: { width: 390, height: 844 } };
  const ownerPage = await (await newContext(browser, phone)).newPage();
  const driverPage = await (await newContext(browser, phone)).newPage();
  await signIn(ownerPage, "owner@demo.test", "demo-owner-pass");
  await expect(ownerPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const headers = { authorization: `Bearer ${await accessToken(ownerPage)}` };
  const dispatch = await ownerPage.request.get("/api/v1/dispatch/settings", { headers });
  expect((await dispatch.json()).mode, "an earlier spec left another dispatch mode").toBe("broadcast");
  const hired = await ownerPage.request.post("/api/v1/drivers", { headers, data: DUDA });
  expect(hired.status(), await hired.text()).toBe(201);
  // Offered to every driver (no driver_id): Duda reads what it collects before accepting.
  const created = await ownerPage.request.post("/api/v1/deliveries", {
    headers,
    data: {
      origin_address: "Praça da Sé, São Paulo",
      origin: { lat: -23.5503, lng: -46.6339 },
      destination_address: "Rua Boa Vista, 280",
      destination: { lat: -23.5455, lng: -46.6339 },
      payment_method: "invoice",
      collect: { amount: 57.5, method: "cash", change_for: 100 },
    },
  });
  expect(created.status(), await created.text()).toBe(201);

  await signIn(driverPage, DUDA.email, DUDA.password);
  const offer = driverPage.getByRole("listitem").filter({ hasText: "Rua Boa Vista, 280" });
  await expect(offer.getByText(/^cobrar R\$\s57,50, levar troco para R\$\s100,00 \(R\$\s42,50\)$/)).toBeVisible();
  await expectNoSidewaysScroll(driverPage);
  await offer.getByRole("button", { name: "Aceitar" }).click();
  await expect(driverPage.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
  const card = driverPage.getByRole("listitem").filter({ hasText: "Rua Boa Vista, 280" });
  await expect(card.getByText(/^cobrar R\$\s57,50, levar troco para R\$\s100,00/)).toBeVisible();
  await card.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(card.getByLabel("Valor recebido")).toHaveValue("57,50");
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(driverPage.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();

  await ownerPage.getByRole("button", { name: "Menu" }).click();
  await ownerPage.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: "Caixa", exact: true })
    .click();
  await expect(ownerPage.getByRole("heading", { name: "Caixa do dia" })).toBeVisible();
  await expectNoSidewaysScroll(ownerPage);
  const row = ownerPage.getByRole("row").filter({ has: ownerPage.getByRole("rowheader", { name: DUDA.name }) });
  const settle = row.getByRole("form", { name: `Receber dinheiro de ${DUDA.name}` });
  const amount = settle.getByLabel("Valor recebido");
  await expect(amount).toHaveValue("57,50");
  // Part of it now: what is still owed, and the form, show the rest.
  await amount.fill("20,00");
  await settle.getByRole("button", { name: "Receber" }).click();
  await expect(settle.getByText(/R\$\s20,00 recebido/)).toBeVisible();
  await expect(row.getByRole("cell").nth(3)).toHaveText(/37,50/);
  await expect(amount).toHaveValue("37,50");

  // The day as CSV, from the same page: Duda's line as the API writes it.
  const downloading = ownerPage.waitForEvent("download");
  await ownerPage.getByRole("button", { name: "Exportar CSV" }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toMatch(/^cash-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = await (await import("node:fs/promises")).readFile(await download.path(), "utf8");
  expect(csv.split("\n")[0]).toBe("driver_id,name,collected,card_collected,settled,outstanding,deliveries,mismatches");
  expect(csv).toContain(`${(await hired.json()).id},${DUDA.name},57.5,0,20,37.5,1,0`);

  await settle.getByRole("button", { name: "Receber" }).click();
  await expect(row.getByRole("cell").nth(3)).toHaveText(/0,00/);
});

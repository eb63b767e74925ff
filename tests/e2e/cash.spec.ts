// Money at the door in the browser (issue 34): the driver sees what to collect and the change to bring
// ("cobrar R$ 57,50, levar troco para R$ 100,00 (R$ 42,50)"), completes with the amount received, and the owner's
// end-of-day cash page shows what Cida owes and records the cash she hands in. Cida is this spec's own driver: a
// credit in the seed's drivers' wallets would change what journeys.spec.ts counts.
import { randomUUID } from "node:crypto";
import { accessToken, expect, newContext, signIn, test } from "./support.ts";

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

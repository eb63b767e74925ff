// What the recipient was promised (issue 35, DESIGN.md §11.5), on a 390x844 phone. The driver's phone checks the
// proof the company requires before a completion is queued, with a connection and without, and keeps the photo and
// the signature taken across a reload; the recipient's page pins the drop-off, names the driver and the vehicle,
// shows the handover code, counts the ETA down between refreshes, and shows the proof photo once delivered. Rita is
// this spec's own driver: the seed's drivers' wallets are counted by journeys.spec.ts.
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { Api, drawSignature, expect, newContext, PHOTO, shot, signIn, test } from "./support.ts";

const RITA = { name: "Rita Rocha", email: `rita-${randomUUID().slice(0, 8)}@example.com`, password: "rita-pass-123" };
const PHONE = { width: 390, height: 844 };
const MISSING_SIGNATURE = "Falta a prova de entrega que a empresa exige: assinatura.";

let owner: Api;
let rita: Api;
let ritaId: string;

test.beforeAll(async () => {
  owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  const hired = await owner.call<{ id: string }>("POST", "/api/v1/drivers", {
    ...RITA,
    vehicle: { type: "moto", plate: "RIT4A26" },
  });
  ritaId = hired.id;
  rita = await Api.signIn(RITA.email, RITA.password);
});

test.afterAll(async () => {
  // Back to requiring nothing, for the journeys that follow.
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", {
    photo: false,
    signature: false,
    note: false,
    handover_code: false,
  });
  await owner.dispose();
  await rita.dispose();
});

async function deliveryFor(destination: string) {
  const created = await owner.call<{ id: string }>("POST", "/api/v1/deliveries", {
    origin_address: "Praça da Sé, São Paulo",
    origin: { lat: -23.5503, lng: -46.6339 },
    destination_address: destination,
    destination: { lat: -23.5614, lng: -46.6559 },
    payment_method: "invoice",
    driver_id: ritaId,
  });
  return created.id;
}

/** The proof drafts the phone keeps (lib/device.ts, store `drafts`). */
const keptDrafts = (page: Page) =>
  page.evaluate(() =>
    new Promise<number>((done, fail) => {
      const open = indexedDB.open("delivery-app");
      open.onerror = () => fail(open.error);
      open.onsuccess = () => {
        const count = open.result.transaction("drafts").objectStore("drafts").count();
        count.onsuccess = () => done(count.result);
      };
    })
  );

test("the phone stops a completion without the required signature, offline too; the photo and signature survive a reload", async ({ browser }) => {
  test.setTimeout(180_000); // two reloads and a queued completion, on a busy machine
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", {
    photo: true,
    signature: true,
    note: false,
    handover_code: false,
  });
  const address = "Rua Augusta, 1500";
  const id = await deliveryFor(address);
  const context = await newContext(browser, { viewport: PHONE });
  const page = await context.newPage();
  await signIn(page, RITA.email, RITA.password);
  const card = page.getByRole("listitem").filter({ hasText: address });
  await card.getByRole("button", { name: "Iniciar entrega" }).click();
  const proof = card.getByRole("group", { name: "Prova de entrega" });
  await expect(proof.getByText("Assinatura de quem recebe (obrigatório)")).toBeVisible();
  await proof.getByLabel("Foto da entrega").setInputFiles({ name: "door.png", mimeType: "image/png", buffer: PHOTO });
  await expect(proof.getByRole("img", { name: "A foto tirada" })).toBeVisible();

  // Online: stopped on the phone, before anything is sent (nothing queued, the photo not uploaded).
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card.getByRole("alert")).toHaveText(MISSING_SIGNATURE);
  await expect(card.getByText(/^Aguardando conexão|^Enviando/)).toHaveCount(0);
  expect((await owner.call<{ status: string }>("GET", `/api/v1/deliveries/${id}`)).status).toBe("in_progress");

  // A reload keeps the photo taken (kept on the device once the card has saved it, 200 ms after the last change).
  await expect.poll(() => keptDrafts(page)).toBe(1);
  await page.reload();
  await expect(proof.getByRole("img", { name: "A foto tirada" })).toBeVisible();
  await expect.poll(() =>
    proof.getByRole("img", { name: "A foto tirada" }).evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)
  ).toBe(2);

  // Offline: stopped the same way, with the requirements last read.
  await context.setOffline(true);
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card.getByRole("alert")).toHaveText(MISSING_SIGNATURE);
  await expect(card.getByText(/^Aguardando conexão/)).toHaveCount(0);

  // The recipient signs, with no connection; the signature too survives a reload.
  await drawSignature(page, proof.getByRole("img", { name: "Assinatura de quem recebe" }));
  await expect(proof.getByText("Assinado.")).toBeVisible();
  await expect(card.getByRole("alert")).toHaveCount(0);
  await context.setOffline(false);
  await page.waitForTimeout(400); // the draft is saved 200 ms after the last stroke
  await page.reload();
  await expect(proof.getByText("Assinado.")).toBeVisible();
  await expect(proof.getByRole("img", { name: "A foto tirada" })).toBeVisible();
  const pad = proof.getByRole("img", { name: "Assinatura de quem recebe" });
  // The kept drawing is back on the pad: some of its pixels are ink.
  await expect.poll(() =>
    pad.evaluate((c: HTMLCanvasElement) =>
      c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0)
    )
  ).toBe(true);
  expect(await keptDrafts(page)).toBe(1);

  // Offline again, complete: queued (the proof is all there), the kept draft handed to the queue.
  await context.setOffline(true);
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card.getByText(/^Aguardando conexão: /)).toBeVisible();
  expect(await keptDrafts(page)).toBe(0);
  await context.setOffline(false);
  await expect(page.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible({ timeout: 20_000 });
  const done = await owner.call<{ status: string; proof: { photo_path: string; signature_path: string } }>(
    "GET",
    `/api/v1/deliveries/${id}`,
  );
  expect(done.status).toBe("completed");
  expect(done.proof.photo_path).toMatch(/\/photo\.png$/);
  expect(done.proof.signature_path).toMatch(/\/signature\.png$/);
  await context.close();
});

test("the recipient's page: the drop-off pin, the driver and vehicle, the code, a countdown, then the proof photo", async ({ browser }) => {
  test.setTimeout(180_000);
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", {
    photo: true,
    signature: false,
    note: false,
    handover_code: true,
  });
  const address = "Rua Haddock Lobo, 595";
  const id = await deliveryFor(address);
  const token = (await owner.call<{ tracking_token: string }>("GET", `/api/v1/deliveries/${id}`)).tracking_token;

  const recipient = await newContext(browser, { viewport: PHONE });
  const page = await recipient.newPage();
  await page.goto(`/track/${token}`);
  await expect(page.getByRole("heading", { name: "Sua entrega" })).toBeVisible();
  // Before the pick-up: the drop-off pinned, the driver named with the vehicle, the code to give at the door.
  const map = page.getByRole("img", { name: "Mapa da entrega" });
  await expect(map.getByTitle("Local de entrega")).toHaveCount(1);
  await expect(page.getByText("Rita vem de moto, placa RIT4A26.")).toBeVisible();
  const codeBox = page.getByRole("region", { name: "Código de entrega" });
  await expect(codeBox.getByText(/^\d{4}$/)).toBeVisible();
  const code = (await codeBox.getByText(/^\d{4}$/).textContent())!;
  await expect(page.getByText("Rita Rocha")).toHaveCount(0);

  // On the way: the driver's position and the drop-off on one map, the ETA counting down between refreshes.
  await rita.call("POST", `/api/v1/deliveries/${id}/start`);
  const live = page.getByRole("img", { name: "Posição do entregador" });
  await expect(live).toBeVisible();
  for (;;) {
    const res = await rita.http.put("/api/v1/locations/me", {
      headers: { authorization: `Bearer ${rita.token}` },
      data: { lat: -23.5540, lng: -46.6380 },
    });
    if (res.status() !== 429) {
      expect(res.status(), await res.text()).toBe(200);
      break;
    }
    await page.waitForTimeout(Number(res.headers()["retry-after"]) * 1000);
  }
  await expect(live.getByTitle("Seu entregador")).toHaveCount(1);
  await expect(live.getByTitle("Local de entrega")).toHaveCount(1);
  const timer = page.getByRole("timer", { name: "Tempo até a chegada" });
  await expect(timer).toHaveText(/^Chega em \d+:\d{2}$/);
  const seconds = async () => {
    const [m, s] = (await timer.textContent())!.replace("Chega em ", "").split(":").map(Number);
    return m * 60 + s;
  };
  const first = await seconds();
  await page.waitForTimeout(2_500);
  const later = await seconds();
  expect(later).toBeLessThan(first);
  expect(later).toBeGreaterThanOrEqual(first - 4);
  await shot(page, "recipient-on-the-way");

  // At the door: Rita's phone takes the photo and the code the recipient gives.
  const driver = await newContext(browser, { viewport: PHONE });
  const phone = await driver.newPage();
  await signIn(phone, RITA.email, RITA.password);
  const card = phone.getByRole("listitem").filter({ hasText: address });
  const proof = card.getByRole("group", { name: "Prova de entrega" });
  // No photo yet: said on the phone.
  await card.getByLabel("Código de entrega").fill(code);
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card.getByRole("alert")).toHaveText("Falta a prova de entrega que a empresa exige: foto.");
  await proof.getByLabel("Foto da entrega").setInputFiles({ name: "door.png", mimeType: "image/png", buffer: PHOTO });
  // A code misheard at the door: the server refuses it, in words on the card, and the delivery stays in progress.
  await card.getByLabel("Código de entrega").fill(code === "0000" ? "1111" : "0000");
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card.getByRole("alert")).toHaveText(
    "O código de entrega não confere. Peça o código de novo a quem recebe.",
  );
  expect((await owner.call<{ status: string }>("GET", `/api/v1/deliveries/${id}`)).status).toBe("in_progress");
  // The right one then completes it.
  await card.getByLabel("Código de entrega").fill(code);
  await card.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(phone.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();

  // The recipient's page, live: delivered, the code gone, the proof photo shown.
  await expect(page.getByRole("status", { name: "Situação da entrega" })).toHaveText("Sua entrega chegou.");
  await expect(codeBox).toHaveCount(0);
  await expect(page.getByRole("timer")).toHaveCount(0);
  const photo = page.getByRole("img", { name: "Foto da entrega" });
  await expect(photo).toBeVisible();
  await expect.poll(() => photo.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBe(2);
  expect(await photo.getAttribute("src")).toMatch(
    /\/storage\/v1\/object\/sign\/delivery-proofs\/.+\/photo\.png\?token=/,
  );
  await shot(page, "recipient-delivered");

  await driver.close();
  await recipient.close();
});

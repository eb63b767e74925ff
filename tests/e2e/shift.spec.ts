// A driver's whole shift on a 390 px phone, as issue 21 found it breaking: three deliveries in a row (one taken
// from the offers, two assigned by the dispatcher while the app is open), each completed with a photo and a
// signature, the page reloaded at every step, the connection cut before one completion; offers taken by another
// driver or cancelled leaving the screen live; an offer accepted offline; a cancelled delivery explained, and a
// completed one whose payment was refunded; two tabs; the app opening with no network, a queued action sent exactly
// once and the latest position sent when the connection returns; an answer lost on the way; a delivery that could
// not be delivered reported offline with its photo, which the panel then shows; a proof retried after a reload. Every check of the effect reads the server.
import type { BrowserContext, Locator, Page, Response } from "@playwright/test";
import {
  Api,
  COMPANY_GATEWAY,
  drawSignature,
  expect,
  expectNoSidewaysScroll,
  newContext,
  PHOTO,
  shot,
  signIn,
  test,
} from "./support.ts";

const SE = { latitude: -23.5503, longitude: -46.6339 };
const DORA = { email: "driver1@demo.test", password: "demo-driver-pass" };
const DINO = { email: "driver2@demo.test", password: "demo-driver-pass" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const formatBRL = (value: number) =>
  new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" }).format(value);

interface Delivery {
  id: string;
  status: string;
  price: number;
  driver_id: string | null;
  destination_address: string;
  started_at: string | null;
  completed_at: string | null;
}

let owner: Api;
let dora: Api;
let dino: Api;
let doraId: string;
let share: number;
/** Tells this run's deliveries apart from those of earlier runs and specs. */
const run = Date.now().toString(36).slice(-4);

test.beforeAll(async () => {
  owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  dora = await Api.signIn(DORA.email, DORA.password);
  dino = await Api.signIn(DINO.email, DINO.password);
  doraId = (await dora.call<{ driver_id: string }>("GET", "/api/v1/wallets/me")).driver_id;
  share = (await owner.call<{ driver_share: number }>("GET", "/api/v1/prices")).driver_share;
});
// Each journey starts with Dora holding nothing: one that failed midway leaves its deliveries with her, which
// would make the next one's cards wrong (what it checks is its own, not the last one's failure).
test.beforeEach(async () => {
  for (const status of ["accepted", "in_progress", "returning"]) {
    const { items } = await owner.call<{ items: Delivery[] }>(
      "GET",
      `/api/v1/deliveries?driver_id=${doraId}&status=${status}&limit=100`,
    );
    for (const d of items) {
      if (status !== "returning") {
        await owner.call("POST", `/api/v1/deliveries/${d.id}/recall`, { reason: "left by a journey", then: "cancel" });
      }
      if (status !== "accepted") await dora.call("POST", `/api/v1/deliveries/${d.id}/return`);
    }
  }
});
test.afterAll(async () => {
  await owner?.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: false, signature: false, note: false });
  for (const api of [owner, dora, dino]) await api?.dispose();
});

const payOf = (price: number) => Math.round(Math.round(price * 100) * Math.round(share * 10_000) / 10_000) / 100;

/** An invoice delivery of the demo company, pending (offered to every driver) unless assigned. */
async function createDelivery(to: string, extra: Record<string, unknown> = {}): Promise<Delivery> {
  return await owner.call<Delivery>("POST", "/api/v1/deliveries", {
    origin: { lat: -23.5503, lng: -46.6339 },
    destination: { lat: -23.5614, lng: -46.6559 },
    origin_address: "Praça da Sé, 1 - Sé, São Paulo",
    destination_address: to,
    payment_method: "invoice",
    recipient_name: "Rita Recebedora",
    recipient_phone: "+5511988887777",
    ...extra,
  });
}
const assign = (d: Delivery, driverId = doraId) =>
  owner.call<Delivery>("POST", `/api/v1/deliveries/${d.id}/assign`, { driver_id: driverId });
const serverView = (d: Delivery) => owner.call<Delivery>("GET", `/api/v1/deliveries/${d.id}`);

/**
 * The driver's app: a phone-sized page sharing its position, signed in as Dora. With `serviceWorkers: "block"` it
 * has no service worker, so that the test can fake the network with context.route (a worker's requests pass it by).
 */
async function driverApp(
  browser: Parameters<typeof newContext>[0],
  { serviceWorkers = "allow" }: { serviceWorkers?: "allow" | "block" } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newContext(browser, {
    viewport: { width: 390, height: 844 },
    geolocation: SE,
    permissions: ["geolocation"],
    serviceWorkers,
  });
  const page = await context.newPage();
  await signIn(page, DORA.email, DORA.password);
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  // The app works offline once its service worker controls the page.
  if (serviceWorkers === "allow") {
    await expect.poll(() => page.evaluate(() => !!navigator.serviceWorker.controller), { timeout: 20_000 }).toBe(true);
  }
  return { context, page };
}

/** Dora's last position as the company sees it. */
async function doraOnTheMap() {
  const { items } = await owner.call<{ items: { driver_id: string; lat: number | null; lng: number | null }[] }>(
    "GET",
    "/api/v1/drivers/locations",
  );
  return items.find((d) => d.driver_id === doraId);
}

const mine = (page: Page) => page.getByRole("region", { name: "Suas entregas" });
const card = (page: Page, to: string) => mine(page).getByRole("listitem").filter({ hasText: to });
const offer = (page: Page, to: string) =>
  page.getByRole("region", { name: "Entregas disponíveis" }).getByRole("listitem").filter({ hasText: to });

/** Reloads and waits for the driver's screen to be back. */
async function reload(page: Page) {
  await page.reload();
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
}

/** Proof of delivery on a card: the photo and the recipient's signature. */
async function addProof(page: Page, where: Locator) {
  await where.getByLabel(/^Foto da entrega/).setInputFiles({ name: "door.png", mimeType: "image/png", buffer: PHOTO });
  const pad = where.getByRole("img", { name: /^Assinatura de quem recebe/ });
  await expect(where.getByText("Peça para quem recebe assinar no quadro com o dedo ou o mouse.")).toBeVisible();
  await drawSignature(page, pad);
  await expect(where.getByText("Assinado.")).toBeVisible();
}

/**
 * The requests of the app to a path that reached the server (answered, whatever the status; across reloads of its
 * pages). A request made while the connection is cut fails in the browser and never counts.
 */
function counter(context: BrowserContext, method: string, path: RegExp) {
  const seen: Response[] = [];
  context.on("response", (r) => {
    if (r.request().method() === method && path.test(new URL(r.url()).pathname)) seen.push(r);
  });
  return seen;
}

async function credits(deliveryId: string, kind = "delivery_credit") {
  const page = await dora.call<{ items: { kind: string; amount: number; delivery_id: string | null }[] }>(
    "GET",
    "/api/v1/wallets/me/transactions?limit=100",
  );
  return page.items.filter((e) => e.delivery_id === deliveryId && e.kind === kind);
}

test("a whole shift: three deliveries in a row, a reload at every step, the connection cut before completing", async ({ browser }) => {
  test.setTimeout(240_000);
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: true, signature: true, note: false });
  const { context, page } = await driverApp(browser);
  const completions = counter(context, "POST", /\/deliveries\/[^/]+\/complete$/);
  await shot(page, "shift-01-signed-in");

  // 1. An offer appears live, with the driver's pay (not the client's price); the driver takes it.
  const a = await createDelivery(`Rua Augusta, 101 (${run}-A)`);
  const offerA = offer(page, a.destination_address);
  await expect(offerA).toBeVisible();
  await expect(offerA).toContainText(`Seu ganho: ${formatBRL(payOf(a.price))}`);
  if (payOf(a.price) !== a.price) await expect(offerA).not.toContainText(formatBRL(a.price));
  await shot(page, "shift-02-offer");
  await reload(page);
  await offerA.getByRole("button", { name: "Aceitar" }).click();
  const cardA = card(page, a.destination_address);
  await expect(cardA.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
  await expect(cardA.getByText("Aceita", { exact: true })).toBeVisible();
  await expect(offerA).toHaveCount(0);
  await expect.poll(async () => (await serverView(a)).driver_id).toBe(doraId);
  // The way to the pickup opens in the phone's maps app; the recipient can be called or messaged.
  await expect(cardA.getByRole("link", { name: "Ir para a retirada (abre o app de mapas)" })).toHaveAttribute(
    "href",
    "https://www.google.com/maps/dir/?api=1&destination=-23.5503,-46.6339&travelmode=driving",
  );
  await expect(cardA.getByRole("link", { name: "Ligar para (11) 98888-7777" })).toHaveAttribute(
    "href",
    "tel:+5511988887777",
  );
  await expect(cardA.getByRole("link", { name: "Mensagem no WhatsApp para (11) 98888-7777" })).toHaveAttribute(
    "href",
    "https://wa.me/5511988887777",
  );
  await shot(page, "shift-03-accepted");
  await reload(page);
  await cardA.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(cardA.getByText("Em andamento", { exact: true })).toBeVisible();
  await expect(cardA.getByRole("link", { name: "Ir para o destino (abre o app de mapas)" })).toHaveAttribute(
    "href",
    "https://www.google.com/maps/dir/?api=1&destination=-23.5614,-46.6559&travelmode=driving",
  );
  await expect.poll(async () => (await serverView(a)).status).toBe("in_progress");
  await reload(page);
  await expect(cardA.getByText("Em andamento", { exact: true })).toBeVisible();

  // 2. While the app is open, the dispatcher assigns two more: they appear live, in the order they were given.
  const b = await assign(await createDelivery(`Rua Haddock Lobo, 202 (${run}-B)`));
  const c = await assign(await createDelivery(`Alameda Santos, 303 (${run}-C)`));
  const cardB = card(page, b.destination_address);
  const cardC = card(page, c.destination_address);
  await expect(cardB.getByRole("heading", { name: "2ª entrega" })).toBeVisible();
  await expect(cardC.getByRole("heading", { name: "3ª entrega" })).toBeVisible();
  await expect(mine(page).getByRole("listitem").getByRole("heading", { level: 3 })).toHaveText([
    "Entrega atual",
    "2ª entrega",
    "3ª entrega",
  ]);
  await expect(cardB).toContainText(`Seu ganho${formatBRL(payOf(b.price))}`);
  await expectNoSidewaysScroll(page);
  await shot(page, "shift-04-three-in-order");

  // 3. The first is completed with a photo and a signature, after a reload.
  await reload(page);
  await addProof(page, cardA);
  await expectNoSidewaysScroll(page);
  await shot(page, "shift-05-proof");
  await cardA.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(cardA).toHaveCount(0);
  const today = page.getByRole("region", { name: "Concluídas hoje" });
  await expect(today).toContainText(a.destination_address);
  await expect(today.getByText(/^\d+ entregas?, R\$\s?[\d.,]+ de ganho\.$/)).toBeVisible();
  await expect(cardB.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
  expect((await serverView(a)).status).toBe("completed");

  // 4. The next one starts blank: no signature carried over from the last (finding 1), and it completes.
  await reload(page);
  await cardB.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(cardB.getByText("Em andamento", { exact: true })).toBeVisible();
  await expect(cardB.getByText("Assinado.")).toHaveCount(0);
  await expect.poll(async () => (await serverView(b)).status).toBe("in_progress");
  await reload(page);
  await addProof(page, cardB);

  // The connection is cut just before "complete": the completion waits on the device, through a reload.
  await context.setOffline(true);
  await cardB.getByRole("button", { name: "Concluir entrega" }).click();
  const waiting = cardB.getByText("Aguardando conexão: a conclusão vai assim que a conexão voltar.");
  await expect(waiting).toBeVisible();
  await expect(page.getByText("1 ação aguardando conexão.")).toBeVisible();
  await expect(page.getByText("Sem conexão. O que você fizer fica guardado neste aparelho", { exact: false }))
    .toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, "shift-06-offline-waiting");
  await reload(page);
  await expect(waiting).toBeVisible();
  await shot(page, "shift-07-offline-reloaded");
  expect((await serverView(b)).status).toBe("in_progress");
  await context.setOffline(false);
  await expect(cardB).toHaveCount(0, { timeout: 20_000 });
  await expect(page.getByText("1 ação aguardando conexão.")).toHaveCount(0);
  // Completed once: one request, one completion, one credit of the driver's pay.
  expect((await serverView(b)).status).toBe("completed");
  const completionsB = completions.filter((r) => r.url().includes(b.id));
  expect(completionsB).toHaveLength(1);
  expect(completionsB[0].request().headers()["idempotency-key"]).toMatch(UUID);
  const creditB = await credits(b.id);
  expect(creditB).toHaveLength(1);
  expect(creditB[0].amount).toBe(payOf(b.price));
  await shot(page, "shift-08-back-online");

  // 5. The third, with a reload at every step.
  await reload(page);
  await expect(cardC.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
  await cardC.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect.poll(async () => (await serverView(c)).status).toBe("in_progress");
  await reload(page);
  await addProof(page, cardC);
  await cardC.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(cardC).toHaveCount(0);
  await expect(page.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();
  await reload(page);
  for (const d of [a, b, c]) {
    await expect(today.getByRole("listitem").filter({ hasText: d.destination_address })).toContainText(
      formatBRL(payOf(d.price)),
    );
    expect((await serverView(d)).status).toBe("completed");
    expect(await credits(d.id)).toHaveLength(1);
  }
  expect(completions.filter((r) => [a, b, c].some((d) => r.url().includes(d.id)))).toHaveLength(3);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await shot(page, "shift-09-done");
  await context.close();
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: false, signature: false, note: false });
});

test("offers taken by another driver or cancelled leave the screen live; an accept that lost the race says so", async ({ browser }) => {
  const { context, page } = await driverApp(browser);
  const d = await createDelivery(`Rua Bela Cintra, 404 (${run}-D)`);
  // Live (delivery_available), or at the latest with the next reading of the offers.
  await expect(offer(page, d.destination_address)).toBeVisible({ timeout: 20_000 });
  await dino.call("POST", `/api/v1/deliveries/${d.id}/accept`);
  await expect(offer(page, d.destination_address)).toHaveCount(0, { timeout: 20_000 });

  const f = await createDelivery(`Rua Pamplona, 606 (${run}-F)`);
  await expect(offer(page, f.destination_address)).toBeVisible();
  await owner.call("POST", `/api/v1/deliveries/${f.id}/cancel`, { reason: "teste" });
  await expect(offer(page, f.destination_address)).toHaveCount(0, { timeout: 20_000 });

  // Accepted with no connection while another driver takes it: told in a sentence when the answer comes.
  const e = await createDelivery(`Rua Frei Caneca, 505 (${run}-E)`);
  await expect(offer(page, e.destination_address)).toBeVisible();
  await context.setOffline(true);
  await offer(page, e.destination_address).getByRole("button", { name: "Aceitar" }).click();
  await expect(
    card(page, e.destination_address).getByText("Aguardando conexão: o aceite vai assim que a conexão voltar."),
  )
    .toBeVisible();
  await dino.call("POST", `/api/v1/deliveries/${e.id}/accept`);
  await context.setOffline(false);
  const lost = page.getByRole("alert").filter({ hasText: e.destination_address });
  await expect(lost).toHaveText(
    `A entrega para ${e.destination_address} não está mais disponível: outro entregador a aceitou antes de você, ou a empresa a cancelou.`,
    { timeout: 20_000 },
  );
  await expect(card(page, e.destination_address)).toHaveCount(0);
  await expect(offer(page, e.destination_address)).toHaveCount(0);
  await shot(page, "shift-10-lost-race");
  await page.getByRole("listitem").filter({ has: lost }).getByRole("button", { name: "Entendi" }).click();
  await expect(lost).toHaveCount(0);
  expect((await serverView(e)).driver_id).not.toBe(doraId);

  // Accepted with no connection, through a reload, and nobody else took it: the driver's once the connection returns.
  const accepts = counter(context, "POST", /\/deliveries\/[^/]+\/accept$/);
  const n = await createDelivery(`Rua Itapeva, 515 (${run}-N)`);
  await expect(offer(page, n.destination_address)).toBeVisible({ timeout: 20_000 });
  await context.setOffline(true);
  await offer(page, n.destination_address).getByRole("button", { name: "Aceitar" }).click();
  const cardN = card(page, n.destination_address);
  const waiting = cardN.getByText("Aguardando conexão: o aceite vai assim que a conexão voltar.");
  await expect(waiting).toBeVisible();
  await reload(page);
  await expect(waiting).toBeVisible();
  expect(accepts).toHaveLength(0);
  await context.setOffline(false);
  await expect(cardN.getByRole("button", { name: "Iniciar entrega" })).toBeVisible({ timeout: 20_000 });
  await expect(offer(page, n.destination_address)).toHaveCount(0);
  expect((await serverView(n)).driver_id).toBe(doraId);
  await reload(page);
  await page.waitForTimeout(1_000);
  expect(accepts.filter((r) => r.url().includes(n.id))).toHaveLength(1);
  for (const x of [d, e, n]) await owner.call("POST", `/api/v1/deliveries/${x.id}/cancel`, {});
  await context.close();
});

test("a delivery cancelled by the company is explained, also when the driver acted on it without a connection", async ({ browser }) => {
  const { context, page } = await driverApp(browser);
  const g = await assign(await createDelivery(`Rua Oscar Freire, 707 (${run}-G)`));
  await expect(card(page, g.destination_address)).toBeVisible();
  await owner.call("POST", `/api/v1/deliveries/${g.id}/cancel`, { reason: "O cliente desistiu" });
  await expect(card(page, g.destination_address)).toHaveCount(0);
  const explained = page.getByRole("alert").filter({ hasText: g.destination_address });
  await expect(explained).toHaveText(
    `A entrega para ${g.destination_address} foi cancelada pela empresa (motivo: O cliente desistiu). Você não precisa fazer mais nada com ela.`,
  );
  await shot(page, "shift-11-cancelled-explained");
  await reload(page);
  await expect(explained).toBeVisible();
  await page.getByRole("listitem").filter({ has: explained }).getByRole("button", { name: "Entendi" }).click();
  await reload(page);
  await expect(explained).toHaveCount(0);

  // Started with no connection, cancelled meanwhile: the conflict is a sentence, and nothing happened to it.
  const h = await assign(await createDelivery(`Rua da Consolação, 808 (${run}-H)`));
  await expect(card(page, h.destination_address)).toBeVisible();
  await context.setOffline(true);
  await card(page, h.destination_address).getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(card(page, h.destination_address).getByText(/^Aguardando conexão: o início da entrega/)).toBeVisible();
  await owner.call("POST", `/api/v1/deliveries/${h.id}/cancel`, { reason: "Endereço errado" });
  await context.setOffline(false);
  await expect(page.getByRole("alert").filter({ hasText: "antes que sua ação chegasse" })).toHaveText(
    `A entrega para ${h.destination_address} foi cancelada pela empresa antes que sua ação chegasse (motivo: Endereço errado); nada mais foi feito nela.`,
    { timeout: 20_000 },
  );
  await expect(card(page, h.destination_address)).toHaveCount(0);
  // Said once: the refusal already tells the cancellation.
  await expect(page.getByRole("alert")).toHaveCount(1);
  const after = await serverView(h);
  expect(after.status).toBe("cancelled");
  expect(after.started_at).toBeNull();
  await shot(page, "shift-12-conflict");
  await page.getByRole("button", { name: "Entendi" }).click();
  await expect(page.getByRole("alert")).toHaveCount(0);
  await context.close();
});

test("a completed delivery whose payment the client got back is explained, and leaves today's pay", async ({ browser }) => {
  // A Pix delivery: the company's gateway is the built-in simulator (as the panel journeys set it).
  await owner.call("POST", "/api/v1/companies/me/gateway-config", COMPANY_GATEWAY);
  const companyId = (await owner.call<{ id: string }>("GET", "/api/v1/companies/me")).id;
  const p = await createDelivery(`Rua Tabapuã, 1414 (${run}-P)`, {
    payment_method: "pix",
    customer: { name: "Carla Cliente", document: "529.982.247-25" },
  });
  const gateway = async (event: string) => {
    const res = await owner.http.post("/_sim/web/events", {
      data: { event, external_reference: p.id, company_id: companyId, webhook_secret: COMPANY_GATEWAY.webhook_secret },
    });
    expect(res.status(), await res.text()).toBe(200);
  };
  await gateway("PAYMENT_RECEIVED");
  await expect.poll(async () => (await serverView(p)).status).toBe("pending");
  const { context, page } = await driverApp(browser);
  await assign(p);
  const cardP = card(page, p.destination_address);
  await cardP.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect.poll(async () => (await serverView(p)).status).toBe("in_progress");
  await cardP.getByRole("button", { name: "Concluir entrega" }).click();
  const today = page.getByRole("region", { name: "Concluídas hoje" });
  await expect(today).toContainText(p.destination_address);
  expect(await credits(p.id)).toHaveLength(1);

  // The gateway reports the payment refunded: the delivery is cancelled and the driver's credit reversed.
  await gateway("PAYMENT_REFUNDED");
  const explained = page.getByRole("alert").filter({ hasText: p.destination_address });
  await expect(explained).toHaveText(
    `A entrega para ${p.destination_address}, que você concluiu, foi cancelada depois e o crédito dela saiu da sua carteira.`,
    { timeout: 20_000 },
  );
  await expect(today).not.toContainText(p.destination_address);
  expect((await serverView(p)).status).toBe("cancelled");
  expect(await credits(p.id, "credit_reversal")).toHaveLength(1);
  await shot(page, "shift-18-refunded-explained");
  await reload(page);
  await expect(explained).toBeVisible();
  await page.getByRole("listitem").filter({ has: explained }).getByRole("button", { name: "Entendi" }).click();
  await expect(explained).toHaveCount(0);
  await context.close();
});

test("two tabs of one driver: one location sender, no visible error, none after a reload", async ({ browser }) => {
  test.setTimeout(120_000);
  const { context, page } = await driverApp(browser);
  const updates = counter(context, "PUT", /\/api\/v1\/locations\/me$/);
  const i = await assign(await createDelivery(`Rua Maria Antônia, 909 (${run}-I)`));
  await card(page, i.destination_address).getByRole("button", { name: "Iniciar entrega" }).click();
  const second = await context.newPage();
  await second.goto("/driver");
  await expect(second.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  const sent = /^Localização enviada às \d{2}:\d{2}:\d{2}\.$/;
  // The first update may wait out the window of one sent by the previous journey's device: a pause, not an error.
  for (const p of [page, second]) {
    await expect(p.getByRole("status", { name: "Localização" })).toHaveText(sent, { timeout: 25_000 });
  }
  updates.length = 0;
  const started = Date.now();
  await page.waitForTimeout(25_000);
  await reload(second);
  await expect(second.getByRole("status", { name: "Localização" })).toHaveText(sent);
  await page.close();
  await second.waitForTimeout(12_000);
  const seconds = (Date.now() - started) / 1000;
  for (const p of [second]) {
    await expect(p.getByRole("status", { name: "Localização" })).toHaveText(sent);
    await expect(p.getByText(/Atualizações demais/)).toHaveCount(0);
    await expect(p.getByRole("alert")).toHaveCount(0);
  }
  // One sender: no more than one update per 10 s window, and never one the server refused.
  expect(updates.filter((r) => r.status() === 429)).toEqual([]);
  expect(updates.length).toBeLessThanOrEqual(Math.ceil(seconds / 10) + 2);
  expect(updates.length).toBeGreaterThanOrEqual(2);
  await shot(second, "shift-13-second-tab");
  await card(second, i.destination_address).getByRole("button", { name: "Concluir entrega" }).click();
  await expect(card(second, i.destination_address)).toHaveCount(0);
  await context.close();
});

test("the app opens with the network off, and an action taken offline is sent exactly once", async ({ browser }) => {
  const { context, page } = await driverApp(browser);
  const starts = counter(context, "POST", /\/deliveries\/[^/]+\/start$/);
  const j = await assign(await createDelivery(`Rua Peixoto Gomide, 110 (${run}-J)`));
  const cardJ = card(page, j.destination_address);
  await expect(cardJ).toBeVisible();
  // Installable: the page links a manifest with the icons a phone needs, and a service worker controls it.
  const manifest = await page.evaluate(async () => {
    const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]')!;
    return await (await fetch(link.href)).json() as { display: string; icons: { sizes: string }[] };
  });
  expect(manifest.display).toBe("standalone");
  expect(manifest.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(["192x192", "512x512"]));
  await context.setOffline(true);
  await reload(page);
  await expect(page.getByText("Sem conexão", { exact: true })).toBeVisible();
  await expect(cardJ).toBeVisible();
  await shot(page, "shift-14-offline-shell");
  await cardJ.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect(cardJ.getByText("Em andamento", { exact: true })).toBeVisible();
  await expect(cardJ.getByText("Aguardando conexão: o início da entrega vai assim que a conexão voltar."))
    .toBeVisible();
  // The driver sees that the position does not reach the company for now.
  const sharing = page.getByRole("status", { name: "Localização" });
  await expect(sharing).toHaveText("Sem conexão: sua localização vai assim que a conexão voltar.");
  await reload(page);
  await expect(cardJ.getByText("Aguardando conexão: o início da entrega vai assim que a conexão voltar."))
    .toBeVisible();
  await expect(sharing).toHaveText("Sem conexão: sua localização vai assim que a conexão voltar.");
  expect(starts).toHaveLength(0);
  // Signing out now would leave the action waiting on this device: the app asks first, and going back keeps it.
  await page.getByRole("button", { name: "Sair" }).click();
  const question = page.getByRole("dialog", { name: /^1 ação ainda aguarda conexão\./ });
  await expect(question).toBeVisible();
  await expect(question.getByRole("button", { name: "Voltar" })).toBeFocused();
  // Both choices readable in the dialog, which opens from the dark header (whose own buttons are transparent).
  const anyway = question.getByRole("button", { name: "Sair mesmo assim" });
  await expect(anyway).toBeVisible();
  expect(await anyway.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe("rgb(185, 28, 28)");
  await shot(page, "shift-19-sign-out-asks");
  await question.getByRole("button", { name: "Voltar" }).click();
  await expect(question).toBeHidden();
  await expect(page.getByText("1 ação aguardando conexão.")).toBeVisible();
  // The driver moved meanwhile: the position sent when the connection returns is the latest one.
  const moved = { latitude: -23.5587, longitude: -46.662 };
  await context.setGeolocation(moved);
  await context.setOffline(false);
  await expect(cardJ.getByRole("button", { name: "Concluir entrega" })).toBeVisible({ timeout: 20_000 });
  await expect(sharing).toHaveText(/^Localização enviada às \d{2}:\d{2}:\d{2}\.$/, { timeout: 25_000 });
  const seen = (await doraOnTheMap())!;
  expect(seen.lat).toBeCloseTo(moved.latitude, 5);
  expect(seen.lng).toBeCloseTo(moved.longitude, 5);
  await expect(cardJ.getByText(/^Aguardando conexão/)).toHaveCount(0);
  const started = await serverView(j);
  expect(started.status).toBe("in_progress");
  await reload(page);
  await page.waitForTimeout(1_000);
  expect(starts).toHaveLength(1);
  expect((await serverView(j)).started_at).toBe(started.started_at);
  await cardJ.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(cardJ).toHaveCount(0);
  await context.close();
});

test("an answer lost on the way: the completion went through, its answer did not; sent again with its key, done once, nothing shown", async ({ browser }) => {
  const { context, page } = await driverApp(browser, { serviceWorkers: "block" });
  const m = await assign(await createDelivery(`Rua Bahia, 1313 (${run}-M)`));
  const cardM = card(page, m.destination_address);
  await cardM.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect.poll(async () => (await serverView(m)).status).toBe("in_progress");
  const keys: string[] = [];
  await context.route(/\/api\/v1\/deliveries\/[^/]+\/complete$/, async (route) => {
    keys.push(route.request().headers()["idempotency-key"]);
    if (keys.length > 1) return await route.continue();
    // The request reaches the server, which completes the delivery; the phone never hears back.
    await route.fetch();
    await route.abort("internetdisconnected");
  });
  await cardM.getByRole("button", { name: "Concluir entrega" }).click();
  // Realtime tells the delivery completed; the action stays queued until the server has answered it.
  await expect(cardM).toHaveCount(0, { timeout: 20_000 });
  // Sent again with the same key; the server (which does not yet keep keys) refused the second as a completion of
  // a completed delivery, and the app, seeing its delivery completed by this driver, took that as done.
  await expect.poll(() => keys.length, { timeout: 20_000 }).toBe(2);
  await expect(page.getByText(/aguardando conexão/i)).toHaveCount(0);
  expect(keys).toHaveLength(2);
  expect(keys[0]).toMatch(UUID);
  expect(keys[1]).toBe(keys[0]);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await expect(page.getByRole("region", { name: "Concluídas hoje" })).toContainText(m.destination_address);
  expect((await serverView(m)).status).toBe("completed");
  expect(await credits(m.id)).toHaveLength(1);
  await reload(page);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await expect(page.getByText(/aguardando conexão/i)).toHaveCount(0);
  await context.close();
});

test("a delivery the driver could not deliver is reported with its reason and photo, offline too, and sent once", async ({ browser }) => {
  const { context, page } = await driverApp(browser);
  const fails = counter(context, "POST", /\/deliveries\/[^/]+\/fail$/);
  const uploads = counter(context, "POST", /^\/storage\/v1\/object\/delivery-proofs\//);
  const l = await assign(await createDelivery(`Rua Augusta, 1212 (${run}-L)`));
  const cardL = card(page, l.destination_address);
  await cardL.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect.poll(async () => (await serverView(l)).status).toBe("in_progress");
  // "Não consegui entregar" opens the report beside "Concluir entrega"; "Voltar" closes it again.
  await cardL.getByRole("button", { name: "Não consegui entregar" }).click();
  const report = cardL.getByRole("form", { name: "Não consegui entregar" });
  await expect(report).toBeVisible();
  await report.getByRole("button", { name: "Voltar" }).click();
  await expect(report).toHaveCount(0);
  await cardL.getByRole("button", { name: "Não consegui entregar" }).click();
  await report.getByLabel("Motivo").selectOption({ label: "Recusada pelo destinatário" });
  await report.getByLabel("Observação (opcional)").fill("Caixa aberta, o cliente recusou");
  // The photo is taken as the proof's is: a file that is not an image is refused in a sentence, a photo is shown.
  await report.getByLabel("Foto (opcional)").setInputFiles({
    name: "a.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("hi"),
  });
  await expect(report.getByRole("alert")).toHaveText("A foto precisa ser uma imagem JPEG, PNG ou WebP.");
  await report.getByLabel("Foto (opcional)").setInputFiles({ name: "caixa.png", mimeType: "image/png", buffer: PHOTO });
  await expect(report.getByRole("alert")).toHaveCount(0);
  await expect(report.getByRole("img", { name: "A foto da tentativa" })).toBeVisible();
  await expect(report.getByText("Trocar foto")).toBeVisible();
  await expectNoSidewaysScroll(page);
  await shot(page, "shift-15-could-not-deliver");

  // Reported with no connection: it waits on the device, through a reload, and goes once the connection is back.
  await context.setOffline(true);
  await report.getByRole("button", { name: "Registrar entrega não realizada" }).click();
  const waiting = cardL.getByText(
    "Aguardando conexão: o registro de entrega não realizada vai assim que a conexão voltar.",
  );
  await expect(waiting).toBeVisible();
  await reload(page);
  await expect(waiting).toBeVisible();
  expect(fails).toHaveLength(0);
  expect(uploads).toHaveLength(0);
  expect((await serverView(l)).status).toBe("in_progress");
  await context.setOffline(false);
  await expect(cardL).toHaveCount(0, { timeout: 20_000 });
  const failed = await owner.call<
    Delivery & { failure_reason: string; failure_note: string; failed_at: string; failure_photo_path: string }
  >(
    "GET",
    `/api/v1/deliveries/${l.id}`,
  );
  expect(failed.status).toBe("failed");
  expect(failed.failure_reason).toBe("refused");
  expect(failed.failure_note).toBe("Caixa aberta, o cliente recusou");
  // The photo kept on the phone went up first, as the first attempt's, then the report with its key.
  expect(failed.failure_photo_path).toMatch(new RegExp(`^[0-9a-f-]{36}/${l.id}/failed-1\\.png$`));
  // Once: one request, no credit, nothing refused on screen, also after a reload.
  await reload(page);
  await page.waitForTimeout(1_000);
  const failsL = fails.filter((r) => r.url().includes(l.id));
  expect(failsL).toHaveLength(1);
  expect(failsL[0].request().headers()["idempotency-key"]).toMatch(UUID);
  expect(uploads.filter((r) => r.url().includes(l.id)).map((r) => new URL(r.url()).pathname.split("/").pop()))
    .toEqual(["failed-1.png"]);
  expect(await credits(l.id)).toHaveLength(0);
  await expect(page.getByRole("alert")).toHaveCount(0);
  await expect(cardL).toHaveCount(0);
  await context.close();

  // The photo taken on the phone shows in the panel, with the reason and the note.
  const panel = await newContext(browser);
  const ownerPage = await panel.newPage();
  await signIn(ownerPage, "owner@demo.test", "demo-owner-pass");
  await expect(ownerPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
  await ownerPage.goto(`/deliveries/${l.id}`);
  await expect(ownerPage.getByText(/Recusada pelo destinatário em \d\d\/\d\d\/\d{4} \d\d:\d\d/)).toBeVisible();
  await expect(ownerPage.getByText("Observação do entregador: Caixa aberta, o cliente recusou")).toBeVisible();
  const photo = ownerPage.getByRole("img", { name: "Foto da tentativa" });
  await expect(photo).toBeVisible();
  // The phone's 2x2 photo, decoded by the browser from its signed URL.
  await expect.poll(() => photo.evaluate((i: HTMLImageElement) => i.complete ? i.naturalWidth : 0)).toBe(2);
  await shot(ownerPage, "shift-15b-failure-photo-on-panel");
  await panel.close();
});

test("a proof retried after a reload replaces the driver's own first one, until the delivery is completed", async ({ browser }) => {
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: true, signature: false, note: false });
  const { context, page } = await driverApp(browser);
  // Another delivery in progress above it: each card's proof fields are its own (no label points at the other's).
  const first = await assign(await createDelivery(`Rua Sergipe, 100 (${run}-K0)`));
  await dora.call("POST", `/api/v1/deliveries/${first.id}/start`);
  const k = await assign(await createDelivery(`Rua Sergipe, 111 (${run}-K)`));
  const cardK = card(page, k.destination_address);
  await expect(cardK.getByRole("heading", { name: "2ª entrega" })).toBeVisible();
  await cardK.getByRole("button", { name: "Iniciar entrega" }).click();
  await expect.poll(async () => (await serverView(k)).status).toBe("in_progress");
  await expect(cardK.getByLabel(/^Foto da entrega/)).toBeVisible();
  // The company asks for a signature too once the phone has read what it requires (the phone checks the proof it
  // knows of before sending, so only a rule it has not heard of yet reaches the server unmet).
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: true, signature: true, note: false });
  // A first photo goes up; the server refuses the completion for the missing signature, in a sentence on the card.
  await cardK.getByLabel(/^Foto da entrega/).setInputFiles({ name: "a.png", mimeType: "image/png", buffer: PHOTO });
  await expect(cardK.getByRole("img", { name: "A foto tirada" })).toBeVisible();
  await expect(card(page, first.destination_address).getByRole("img", { name: "A foto tirada" })).toHaveCount(0);
  await expect(cardK.getByText("Trocar foto")).toBeVisible();
  await cardK.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(cardK.getByRole("alert")).toHaveText("Falta a prova de entrega que a empresa exige: assinatura.");
  await shot(page, "shift-16-proof-refused");
  // After a reload the draft is gone: another photo (a blue JPEG this time, the first was a red PNG) and the signature.
  await reload(page);
  await expect(cardK.getByRole("img", { name: "A foto tirada" })).toHaveCount(0);
  const second = Buffer.from(
    (await page.evaluate(() => {
      const canvas = document.createElement("canvas");
      canvas.width = canvas.height = 2;
      const draw = canvas.getContext("2d")!;
      draw.fillStyle = "#0000ff";
      draw.fillRect(0, 0, 2, 2);
      return canvas.toDataURL("image/jpeg");
    })).split(",")[1],
    "base64",
  );
  await cardK.getByLabel(/^Foto da entrega/).setInputFiles({ name: "b.jpg", mimeType: "image/jpeg", buffer: second });
  await drawSignature(page, cardK.getByRole("img", { name: /^Assinatura de quem recebe/ }));
  await shot(page, "shift-17-proof-retried");
  await cardK.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(cardK).toHaveCount(0);
  await expect(page.getByRole("alert")).toHaveCount(0);
  // The server holds one photo, the second one, under the first one's name (encoded as the PNG that name says: the
  // bucket ties each extension to its type), and the signature.
  const done = await owner.call<{ status: string; proof: { photo_path: string; signature_path: string } }>(
    "GET",
    `/api/v1/deliveries/${k.id}`,
  );
  expect(done.status).toBe("completed");
  const folder = `${done.proof.photo_path.split("/")[0]}/${k.id}`;
  expect(done.proof.photo_path).toBe(`${folder}/photo.png`);
  expect(done.proof.signature_path).toBe(`${folder}/signature.png`);
  const read = (path: string) =>
    owner.http.get(`/storage/v1/object/authenticated/delivery-proofs/${path}`, {
      headers: { authorization: `Bearer ${owner.token}`, apikey: owner.anonKey },
    });
  const stored = await read(done.proof.photo_path);
  expect(stored.headers()["content-type"]).toBe("image/png");
  const pixel = await page.evaluate(async (base64) => {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob());
    const canvas = document.createElement("canvas");
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    const draw = canvas.getContext("2d")!;
    draw.drawImage(bitmap, 0, 0);
    return [...draw.getImageData(0, 0, 1, 1).data.slice(0, 3)];
  }, Buffer.from(await stored.body()).toString("base64"));
  // Blue, the second photo's colour (JPEG rounds it a little), not the first photo's red.
  expect(pixel[2]).toBeGreaterThan(200);
  expect(pixel[0]).toBeLessThan(60);
  const listed = await owner.http.post(`/storage/v1/object/list/delivery-proofs`, {
    headers: { authorization: `Bearer ${owner.token}`, apikey: owner.anonKey },
    data: { prefix: folder },
  });
  expect(((await listed.json()) as { name: string }[]).map((o) => o.name).sort()).toEqual([
    "photo.png",
    "signature.png",
  ]);
  await dora.call("POST", `/api/v1/deliveries/${first.id}/fail`, { reason: "other" });
  await expect(card(page, first.destination_address)).toHaveCount(0);
  await context.close();
  await owner.call("PUT", "/api/v1/companies/me/proof-requirements", { photo: false, signature: false, note: false });
});

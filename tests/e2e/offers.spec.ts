// Dispatch in the browser (docs/dispatch.md, issue 24): the dispatcher chooses offers on the rules page, a
// delivery goes out as an offer that the board shows (the delivery offered, its record with the drivers ranked and
// the offer), the driver sees the offer on a phone with a countdown and takes it, and the board shows it taken,
// live; deliveries nobody is near land in the unassigned lane and three are assigned to a driver at once. Then an
// offer whose deadline passes leaves the phone by itself, and an accept kept on the phone with no connection past
// the deadline is told in a sentence. Dora's phone is at the offers' pickup in Campinas, Dino 300 m from it; the
// deliveries nobody is near are picked up in Jundiaí. Every check of an effect reads the server; the company goes
// back to broadcast at the end, as the other journeys expect.
import type { Browser, Locator, Page } from "@playwright/test";
import { Api, expect, expectLabelled, expectNoSidewaysScroll, newContext, shot, signIn, test } from "./support.ts";

const CAMPINAS = { lat: -22.9056, lng: -47.0608 };
const JUNDIAI = { lat: -23.1857, lng: -46.8978 };
/** `km` north of `point`. */
const north = (point: { lat: number; lng: number }, km: number) => ({ lat: point.lat + km / 111.195, lng: point.lng });
const DEFAULTS = {
  mode: "broadcast",
  offer_timeout_s: 60,
  offer_batch: 1,
  max_active_per_driver: 1,
  max_distance_km: 20,
};

interface Delivery {
  id: string;
  status: string;
  driver_id: string | null;
  dispatch_status: string | null;
  destination_address: string;
}
interface Record {
  rounds: { candidates: { name: string; rank: number | null; left_out: string | null }[] }[];
  offers: { driver_id: string; outcome: string | null }[];
}

let owner: Api;
let dino: Api;
let doraId: string;
let dinoId: string;
const created: Delivery[] = [];
/** Tells this run's deliveries apart from those of earlier runs and specs. */
const run = Date.now().toString(36).slice(-4);

test.beforeAll(async () => {
  owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  dino = await Api.signIn("driver2@demo.test", "demo-driver-pass");
  const dora = await Api.signIn("driver1@demo.test", "demo-driver-pass");
  doraId = (await dora.call<{ driver_id: string }>("GET", "/api/v1/wallets/me")).driver_id;
  dinoId = (await dino.call<{ driver_id: string }>("GET", "/api/v1/wallets/me")).driver_id;
  await dora.dispose();
});
test.afterAll(async () => {
  // Back to the defaults, so that the other journeys find deliveries open to every driver; nothing left open.
  await owner?.call("PUT", "/api/v1/dispatch/settings", DEFAULTS);
  for (const d of created) {
    const now = await owner.call<Delivery>("GET", `/api/v1/deliveries/${d.id}`);
    if (["pending", "accepted"].includes(now.status)) {
      await owner.call("POST", `/api/v1/deliveries/${d.id}/cancel`, { reason: "fim do teste" });
    }
  }
  await owner?.dispose();
  await dino?.dispose();
});

/** An invoice delivery picked up at `from`. */
async function createDelivery(label: string, from = CAMPINAS): Promise<Delivery> {
  const delivery = await owner.call<Delivery>("POST", "/api/v1/deliveries", {
    origin: from,
    destination: north(from, 2),
    origin_address: from === CAMPINAS ? "Largo do Rosário, Campinas" : "Praça Governador Pedro de Toledo, Jundiaí",
    destination_address: `Rua ${label}, ${run}`,
    payment_method: "invoice",
    recipient_name: "Rita Recebedora",
  });
  created.push(delivery);
  return delivery;
}
const serverView = (d: Delivery) => owner.call<Delivery>("GET", `/api/v1/deliveries/${d.id}`);
const record = (d: Delivery) => owner.call<Record>("GET", `/api/v1/deliveries/${d.id}/dispatch`);

/** Dino, 300 m from the pickup: online (a position in the last 2 minutes; one accepted per 10 s). */
async function dinoNearby() {
  const res = await dino.http.put("/api/v1/locations/me", {
    headers: { authorization: `Bearer ${dino.token}` },
    data: north(CAMPINAS, 0.3),
  });
  expect([200, 429], await res.text()).toContain(res.status());
}

/** Dora's app on a phone at the pickup, available for offers (which sends her position). */
async function doraPhone(browser: Browser): Promise<Page> {
  const context = await newContext(browser, {
    viewport: { width: 390, height: 844 },
    geolocation: { latitude: CAMPINAS.lat, longitude: CAMPINAS.lng },
    permissions: ["geolocation"],
  });
  const page = await context.newPage();
  await signIn(page, "driver1@demo.test", "demo-driver-pass");
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  const available = page.getByRole("switch", { name: "Disponível para ofertas" });
  await expect(available).not.toBeChecked();
  await available.check();
  await expect(page.getByRole("status", { name: "Localização" })).toContainText("Localização enviada às", {
    timeout: 20_000,
  });
  return page;
}

const offerOn = (phone: Page, d: Delivery) =>
  phone.getByRole("region", { name: "Entregas disponíveis" }).getByRole("listitem").filter({
    hasText: d.destination_address,
  });
const boardRow = (where: Page | Locator, d: Delivery) => where.locator(`li[data-delivery="${d.id}"]`);

/** A driver's load as the board words it, from the server's count of its accepted and in-progress deliveries. */
async function loadOf(driverId: string): Promise<string> {
  let count = 0;
  for (const status of ["accepted", "in_progress"]) {
    const page = await owner.call<{ items: unknown[] }>(
      "GET",
      `/api/v1/deliveries?driver_id=${driverId}&status=${status}&limit=100`,
    );
    count += page.items.length;
  }
  return count === 0 ? "sem entregas" : count === 1 ? "1 entrega" : `${count} entregas`;
}

test("the dispatcher offers a delivery on the board, the driver takes it on a phone, three are assigned at once", async ({ browser }) => {
  test.setTimeout(180_000);
  const desk = await newContext(browser);
  const board = await desk.newPage();
  await signIn(board, "owner@demo.test", "demo-owner-pass");
  await expect(board.getByRole("heading", { name: "Entregas" })).toBeVisible();

  // The rules: offers with a 60 s deadline, one driver at a time, up to 5 deliveries each (whatever the journeys
  // before left with Dora and Dino), within 1,5 km (a decimal comma).
  await board.getByRole("link", { name: "Regras de despacho" }).click();
  await expect(board.getByRole("heading", { name: "Regras de despacho" })).toBeVisible();
  await expect(board.getByRole("radio", { name: "Para todos" })).toBeChecked();
  await board.getByRole("radio", { name: "Oferta com prazo" }).check();
  const timeout = board.getByLabel("Prazo para responder a uma oferta (segundos)");
  await timeout.fill("700");
  await board.getByLabel("Entregadores por rodada de ofertas").fill("1");
  await board.getByLabel("Entregas ao mesmo tempo por entregador").fill("5");
  await board.getByLabel("Distância máxima até a retirada (km)").fill("1,5");
  await board.getByRole("button", { name: "Salvar" }).click();
  await expect(board.getByText("Digite um valor até 600.")).toBeVisible();
  expect((await owner.call<{ mode: string }>("GET", "/api/v1/dispatch/settings")).mode).toBe("broadcast");
  await timeout.fill("60");
  await board.getByRole("button", { name: "Salvar" }).click();
  await expect(board.getByText("Regras salvas: modo “Oferta com prazo”.")).toBeVisible();
  expect(await owner.call("GET", "/api/v1/dispatch/settings")).toEqual({
    mode: "offer",
    offer_timeout_s: 60,
    offer_batch: 1,
    max_active_per_driver: 5,
    max_distance_km: 1.5,
  });
  await expectLabelled(board);
  await shot(board, "1280-dispatch-rules");

  // Dora opens the app and says she is available; the board sees her online, Dino too.
  const phone = await doraPhone(browser);
  await dinoNearby();
  await board.getByRole("link", { name: "Despacho", exact: true }).click();
  await expect(board.getByRole("heading", { name: "Quadro de despacho" })).toBeVisible();
  const online = board.getByRole("region", { name: /^Entregadores online/ });
  await expect(online.getByText(`Dora Driver: ${await loadOf(doraId)}, localização às`)).toBeVisible({
    timeout: 20_000,
  });
  await expect(online.getByText(`Dino Driver: ${await loadOf(dinoId)}, localização às`)).toBeVisible();

  // A delivery goes out as an offer to the nearest driver: the board shows it offered, with its record.
  const b = await createDelivery("das Ofertas B");
  const rowB = boardRow(board, b);
  await expect(rowB).toContainText("Oferecida", { timeout: 15_000 });
  await rowB.getByRole("button", { name: `Ver o despacho da entrega para ${b.destination_address}` }).click();
  const history = board.getByRole("region", { name: `Despacho da entrega para ${b.destination_address}` });
  await expect(history).toContainText("Oferecida a Dora Driver.");
  await expect(history).toContainText("Ordenados pelo tempo de viagem até a retirada");
  const dora = history.getByRole("row").filter({ hasText: "Dora Driver" });
  await expect(dora).toContainText("1º");
  await expect(dora).toContainText("Elegível");
  await expect(history.getByRole("row").filter({ hasText: "Dino Driver" })).toContainText("2º");
  await expect(history.getByRole("listitem").filter({ hasText: "Dora Driver, rodada 1" })).toContainText(
    "aguardando resposta até",
  );
  await expect(board).toHaveURL(new RegExp(`history=${b.id}`));
  await expectLabelled(board);
  await expectNoSidewaysScroll(board);
  await shot(board, "1280-dispatch-offered");

  // On the phone: the offer with the driver's pay and a countdown; Dora takes it.
  const offer = offerOn(phone, b);
  await expect(offer).toContainText("Oferta para você");
  await expect(offer.getByRole("timer")).toHaveText(/^Responda em 0:[0-5]\d \(até \d\d:\d\d:\d\d\)$/);
  await expect(offer).toContainText("Seu ganho: R$");
  await expect(offer.getByRole("button", { name: "Recusar" })).toBeVisible();
  await expectNoSidewaysScroll(phone);
  await shot(phone, "390-driver-offer");
  // The offer also took the whole screen (alerts.spec.ts): Dora takes it there.
  await phone.getByRole("alertdialog", { name: "Nova oferta de entrega" }).getByRole("button", { name: "Aceitar" })
    .click();
  await expect(phone.getByRole("region", { name: "Suas entregas" })).toContainText(b.destination_address);
  await expect.poll(async () => (await serverView(b)).driver_id).toBe(doraId);
  expect(await serverView(b)).toMatchObject({ status: "accepted", dispatch_status: "assigned" });

  // The board shows it taken, live, and the record the offer accepted.
  await expect(rowB).toContainText("Aceita");
  await expect(rowB).toContainText("Entregador: Dora Driver");
  await expect(history.getByRole("listitem").filter({ hasText: "Dora Driver, rodada 1" })).toContainText("aceita às");
  await expect(online.getByText(`Dora Driver: ${await loadOf(doraId)}, localização às`)).toBeVisible();

  // Three deliveries nobody is near: the unassigned lane asks for the dispatcher, who gives all three to Dino.
  const far = [
    await createDelivery("Longe C", JUNDIAI),
    await createDelivery("Longe D", JUNDIAI),
    await createDelivery("Longe E", JUNDIAI),
  ];
  const lane = board.getByRole("region", { name: /^Sem entregador/ });
  for (const d of far) await expect(boardRow(lane, d)).toBeVisible({ timeout: 15_000 });
  await expect(lane).toContainText("Ninguém disponível aceitou estas");
  await boardRow(lane, far[0]).getByRole("button", { name: /^Ver o despacho/ }).click();
  const farHistory = board.getByRole("region", { name: `Despacho da entrega para ${far[0].destination_address}` });
  await expect(farHistory).toContainText("Ninguém disponível: ficou aberta a todos os entregadores.");
  await expect(farHistory.getByRole("row").filter({ hasText: "Dino Driver" })).toContainText(
    "Fora: longe demais da retirada",
  );
  for (const d of far) await lane.getByLabel(`Selecionar a entrega para ${d.destination_address}`).check();
  await expect(board.getByText("3 entregas selecionadas.")).toBeVisible();
  await board.getByLabel("Atribuir a", { exact: true }).selectOption(dinoId);
  await board.getByRole("button", { name: "Atribuir 3 entregas" }).click();
  const results = board.getByRole("heading", { name: "3 de 3 atribuídas" });
  await expect(results).toBeVisible();
  for (const d of far) {
    await expect(board.getByText(`Entrega para ${d.destination_address}: atribuída a Dino Driver.`)).toBeVisible();
  }
  for (const d of far) expect(await serverView(d)).toMatchObject({ status: "accepted", driver_id: dinoId });
  for (const d of far) await expect(boardRow(lane, d)).toHaveCount(0);
  for (const d of far) await expect(boardRow(board, d)).toContainText("Entregador: Dino Driver");
  await expect(online.getByText(`Dino Driver: ${await loadOf(dinoId)}, localização às`)).toBeVisible();
  await expectNoSidewaysScroll(board);
  await shot(board, "1280-dispatch-board");

  // The same board on a 320 px phone: no sideways scrolling, the map and the lists one above the other.
  await board.setViewportSize({ width: 320, height: 640 });
  await expectNoSidewaysScroll(board);
  await shot(board, "320-dispatch-board");

  for (const d of [b, ...far]) {
    await owner.call("POST", `/api/v1/deliveries/${d.id}/cancel`, { reason: "fim do teste" });
  }
  await phone.context().close();
  await desk.close();
});

test("an offer whose deadline passes leaves the phone; an accept kept offline past the deadline is told", async ({ browser }) => {
  test.setTimeout(120_000);
  await owner.call("PUT", "/api/v1/dispatch/settings", {
    mode: "offer",
    offer_timeout_s: 10,
    offer_batch: 1,
    max_active_per_driver: 5,
    max_distance_km: 1.5,
  });
  const phone = await doraPhone(browser);
  await dinoNearby();

  // Unanswered, the offer counts down and leaves the screen at its deadline; the next driver gets it.
  const a = await createDelivery("do Prazo A");
  const offer = offerOn(phone, a);
  await expect(offer.getByRole("timer")).toHaveText(/^Responda em 0:(0\d|10) /, { timeout: 15_000 });
  await expect(offer).toHaveCount(0, { timeout: 15_000 });
  // The server expires it within 2 s of the deadline (its job), and offers it to Dino.
  await expect.poll(async () => (await record(a)).offers.map((o) => [o.driver_id, o.outcome]), { timeout: 10_000 })
    .toEqual([[doraId, "expired"], [dinoId, null]]);
  await owner.call("POST", `/api/v1/deliveries/${a.id}/cancel`, { reason: "fim do teste" });
  await expect(offer).toHaveCount(0);

  // Accepted with no connection: the phone keeps the accept and says the offer runs out; past the deadline the
  // company has given it to the next driver, and the phone says so when the connection is back.
  const late = await createDelivery("do Prazo B");
  const lateOffer = offerOn(phone, late);
  await expect(lateOffer.getByRole("timer")).toBeVisible({ timeout: 15_000 });
  await phone.context().setOffline(true);
  // Taken on the screen the offer fills (alerts.spec.ts).
  await phone.getByRole("alertdialog", { name: "Nova oferta de entrega" }).getByRole("button", { name: "Aceitar" })
    .click();
  const mine = phone.getByRole("region", { name: "Suas entregas" }).getByRole("listitem").filter({
    hasText: late.destination_address,
  });
  await expect(mine).toContainText("Aguardando conexão: o aceite vai assim que a conexão voltar.");
  await expect(mine).toContainText(/A oferta vale até \d\d:\d\d:\d\d \(faltam 0:\d\d\)/);
  await expect(mine).toContainText("A oferta venceu às", { timeout: 15_000 });
  await shot(phone, "390-driver-offer-offline");
  await expect.poll(async () => (await record(late)).offers.find((o) => o.driver_id === doraId)?.outcome, {
    timeout: 10_000,
  }).toBe("expired");
  await phone.context().setOffline(false);
  const notice = phone.getByRole("region", { name: "Avisos" });
  await expect(notice).toContainText(
    `A oferta da entrega para ${late.destination_address} expirou antes de o seu aceite chegar à empresa: a entrega não ficou com você.`,
    { timeout: 30_000 },
  );
  await expect(mine).toHaveCount(0);
  expect((await serverView(late)).driver_id).not.toBe(doraId);
  await expectNoSidewaysScroll(phone);
  await shot(phone, "390-driver-offer-expired");
  await phone.context().close();
});

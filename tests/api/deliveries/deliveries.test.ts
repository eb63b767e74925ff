// Deliveries over HTTP with the gateway and routing fakes (issue 4): quotes,
// creation (Pix and invoice), the whole life of a Pix delivery from its charge
// to the driver's credit, cancellation, refused moves, concurrent accepts, the
// driver's scope, lists and pages, failures of the routing service and of the
// gateway that leave nothing behind, and the realtime offer to drivers.
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, type Member, stack, type TestCompany } from "../../support/api.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";
import {
  createInvoiceDelivery,
  createPixDelivery,
  deliveryBody,
  deliveryIn,
  type DeliveryState,
  moveDelivery,
  newDocument,
  PAULISTA,
  SE,
} from "../../support/deliveries.ts";
import { gateway, routing } from "../../support/fakes.ts";
import { supabaseClient } from "../../support/supabase.ts";

const NEARBY = { lat: -23.5510, lng: -46.6340 };
const CAMPINAS = { lat: -22.9056, lng: -47.0608 };

let a: TestCompany;
let b: TestCompany;
let secretA: string;
let apiKeyA: string;

beforeAll(async () => {
  [a, b] = await Promise.all([createCompany("Deliveries A"), createCompany("Deliveries B")]);
  ({ webhookSecret: secretA, apiKey: apiKeyA } = await configureGateway(a));
});

afterEach(async () => {
  await gateway.reset();
  await routing.reset();
});

const get = (who: Member, id: string) => api(`/api/v1/deliveries/${id}`, { token: who.token });

async function countDeliveries(companyId: string): Promise<number> {
  const [row] = await db()`select count(*)::int as n from public.deliveries where company_id = ${companyId}`;
  return row.n;
}

/** The default prices (5.00 + 1.50/km, at least 8.00) in integer cents, rounding half cents up. */
function expectedPrice(distanceM: number): number {
  const cents = 500 + Math.floor((150 * distanceM + 500) / 1000);
  return Math.max(800, cents) / 100;
}

/** The gateway's record of the payment moves to `status`, then the gateway sends its signed event. */
async function paymentEvent(
  event: string,
  payment: { id: string; externalReference: string; value?: number },
  status: string,
) {
  await gateway.setStatus(payment.id, status);
  return await webhook(companyWebhook(a), {
    event,
    payment: { object: "payment", billingType: "PIX", status, value: payment.value ?? 10, ...payment },
  }, secretA);
}

/** Calls the database function the webhooks call, as the service role. */
async function applyPaymentEvent(
  companyId: string | null,
  event: string,
  paymentId: string | null,
  reference: string | null,
) {
  return await db().begin(async (tx) => {
    await tx`set local role service_role`;
    const [row] =
      await tx`select public.apply_payment_event(${companyId}, ${event}, ${paymentId}, ${reference}) as result`;
    return row.result as { result: string; delivery_id: string | null; detail: string };
  });
}

describe("POST /api/v1/routes/quote", () => {
  it("measures the route and prices it with the company's prices", async () => {
    const res = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: SE, destination: CAMPINAS },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      distance_m: expect.any(Number),
      duration_s: expect.any(Number),
      price: expect.any(Number),
    });
    expect(Number.isInteger(res.body.distance_m) && Number.isInteger(res.body.duration_s)).toBe(true);
    expect(res.body.distance_m).toBeGreaterThan(80_000);
    expect(res.body.price).toBe(expectedPrice(res.body.distance_m));
  });

  it("charges the minimum fee for a short route", async () => {
    const res = await api("/api/v1/routes/quote", { token: a.admin.token, body: { origin: SE, destination: NEARBY } });
    expect(res.status).toBe(200);
    expect(res.body.price).toBe(8);
  });

  it("follows a change of prices", async () => {
    const company = await createCompany("Deliveries prices");
    const put = await api("/api/v1/prices", {
      method: "PUT",
      token: company.owner.token,
      body: { base_fee: 3.33, per_km: 0.99, minimum_fee: 1, driver_share: 0.5 },
    });
    expect(put.status).toBe(200);
    const res = await api("/api/v1/routes/quote", {
      token: company.legacyAdmin.token,
      body: { origin: SE, destination: CAMPINAS },
    });
    expect(res.status).toBe(200);
    const cents = 333 + Math.floor((99 * res.body.distance_m + 500) / 1000);
    expect(res.body.price).toBe(cents / 100);
  });

  it("is not for drivers", async () => {
    const res = await api("/api/v1/routes/quote", {
      token: a.driver.token,
      body: { origin: SE, destination: PAULISTA },
    });
    expect(res.status).toBe(403);
    expect((await routing.state()).requests).toBe(0);
  });

  it("validates the coordinates", async () => {
    const res = await api("/api/v1/routes/quote", { token: a.owner.token, body: { origin: { lat: 91, lng: 0 } } });
    expect(res.status).toBe(400);
    expect(res.body.detail.map((item: { loc: unknown[] }) => item.loc)).toEqual(
      expect.arrayContaining([["body", "origin", "lat"], ["body", "destination"]]),
    );
  });

  it.each([
    ["down", () => routing.down()],
    ["answering an error", () => routing.set("error")],
  ])("is 502 when the routing service is %s", async (_, breakRouting) => {
    await breakRouting();
    const res = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: SE, destination: PAULISTA },
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/^Routing service unavailable/);
  });

  it("is 502 when the routing service takes more than 5 s", async () => {
    await routing.slow(7_000);
    const started = Date.now();
    const res = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: SE, destination: PAULISTA },
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toBe("Routing service unavailable: timed out");
    expect(Date.now() - started).toBeLessThan(6_500);
  });
});

describe("POST /api/v1/deliveries with Pix", () => {
  it("charges the client at the gateway and answers awaiting_payment with the Pix code", async () => {
    const body = deliveryBody({
      customer: { name: "Maria Silva", document: "123.456.789-09", email: "maria@example.com" },
    });
    const res = await api("/api/v1/deliveries", { token: a.owner.token, body });
    expect(res.status).toBe(201);
    const delivery = res.body;
    expect(delivery).toMatchObject({
      company_id: a.companyId,
      status: "awaiting_payment",
      payment_status: "pending",
      payment_method: "pix",
      origin_address: body.origin_address,
      origin: SE,
      destination_address: body.destination_address,
      destination: PAULISTA,
      driver_id: null,
      recipient_name: "Ana",
      recipient_phone: "+55 11 99999-0000",
      notes: "Portaria",
      cancel_reason: null,
      accepted_at: null,
      started_at: null,
      completed_at: null,
      cancelled_at: null,
    });
    expect(delivery.price).toBe(expectedPrice(delivery.distance_m));

    const state = await gateway.state();
    expect(state.customers).toEqual([
      expect.objectContaining({ name: "Maria Silva", cpfCnpj: "12345678909", email: "maria@example.com" }),
    ]);
    expect(state.payments).toHaveLength(1);
    const [payment] = state.payments;
    const tomorrow = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(
      Date.now() + 86_400_000,
    );
    expect(payment).toMatchObject({
      customer: state.customers[0].id,
      billingType: "PIX",
      value: delivery.price,
      dueDate: tomorrow,
      externalReference: delivery.id,
    });
    expect(state.log.every((entry) => entry.accessToken === apiKeyA)).toBe(true);
    expect(delivery.payment).toEqual({
      gateway_payment_id: payment.id,
      pix_copy_paste: expect.stringContaining(payment.id),
      pix_qr_code_image: Buffer.from(`qr:${payment.id}`).toString("base64"),
      due_date: tomorrow,
    });
    expect((await get(a.admin, delivery.id)).body).toEqual(delivery);
  });

  it("reuses the gateway customer of a document", async () => {
    const customer = { name: "Repeat Client", document: newDocument() };
    expect((await createPixDelivery(a, { customer })).status).toBe(201);
    expect((await createPixDelivery(a, { customer }, a.legacyAdmin)).status).toBe(201);
    const state = await gateway.state();
    expect(state.log.filter((entry) => entry.path === "/v3/customers")).toHaveLength(1);
    expect(state.payments.map((p) => p.customer)).toEqual([state.customers[0].id, state.customers[0].id]);
  });

  it("costs what the quote said, to the cent", async () => {
    for (const destination of [NEARBY, PAULISTA, CAMPINAS]) {
      const quote = await api("/api/v1/routes/quote", { token: a.owner.token, body: { origin: SE, destination } });
      const pix = await createPixDelivery(a, { destination });
      const invoice = await createInvoiceDelivery(a, { destination });
      expect(pix.status).toBe(201);
      expect({ distance_m: pix.body.distance_m, duration_s: pix.body.duration_s, price: pix.body.price }).toEqual(
        quote.body,
      );
      expect({ distance_m: invoice.distance_m, duration_s: invoice.duration_s, price: invoice.price }).toEqual(
        quote.body,
      );
    }
  });

  it("needs the customer", async () => {
    const res = await createPixDelivery(a, { customer: undefined });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([{
      type: "missing",
      loc: ["body", "customer"],
      msg: "Field required",
      input: null,
    }]);
  });

  it("needs a CPF or CNPJ", async () => {
    const res = await createPixDelivery(a, { customer: { name: "X", document: "123" } });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].loc).toEqual(["body", "customer", "document"]);
  });

  it("is 422 for a company without gateway configuration, and writes nothing", async () => {
    const res = await createPixDelivery(b);
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe("payment gateway not configured");
    expect(await countDeliveries(b.companyId)).toBe(0);
    expect((await routing.state()).requests).toBe(0);
  });

  it.each([
    ["down", () => gateway.down()],
    ["failing", () => gateway.set("fail")],
  ])("is 502 when the gateway is %s, and leaves no delivery behind", async (_, breakGateway) => {
    const before = await countDeliveries(a.companyId);
    await breakGateway();
    const res = await createPixDelivery(a);
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/^Payment gateway unavailable/);
    expect(await countDeliveries(a.companyId)).toBe(before);
  });

  it("is 422 with the gateway's reason when it refuses the charge, and leaves no delivery behind", async () => {
    const before = await countDeliveries(a.companyId);
    await gateway.set("reject");
    const res = await createPixDelivery(a);
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe("Payment gateway refused the request: Operation rejected by the gateway");
    expect(await countDeliveries(a.companyId)).toBe(before);
  });

  it("is 502 when the routing service is down, and charges nobody", async () => {
    const before = await countDeliveries(a.companyId);
    await routing.down();
    const res = await createPixDelivery(a);
    expect(res.status).toBe(502);
    expect(res.body.detail).toMatch(/^Routing service unavailable/);
    expect(await countDeliveries(a.companyId)).toBe(before);
    expect((await gateway.state()).log).toEqual([]);
  });

  it("is 502 when the routing service is slow, and writes nothing", async () => {
    const before = await countDeliveries(a.companyId);
    await routing.slow(6_000);
    const res = await api("/api/v1/deliveries", {
      token: a.owner.token,
      body: deliveryBody({ payment_method: "invoice", customer: undefined }),
    });
    expect(res.status).toBe(502);
    expect(res.body.detail).toBe("Routing service unavailable: timed out");
    expect(await countDeliveries(a.companyId)).toBe(before);
  });

  it("is not for drivers", async () => {
    const res = await createPixDelivery(a, {}, a.driver);
    expect(res.status).toBe(403);
    expect((await gateway.state()).log).toEqual([]);
  });
});

describe("POST /api/v1/deliveries with invoice", () => {
  it("is pending at once, invoiced, without a charge", async () => {
    const delivery = await createInvoiceDelivery(a);
    expect(delivery).toMatchObject({
      status: "pending",
      payment_status: "invoiced",
      payment_method: "invoice",
      payment: null,
    });
    expect((await gateway.state()).log).toEqual([]);
  });

  it("takes null for the optional fields, as the API returns them", async () => {
    const delivery = await createInvoiceDelivery(a, {
      recipient_name: null,
      recipient_phone: null,
      notes: null,
      driver_id: null,
    });
    expect(delivery).toMatchObject({ status: "pending", recipient_name: null, recipient_phone: null, notes: null });
  });

  it("with driver_id is that driver's at once", async () => {
    const delivery = await createInvoiceDelivery(a, { driver_id: a.driver2.driverId });
    expect(delivery).toMatchObject({
      status: "accepted",
      driver_id: a.driver2.driverId,
      accepted_at: expect.any(String),
    });
  });

  it("refuses another company's driver (404)", async () => {
    const res = await api("/api/v1/deliveries", {
      token: a.owner.token,
      body: deliveryBody({ payment_method: "invoice", driver_id: b.driver.driverId }),
    });
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe("driver not found");
  });
});

describe("the life of a Pix delivery", () => {
  it("is paid, offered, accepted, started, completed, credited and confirmed", async () => {
    const created = (await createPixDelivery(a)).body;
    const payment = { id: created.payment.gateway_payment_id, externalReference: created.id, value: created.price };

    // Unpaid: no driver sees it.
    expect((await get(a.driver, created.id)).status).toBe(404);

    const received = await paymentEvent("PAYMENT_RECEIVED", payment, "RECEIVED");
    expect(received.status).toBe(200);
    expect((await get(a.owner, created.id)).body).toMatchObject({ status: "pending", payment_status: "received" });

    // Paid: every driver of the company sees it; another company's does not.
    for (const driver of [a.driver, a.driver2]) {
      const list = await api("/api/v1/deliveries?status=pending&limit=100", { token: driver.token });
      expect(list.body.items.map((d: { id: string }) => d.id)).toContain(created.id);
    }
    expect((await get(b.driver, created.id)).status).toBe(404);

    const accepted = await moveDelivery(a.driver, created.id, "accept");
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ status: "accepted", driver_id: a.driver.driverId });
    expect((await get(a.driver2, created.id)).status).toBe(404);

    expect((await moveDelivery(a.driver, created.id, "start")).body).toMatchObject({
      status: "in_progress",
      started_at: expect.any(String),
    });
    const completed = await moveDelivery(a.driver, created.id, "complete");
    expect(completed.body).toMatchObject({ status: "completed", completed_at: expect.any(String) });

    const credit = Math.floor((Math.round(created.price * 100) * 8 + 5) / 10) / 100;
    const entries =
      await db()`select kind, amount::float8 as amount, driver_id from public.wallet_entries where delivery_id = ${created.id}`;
    expect(entries).toEqual([{ kind: "delivery_credit", amount: credit, driver_id: a.driver.driverId }]);

    expect((await paymentEvent("PAYMENT_CONFIRMED", payment, "CONFIRMED")).status).toBe(200);
    const final = (await get(a.driver, created.id)).body;
    expect(final).toMatchObject({ status: "completed", payment_status: "confirmed" });

    const history = await db()`select trigger, from_status, to_status from public.delivery_history
                               where delivery_id = ${created.id} order by id`;
    expect(history.map((h) => `${h.trigger}:${h.from_status ?? "-"}>${h.to_status}`)).toEqual([
      "create:->awaiting_payment",
      "payment_received:awaiting_payment>pending",
      "accept:pending>accepted",
      "start:accepted>in_progress",
      "complete:in_progress>completed",
      "payment_confirmed:completed>completed",
    ]);
  });

  it("a refund after completion cancels it and reverses the driver's credit", async () => {
    const created = (await createPixDelivery(a)).body;
    expect(
      (await applyPaymentEvent(a.companyId, "PAYMENT_RECEIVED", created.payment.gateway_payment_id, created.id)).result,
    )
      .toBe("processed");
    for (const action of ["accept", "start", "complete"]) {
      expect((await moveDelivery(a.driver2, created.id, action)).status).toBe(200);
    }

    expect((await applyPaymentEvent(null, "PAYMENT_REFUNDED", created.payment.gateway_payment_id, null)).result).toBe(
      "processed",
    );
    expect((await applyPaymentEvent(null, "PAYMENT_REFUNDED", created.payment.gateway_payment_id, null)).result).toBe(
      "duplicate",
    );
    expect((await get(a.driver2, created.id)).body).toMatchObject({ status: "cancelled", payment_status: "refunded" });
    const entries = await db()`select kind, amount::float8 as amount from public.wallet_entries
                               where delivery_id = ${created.id} order by created_at`;
    expect(entries.map((e) => e.kind)).toEqual(["delivery_credit", "credit_reversal"]);
    expect(entries[0].amount + entries[1].amount).toBe(0);
  });

  it("an overdue charge cancels the unpaid delivery", async () => {
    const created = (await createPixDelivery(a)).body;
    const payment = { id: created.payment.gateway_payment_id, externalReference: created.id };
    expect((await paymentEvent("PAYMENT_OVERDUE", payment, "OVERDUE")).status).toBe(200);
    expect((await get(a.owner, created.id)).body).toMatchObject({ status: "cancelled", payment_status: "overdue" });
  });
});

describe("cancel", () => {
  it("cancels with a reason, once", async () => {
    const delivery = await createInvoiceDelivery(a);
    const res = await moveDelivery(a.owner, delivery.id, "cancel", { reason: "client gave up" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "cancelled",
      cancel_reason: "client gave up",
      cancelled_at: expect.any(String),
    });
    const again = await moveDelivery(a.owner, delivery.id, "cancel");
    expect(again.status).toBe(422);
    expect(again.body.detail).toBe("delivery cannot move from cancelled to cancelled");
  });

  it("takes no body at all", async () => {
    const delivery = (await createPixDelivery(a)).body;
    const res = await moveDelivery(a.legacyAdmin, delivery.id, "cancel");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "cancelled", cancel_reason: null });
  });

  it("removes the unpaid Pix charge at the gateway, so the client can no longer pay for it", async () => {
    const delivery = (await createPixDelivery(a)).body;
    const res = await moveDelivery(a.owner, delivery.id, "cancel");
    expect(res.body).toMatchObject({ status: "cancelled", payment_status: "pending" });
    const charge = (await gateway.state()).payments.find((p) => p.id === delivery.payment.gateway_payment_id);
    expect(charge).toMatchObject({ status: "DELETED", deleted: true });
    expect((await gateway.state()).log.filter((r) => r.method === "DELETE")).toEqual([
      expect.objectContaining({ path: `/v3/payments/${delivery.payment.gateway_payment_id}`, accessToken: apiKeyA }),
    ]);
  });

  it("stays cancelled when the gateway cannot remove the charge, and says so in the log", async () => {
    const delivery = (await createPixDelivery(a)).body;
    await gateway.down();
    const res = await moveDelivery(a.owner, delivery.id, "cancel");
    expect(res).toMatchObject({ status: 200, body: { status: "cancelled" } });
    await gateway.up();
    // The stack's stderr reaches its log file through the test runner's main process: give it a moment.
    let log = "";
    for (let i = 0; i < 100 && !log.includes(`"event":"pix_charge_not_removed"`); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 30));
      log = readFileSync(stack().logFile, "utf8");
    }
    expect(log).toContain(`"event":"pix_charge_not_removed"`);
    expect(log).toContain(delivery.payment.gateway_payment_id);
  });

  it("does not ask the gateway about a paid or an invoice delivery", async () => {
    const invoice = await createInvoiceDelivery(a);
    expect((await moveDelivery(a.owner, invoice.id, "cancel")).status).toBe(200);
    const paid = (await createPixDelivery(a)).body;
    await applyPaymentEvent(a.companyId, "PAYMENT_RECEIVED", paid.payment.gateway_payment_id, paid.id);
    expect((await moveDelivery(a.owner, paid.id, "cancel")).body).toMatchObject({
      status: "cancelled",
      payment_status: "received",
    });
    expect((await gateway.state()).log.filter((r) => r.method === "DELETE")).toEqual([]);
  });

  it("is for managers of the company only", async () => {
    const delivery = await createInvoiceDelivery(a);
    expect((await moveDelivery(a.driver, delivery.id, "cancel")).status).toBe(403);
    expect((await moveDelivery(b.owner, delivery.id, "cancel")).status).toBe(404);
    expect((await get(a.owner, delivery.id)).body.status).toBe("pending");
  });
});

describe("refused moves", () => {
  const TARGET: Record<string, string> = {
    accept: "accepted",
    assign: "accepted",
    start: "in_progress",
    complete: "completed",
    cancel: "cancelled",
  };
  const refused: [string, string][] = [
    ["accept", "awaiting_payment"],
    ["accept", "accepted"],
    ["accept", "in_progress"],
    ["accept", "completed"],
    ["accept", "cancelled"],
    ["assign", "awaiting_payment"],
    ["assign", "accepted"],
    ["assign", "in_progress"],
    ["assign", "completed"],
    ["assign", "cancelled"],
    ["start", "awaiting_payment"],
    ["start", "pending"],
    ["start", "in_progress"],
    ["start", "completed"],
    ["start", "cancelled"],
    ["complete", "awaiting_payment"],
    ["complete", "pending"],
    ["complete", "accepted"],
    ["complete", "completed"],
    ["complete", "cancelled"],
    ["cancel", "in_progress"],
    ["cancel", "completed"],
    ["cancel", "cancelled"],
  ];

  it.each(refused)("%s from %s is 422 naming both states", async (action, state) => {
    const id = await deliveryIn(a, state as DeliveryState);
    const who = action === "assign" || action === "cancel" ? a.owner : a.driver;
    const res = await moveDelivery(who, id, action, action === "assign" ? { driver_id: a.driver.driverId } : undefined);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: `delivery cannot move from ${state} to ${TARGET[action]}` });
  });

  it("assign is for owners and admins, and only to the company's active drivers", async () => {
    const { id } = await createInvoiceDelivery(a);
    expect((await moveDelivery(a.legacyAdmin, id, "assign", { driver_id: a.driver.driverId })).status).toBe(403);
    expect((await moveDelivery(a.owner, id, "assign", { driver_id: b.driver.driverId })).status).toBe(404);
    expect((await moveDelivery(a.owner, id, "assign", {})).status).toBe(400);
    const res = await moveDelivery(a.admin, id, "assign", { driver_id: a.driver2.driverId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "accepted", driver_id: a.driver2.driverId });
    expect((await moveDelivery(a.driver, id, "start")).status).toBe(404);
    expect((await moveDelivery(a.driver2, id, "start")).status).toBe(200);
  });

  it("unknown deliveries are 404, malformed ids 400", async () => {
    expect((await moveDelivery(a.driver, "00000000-0000-4000-8000-000000000000", "accept")).status).toBe(404);
    expect((await moveDelivery(a.driver, "not-a-uuid", "accept")).status).toBe(400);
  });
});

describe("concurrent accepts", () => {
  it("one driver wins, the other gets 422, every time", async () => {
    for (let round = 0; round < 5; round++) {
      const { id } = await createInvoiceDelivery(a);
      const results = await Promise.all([moveDelivery(a.driver, id, "accept"), moveDelivery(a.driver2, id, "accept")]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
      const winner = results.find((r) => r.status === 200)!.body.driver_id;
      expect(results.find((r) => r.status === 422)!.body.detail).toBe("another driver already took this delivery");
      const [row] = await db()`select driver_id, (select count(*)::int from public.delivery_history h
                                 where h.delivery_id = d.id and h.trigger = 'accept') as accepts
                               from public.deliveries d where d.id = ${id}`;
      expect(row).toEqual({ driver_id: winner, accepts: 1 });
    }
  });
});

describe("GET /api/v1/deliveries", () => {
  let c: TestCompany;
  beforeAll(async () => {
    c = await createCompany("Deliveries lists");
    await configureGateway(c);
  });

  const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((d) => d.id);

  it("gives a driver the pending ones and its own, never another driver's or an unpaid one", async () => {
    const open = await createInvoiceDelivery(c);
    const mine = await createInvoiceDelivery(c, { driver_id: c.driver.driverId });
    const theirs = await createInvoiceDelivery(c, { driver_id: c.driver2.driverId });
    const unpaid = (await createPixDelivery(c)).body;
    const foreign = await createInvoiceDelivery(b);

    const driverList = await api("/api/v1/deliveries?limit=100", { token: c.driver.token });
    expect(driverList.status).toBe(200);
    expect(ids(driverList)).toEqual([mine.id, open.id]);
    expect(ids(await api("/api/v1/deliveries?limit=100", { token: c.driver2.token }))).toEqual([theirs.id, open.id]);
    for (const manager of [c.owner, c.admin, c.legacyAdmin]) {
      expect(ids(await api("/api/v1/deliveries?limit=100", { token: manager.token })))
        .toEqual([unpaid.id, theirs.id, mine.id, open.id]);
    }
    expect(ids(await api("/api/v1/deliveries?limit=100", { token: b.owner.token }))).toContain(foreign.id);
    expect(ids(await api("/api/v1/deliveries?limit=100", { token: b.owner.token }))).not.toContain(open.id);
  });

  it("filters by status and driver", async () => {
    const byStatus = await api("/api/v1/deliveries?status=awaiting_payment&limit=100", { token: c.owner.token });
    expect(byStatus.body.items.length).toBeGreaterThan(0);
    expect(byStatus.body.items.every((d: { status: string }) => d.status === "awaiting_payment")).toBe(true);
    const byDriver = await api(`/api/v1/deliveries?driver_id=${c.driver2.driverId}`, { token: c.owner.token });
    expect(byDriver.body.items.length).toBeGreaterThan(0);
    expect(byDriver.body.items.every((d: { driver_id: string }) => d.driver_id === c.driver2.driverId)).toBe(true);
    const other = await api(`/api/v1/deliveries?driver_id=${c.driver2.driverId}`, { token: c.driver.token });
    expect(other.body).toEqual({ items: [], next_cursor: null });
  });

  it("validates its query", async () => {
    expect((await api("/api/v1/deliveries?status=lost", { token: c.owner.token })).status).toBe(400);
    expect((await api("/api/v1/deliveries?limit=0", { token: c.owner.token })).status).toBe(400);
    expect((await api("/api/v1/deliveries?limit=101", { token: c.owner.token })).status).toBe(400);
    expect((await api("/api/v1/deliveries?driver_id=nope", { token: c.owner.token })).status).toBe(400);
    const badCursor = await api("/api/v1/deliveries?cursor=zzz", { token: c.owner.token });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.detail).toBe("invalid cursor");
  });

  it("pages stably while deliveries are created", async () => {
    const all = ids(await api("/api/v1/deliveries?limit=100", { token: c.owner.token }));
    expect(all.length).toBeGreaterThanOrEqual(4);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { id: string }[]; next_cursor: string | null } } = await api(
        `/api/v1/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { token: c.owner.token },
      );
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page));
      cursor = page.body.next_cursor;
      await createInvoiceDelivery(c); // arrives between pages, newer than everything listed
    } while (cursor);
    expect(seen).toEqual(all);
  });
});

describe("realtime", () => {
  const clients: ReturnType<typeof supabaseClient>[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.removeAllChannels()));
  });

  async function listen(topic: string, token: string, events: string[]) {
    const supabase = supabaseClient();
    clients.push(supabase);
    await supabase.realtime.setAuth(token);
    const inbox: { event: string; payload: { id: string; status: string } }[] = [];
    const channel = supabase.channel(topic, { config: { private: true } });
    for (const event of events) {
      channel.on("broadcast", { event }, (m) => inbox.push({ event: m.event, payload: m.payload as never }));
    }
    await new Promise<void>((resolve, reject) => {
      channel.subscribe((status, error) =>
        status === "SUBSCRIBED" ? resolve() : status !== "CLOSED" && reject(error ?? new Error(status))
      );
    });
    return inbox;
  }

  it("offers a paid delivery to the drivers and tells the company and the driver of each move", async () => {
    const company = await createCompany("Deliveries realtime");
    const { webhookSecret } = await configureGateway(company);
    const driverInbox = await listen(`driver:${company.driver.driverId}`, company.driver.token, [
      "delivery_available",
      "delivery_updated",
    ]);
    const companyInbox = await listen(`company:${company.companyId}`, company.owner.token, ["delivery_updated"]);

    const created = (await createPixDelivery(company)).body;
    await gateway.setStatus(created.payment.gateway_payment_id, "RECEIVED");
    await webhook(companyWebhook(company), {
      event: "PAYMENT_RECEIVED",
      payment: { id: created.payment.gateway_payment_id, status: "RECEIVED", externalReference: created.id },
    }, webhookSecret);
    expect((await moveDelivery(company.driver, created.id, "accept")).status).toBe(200);
    const final = (await get(company.owner, created.id)).body;

    const settle = async (inbox: unknown[], n: number) => {
      for (let i = 0; i < 300 && inbox.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await settle(companyInbox, 3);
    await settle(driverInbox, 2);
    expect(companyInbox.map((m) => m.payload.status)).toEqual(["awaiting_payment", "pending", "accepted"]);
    expect(driverInbox.map((m) => `${m.event}:${m.payload.status}`)).toEqual([
      "delivery_available:pending",
      "delivery_updated:accepted",
    ]);
    // The driver gets the delivery as it reads it: without the recipient's tracking link, which is the company's.
    expect(driverInbox.at(-1)!.payload).toEqual((await get(company.driver, created.id)).body);
    expect(driverInbox.at(-1)!.payload).toEqual({ ...final, tracking_token: null, tracking_url: null });
    expect(companyInbox.at(-1)!.payload).toEqual(final);
  });
});

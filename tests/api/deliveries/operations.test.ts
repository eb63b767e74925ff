// The rest of the operation over HTTP (issue 33): the company recalls a delivery (back to the pool, cancelled, or
// brought back by its driver and credited once), refunds a paid, cancelled Pix delivery through the gateway (once,
// also when the gateway fails and the request is retried with its key), and a driver who loses an offer is told why.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, type Member, type TestCompany } from "../../support/api.ts";
import { createPixDelivery, deliveryIn, moveDelivery } from "../../support/deliveries.ts";
import { gateway } from "../../support/fakes.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";

let a: TestCompany;
let b: TestCompany;
let secret: string;

beforeAll(async () => {
  [a, b] = await Promise.all([
    createCompany("Operations A"),
    createCompany("Operations B"),
  ]);
  ({ webhookSecret: secret } = await configureGateway(a));
});

afterEach(async () => {
  await gateway.reset();
});

const read = async (id: string) => (await api(`/api/v1/deliveries/${id}`, { token: a.owner.token })).body;
const balance = async (who: Member) =>
  (await api("/api/v1/wallets/me", { token: who.token })).body
    .balance as number;
const recalledMessages = (driverId: string, deliveryId: string) =>
  db()`select payload ->> 'status' as status, payload ->> 'recall_reason' as reason from realtime.messages
       where topic = ${"driver:" + driverId} and event = 'delivery_recalled' and payload ->> 'id' = ${deliveryId}`;

describe("recall and return", () => {
  it("puts an accepted delivery back to the pool, tells its driver, and another driver takes it", async () => {
    const id = await deliveryIn(a, "accepted");
    const res = await moveDelivery(a.admin, id, "recall", {
      reason: "O cliente mudou o endereço",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: "pending",
      driver_id: null,
      accepted_at: null,
      recall_reason: "O cliente mudou o endereço",
    });
    expect(await recalledMessages(a.driver.driverId, id)).toEqual([
      { status: "pending", reason: "O cliente mudou o endereço" },
    ]);
    expect(
      (await api(`/api/v1/deliveries/${id}`, { token: a.driver.token })).status,
    ).toBe(200);
    expect((await moveDelivery(a.driver2, id, "accept")).status).toBe(200);
  });

  it("cancels an accepted delivery when asked to", async () => {
    const id = await deliveryIn(a, "accepted");
    const res = await moveDelivery(a.owner, id, "recall", {
      reason: "Pedido desistido",
      then: "cancel",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: "cancelled",
      cancel_reason: "Pedido desistido",
    });
    expect(await recalledMessages(a.driver.driverId, id)).toHaveLength(1);
  });

  it("sends a picked-up delivery back, and the driver's return credits it exactly once", async () => {
    const id = await deliveryIn(a, "in_progress");
    const before = await balance(a.driver);
    const recalled = await moveDelivery(a.owner, id, "recall", {
      reason: "Produto errado",
      then: "cancel",
    });
    expect(recalled.status, JSON.stringify(recalled.body)).toBe(200);
    expect(recalled.body).toMatchObject({
      status: "returning",
      driver_id: a.driver.driverId,
    });
    expect(await recalledMessages(a.driver.driverId, id)).toEqual([{
      status: "returning",
      reason: "Produto errado",
    }]);
    // Not completed, not cancelled, not failed while the goods travel back.
    for (const action of ["complete", "fail", "cancel"]) {
      const who = action === "cancel" ? a.owner : a.driver;
      expect(
        (await moveDelivery(
          who,
          id,
          action,
          action === "fail" ? { reason: "other" } : undefined,
        )).status,
      )
        .toBe(422);
    }
    expect((await moveDelivery(a.driver2, id, "return")).status).toBe(404);
    expect((await moveDelivery(a.owner, id, "return")).status).toBe(403);
    // Returned twice at once: one wins, the ledger holds one credit.
    const both = await Promise.all([
      moveDelivery(a.driver, id, "return"),
      moveDelivery(a.driver, id, "return"),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 422]);
    const returned = both.find((r) => r.status === 200)!.body;
    expect(returned).toMatchObject({
      status: "returned",
      returned_at: expect.any(String),
      late: false,
    });
    const credit = Math.round(returned.price * 0.8 * 100) / 100;
    expect(await balance(a.driver)).toBeCloseTo(before + credit, 2);
    const entries =
      await db()`select kind, amount::float8 as amount from public.wallet_entries where delivery_id = ${id}`;
    expect(entries).toEqual([{ kind: "delivery_credit", amount: credit }]);
    // Listed under its own status.
    const list = await api(`/api/v1/deliveries?status=returned&limit=100`, {
      token: a.owner.token,
    });
    expect(list.body.items.map((d: { id: string }) => d.id)).toContain(id);
  });

  it("refuses what may not recall, and other states", async () => {
    const id = await deliveryIn(a, "accepted");
    expect((await moveDelivery(a.driver, id, "recall", { reason: "x" })).status)
      .toBe(403);
    expect(
      (await moveDelivery(a.legacyAdmin, id, "recall", { reason: "x" })).status,
    ).toBe(403);
    expect((await moveDelivery(b.owner, id, "recall", { reason: "x" })).status)
      .toBe(404);
    expect((await moveDelivery(a.owner, id, "recall", {})).status).toBe(400);
    expect(
      (await moveDelivery(a.owner, id, "recall", {
        reason: "x",
        then: "later",
      })).status,
    ).toBe(400);
    const pending = await deliveryIn(a, "pending");
    const refused = await moveDelivery(a.owner, pending, "recall", {
      reason: "x",
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toBe(
      "delivery cannot be recalled from pending: only accepted or in_progress",
    );
  });
});

describe("an offer lost to another driver", () => {
  it("says that another driver took the delivery", async () => {
    const id = await deliveryIn(a, "pending");
    expect((await moveDelivery(a.driver, id, "accept")).status).toBe(200);
    const lost = await moveDelivery(a.driver2, id, "accept");
    expect(lost.status).toBe(422);
    expect(lost.body.detail).toBe("another driver already took this delivery");
  });
});

describe("refunds", () => {
  /** A Pix delivery paid after it was cancelled: refund_due. */
  async function refundDue(): Promise<{ id: string; paymentId: string }> {
    const created = await createPixDelivery(a);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { id, payment: { gateway_payment_id: paymentId } } = created.body;
    expect((await moveDelivery(a.owner, id, "cancel")).status).toBe(200);
    await gateway.setStatus(paymentId, "RECEIVED");
    const paid = await webhook(companyWebhook(a), {
      event: "PAYMENT_RECEIVED",
      payment: { id: paymentId },
    }, secret);
    expect(paid.status).toBe(200);
    expect(await read(id)).toMatchObject({
      status: "cancelled",
      refund_due: true,
      refund_status: null,
    });
    return { id, paymentId };
  }
  const refunds = async (paymentId: string) =>
    (await gateway.state()).log.filter((r) => r.method === "POST" && r.path === `/v3/payments/${paymentId}/refund`);

  it("refunds at once when the gateway says REFUNDED; the webhook that follows is a duplicate", async () => {
    const { id, paymentId } = await refundDue();
    const res = await moveDelivery(a.owner, id, "refund", {
      reason: "Entrega cancelada",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      refund_status: "refunded",
      refund_due: false,
      payment_status: "refunded",
    });
    expect(await refunds(paymentId)).toHaveLength(1);
    const event = await webhook(companyWebhook(a), {
      event: "PAYMENT_REFUNDED",
      payment: { id: paymentId },
    }, secret);
    expect(event.status).toBe(200);
    // Asked again: already refunded, the gateway is not asked.
    expect((await moveDelivery(a.admin, id, "refund")).body).toMatchObject({
      refund_status: "refunded",
    });
    expect(await refunds(paymentId)).toHaveLength(1);
  });

  it("shows requested until PAYMENT_REFUNDED clears refund_due", async () => {
    await gateway.refunds("in_progress");
    const { id, paymentId } = await refundDue();
    const res = await moveDelivery(a.admin, id, "refund");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      refund_status: "requested",
      refund_due: true,
      payment_status: "received",
    });
    // Asked again without a key: the gateway's refund is read back, not asked for twice.
    expect((await moveDelivery(a.admin, id, "refund")).body).toMatchObject({
      refund_status: "requested",
    });
    expect(await refunds(paymentId)).toHaveLength(2);
    expect(
      (await gateway.state()).payments.find((p) => p.id === paymentId)!.refunds,
    ).toHaveLength(1);
    await gateway.setStatus(paymentId, "REFUNDED");
    const event = await webhook(companyWebhook(a), {
      event: "PAYMENT_REFUNDED",
      payment: { id: paymentId },
    }, secret);
    expect(event.status).toBe(200);
    expect(await read(id)).toMatchObject({
      refund_status: "refunded",
      refund_due: false,
      payment_status: "refunded",
    });
  });

  it("answers 502 and records nothing when the gateway fails; retried with its key, refunds once", async () => {
    const { id, paymentId } = await refundDue();
    const key = { "idempotency-key": `refund-${id}` };
    // The gateway refunds, then its answer is lost.
    await gateway.set("fail-after-create");
    const failed = await api(`/api/v1/deliveries/${id}/refund`, {
      method: "POST",
      token: a.owner.token,
      headers: key,
    });
    expect(failed.status).toBe(502);
    expect(await read(id)).toMatchObject({
      refund_status: null,
      refund_due: true,
    });
    const history = await db()`select count(*)::int as n from public.delivery_history
                               where delivery_id = ${id} and trigger = 'refund_requested'`;
    expect(history[0].n).toBe(0);
    await gateway.set("ok");
    const retried = await api(`/api/v1/deliveries/${id}/refund`, {
      method: "POST",
      token: a.owner.token,
      headers: key,
    });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({
      refund_status: "refunded",
      refund_due: false,
    });
    const replayed = await api(`/api/v1/deliveries/${id}/refund`, {
      method: "POST",
      token: a.owner.token,
      headers: key,
    });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    const payment = (await gateway.state()).payments.find((p) => p.id === paymentId)!;
    expect(payment.refunds).toHaveLength(1);
  });

  it("refuses a delivery that owes no refund, other roles and other companies", async () => {
    const open = await createPixDelivery(a);
    const refused = await moveDelivery(a.owner, open.body.id, "refund");
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toContain(
      "only a cancelled Pix delivery whose payment was received",
    );
    expect((await moveDelivery(a.driver, open.body.id, "refund")).status).toBe(
      403,
    );
    expect((await moveDelivery(a.legacyAdmin, open.body.id, "refund")).status)
      .toBe(403);
    expect((await moveDelivery(b.owner, open.body.id, "refund")).status).toBe(
      404,
    );
    expect(await refunds(open.body.payment.gateway_payment_id)).toHaveLength(0);
  });
});

describe("PATCH /api/v1/deliveries/{id}", () => {
  const patch = (who: Member, id: string, body: unknown) =>
    api(`/api/v1/deliveries/${id}`, { method: "PATCH", token: who.token, body });

  it("changes the recipient and the window, records it, and tells the driver who has it", async () => {
    const id = await deliveryIn(a, "accepted");
    const start = new Date(Date.now() + 2 * 3_600_000).toISOString();
    const end = new Date(Date.now() + 5 * 3_600_000).toISOString();
    const res = await patch(a.admin, id, {
      recipient_name: "Maria Oliveira",
      recipient_phone: "+55 11 98888-7777",
      window_start: start,
      window_end: end,
      notes: null,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ recipient_name: "Maria Oliveira", notes: null, status: "accepted" });
    expect(Date.parse(res.body.window_end)).toBe(Date.parse(end));
    const [history] = await db()`select actor_id, changes from public.delivery_history
                                 where delivery_id = ${id} and trigger = 'update'`;
    expect(history.actor_id).toBe(a.admin.userId);
    expect(history.changes.recipient_name).toEqual({ from: "Ana", to: "Maria Oliveira" });
    expect(history.changes.notes).toEqual({ from: "Portaria", to: null });
    const told = await db()`select payload ->> 'recipient_name' as name from realtime.messages
                            where topic = ${"driver:" + a.driver.driverId} and event = 'delivery_updated'
                              and payload ->> 'id' = ${id} and payload ->> 'recipient_name' = 'Maria Oliveira'`;
    expect(told).toHaveLength(1);
  });

  it("measures new ends again and quotes an invoice delivery again; refuses them once picked up", async () => {
    const id = await deliveryIn(a, "pending");
    const before = await read(id);
    const destination = { lat: -23.5874, lng: -46.6576 };
    const res = await patch(a.owner, id, { destination_address: "Parque Ibirapuera, São Paulo", destination });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const quote = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: before.origin, destination },
    });
    expect(res.body).toMatchObject({
      destination_address: "Parque Ibirapuera, São Paulo",
      destination,
      origin: before.origin,
      distance_m: quote.body.distance_m,
      price: quote.body.price,
    });
    expect(res.body.distance_m).not.toBe(before.distance_m);

    const trip = await deliveryIn(a, "in_progress");
    const moved = await patch(a.owner, trip, { destination_address: "Rua Augusta, 100", destination });
    expect(moved.status).toBe(422);
    expect(moved.body.detail).toContain("cannot change once it is picked up");
    expect((await patch(a.owner, trip, { notes: "Deixar na portaria" })).body).toMatchObject({
      notes: "Deixar na portaria",
    });
    const done = await deliveryIn(a, "completed");
    expect((await patch(a.owner, done, { notes: "x" })).status).toBe(422);
  });

  it("sets, changes and removes what the driver collects until pickup, recording each change", async () => {
    const id = await deliveryIn(a, "accepted");
    const set = await patch(a.owner, id, { collect: { amount: 57.5, method: "cash", change_for: 100 } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.collect).toMatchObject({ amount: 57.5, method: "cash", change_for: 100 });
    const changed = await patch(a.admin, id, { collect: { amount: 80, method: "card" } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.collect).toMatchObject({ amount: 80, method: "card", change_for: null });
    const removed = await patch(a.owner, id, { collect: null });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.collect).toBeNull();
    const history = await db()`select changes from public.delivery_history
                               where delivery_id = ${id} and trigger = 'update' order by id`;
    expect(history.map((h) => h.changes.collect_amount)).toEqual([
      { from: null, to: 57.5 },
      { from: 57.5, to: 80 },
      { from: 80, to: null },
    ]);
    expect(history[1].changes.collect_method).toEqual({ from: "cash", to: "card" });

    const trip = await deliveryIn(a, "in_progress");
    const late = await patch(a.owner, trip, { collect: { amount: 10, method: "cash" } });
    expect(late.status).toBe(422);
    expect(late.body.detail).toContain("cannot change once it is picked up");
    expect((await patch(a.owner, trip, { collect: null })).status).toBe(422);
  });

  it("refuses a collect that is not whole: 400", async () => {
    const id = await deliveryIn(a, "pending");
    for (
      const collect of [
        { amount: 0, method: "cash" },
        { amount: 10, method: "pix" },
        { amount: 10, method: "card", change_for: 20 },
        { amount: 50, method: "cash", change_for: 20 },
        { method: "cash" },
      ]
    ) {
      const res = await patch(a.owner, id, { collect });
      expect(res.status, JSON.stringify(collect)).toBe(400);
    }
    expect((await read(id)).collect).toBeNull();
  });

  it("replaces an unpaid Pix delivery's charge when new ends change its price, once", async () => {
    const pix = await createPixDelivery(a);
    expect(pix.status, JSON.stringify(pix.body)).toBe(201);
    const oldCharge = pix.body.payment.gateway_payment_id;
    const destination = { lat: -23.5874, lng: -46.6576 };
    const send = () =>
      api(`/api/v1/deliveries/${pix.body.id}`, {
        method: "PATCH",
        token: a.owner.token,
        body: { destination_address: "Parque Ibirapuera, São Paulo", destination },
      });
    const res = await send();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const quote = await api("/api/v1/routes/quote", {
      token: a.owner.token,
      body: { origin: pix.body.origin, destination },
    });
    expect(res.body.price).toBe(quote.body.price);
    expect(res.body.price).not.toBe(pix.body.price);
    const newCharge = res.body.payment.gateway_payment_id;
    expect(newCharge).not.toBe(oldCharge);
    expect(res.body.payment.pix_copy_paste).not.toBe(pix.body.payment.pix_copy_paste);
    expect(res.body).toMatchObject({ status: "awaiting_payment", payment_status: "pending" });

    // At the gateway: the old charge removed (it can no longer be paid), the new one for the new price, same client.
    const { payments } = await gateway.state();
    const old = payments.find((p) => p.id === oldCharge)!;
    const made = payments.find((p) => p.id === newCharge)!;
    expect(old.status).toBe("DELETED");
    expect(made).toMatchObject({ status: "PENDING", value: quote.body.price, customer: old.customer });

    // Sent again (a retry whose answer was lost): the route and its price are as asked, so the charge stays.
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.body.payment.gateway_payment_id).toBe(newCharge);
    expect(again.body.price).toBe(quote.body.price);
    const mine = (await gateway.state()).payments.filter((p) => p.externalReference === pix.body.id);
    expect(mine).toHaveLength(2);

    // The old charge's payment no longer pays the delivery; the new one's does.
    const stale = await webhook(companyWebhook(a), {
      event: "PAYMENT_RECEIVED",
      payment: { id: oldCharge, externalReference: pix.body.id },
    }, secret);
    expect(stale.status).toBe(200);
    expect((await read(pix.body.id)).payment_status).toBe("pending");
    await gateway.setStatus(newCharge, "RECEIVED");
    const paid = await webhook(companyWebhook(a), {
      event: "PAYMENT_RECEIVED",
      payment: { id: newCharge, externalReference: pix.body.id },
    }, secret);
    expect(paid.status).toBe(200);
    expect((await read(pix.body.id)).payment_status).toBe("received");
  });

  it("changes nothing when the gateway fails while the charge is replaced (502)", async () => {
    const pix = await createPixDelivery(a);
    const destination = { lat: -23.5874, lng: -46.6576 };
    await gateway.set("fail");
    const failed = await patch(a.owner, pix.body.id, { destination_address: "Parque Ibirapuera", destination });
    await gateway.set("ok");
    expect(failed.status).toBe(502);
    const unchanged = await read(pix.body.id);
    expect(unchanged.payment.gateway_payment_id).toBe(pix.body.payment.gateway_payment_id);
    expect(unchanged.destination_address).toBe(pix.body.destination_address);
  });

  it("refuses unknown fields, other roles and other companies", async () => {
    const pix = await createPixDelivery(a);
    expect((await patch(a.owner, pix.body.id, { recipient_name: "Bia" })).body).toMatchObject({
      recipient_name: "Bia",
    });
    expect((await patch(a.owner, pix.body.id, { size: 2 })).status).toBe(400);
    expect((await patch(a.driver, pix.body.id, { notes: "x" })).status).toBe(403);
    expect((await patch(a.legacyAdmin, pix.body.id, { notes: "x" })).status).toBe(403);
    expect((await patch(b.owner, pix.body.id, { notes: "x" })).status).toBe(404);
  });
});

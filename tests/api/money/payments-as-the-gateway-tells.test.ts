// Payments as the gateway tells them (DESIGN.md §10.2): a payment first heard of as CONFIRMED (its
// PAYMENT_RECEIVED lost after the gateway's last retry) or RECEIVED_IN_CASH counts as received, then confirmed;
// on a cancelled delivery it is flagged refund_due; the reconciliation pass applies a payment the webhook never
// brought; and a company without a gateway configuration answers 200 `ignored` on its own path to an event signed
// with the platform secret, so that the gateway stops retrying.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { createPixDelivery, moveDelivery } from "../../support/deliveries.ts";
import { gateway } from "../../support/fakes.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";

let company: TestCompany;
let unconfigured: TestCompany;
let secret: string;

beforeAll(async () => {
  [company, unconfigured] = await Promise.all([createCompany("Gateway Truth"), createCompany("Gateway None")]);
  ({ webhookSecret: secret } = await configureGateway(company));
});

afterEach(async () => {
  await gateway.set("ok", 0);
});

async function pixDelivery(): Promise<{ id: string; paymentId: string }> {
  const res = await createPixDelivery(company);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, paymentId: res.body.payment.gateway_payment_id };
}

/** The gateway's record moves to `status`, then it sends `event` about it, signed. */
async function gatewaySays(paymentId: string, status: string, event: string) {
  await gateway.setStatus(paymentId, status);
  return await webhook(companyWebhook(company), { event, payment: { id: paymentId, status } }, secret);
}

const read = async (id: string) => (await api(`/api/v1/deliveries/${id}`, { token: company.owner.token })).body;

async function lastAudit(objectId: string) {
  const [row] = await db()`select result, detail from public.webhook_events where object_id = ${objectId}
                           order by received_at desc, id desc limit 1`;
  return row;
}

describe("a payment first heard of as confirmed", () => {
  it("makes a delivery awaiting payment pending and confirmed; a later RECEIVED is a duplicate", async () => {
    const { id, paymentId } = await pixDelivery();
    // PAYMENT_RECEIVED never arrived; a day later the gateway confirms the payment.
    expect((await gatewaySays(paymentId, "CONFIRMED", "PAYMENT_CONFIRMED")).status).toBe(200);
    expect(await read(id)).toMatchObject({ status: "pending", payment_status: "confirmed", refund_due: false });
    expect(await lastAudit(paymentId)).toMatchObject({ result: "processed" });
    // The drivers see it now, and one may take it.
    const list = await api("/api/v1/deliveries?status=pending&limit=100", { token: company.driver.token });
    expect(list.body.items.map((d: { id: string }) => d.id)).toContain(id);
    expect((await moveDelivery(company.driver, id, "accept")).status).toBe(200);
    // The lost PAYMENT_RECEIVED is finally delivered: the gateway's record says CONFIRMED, already applied.
    expect(
      (await webhook(companyWebhook(company), { event: "PAYMENT_RECEIVED", payment: { id: paymentId } }, secret))
        .status,
    ).toBe(200);
    expect(await lastAudit(paymentId)).toMatchObject({ result: "duplicate" });
    expect(await read(id)).toMatchObject({ status: "accepted", payment_status: "confirmed" });
  });

  it("counts a payment received in cash as received and confirmed", async () => {
    const { id, paymentId } = await pixDelivery();
    expect((await gatewaySays(paymentId, "RECEIVED_IN_CASH", "PAYMENT_RECEIVED")).status).toBe(200);
    expect(await read(id)).toMatchObject({ status: "pending", payment_status: "confirmed" });
  });

  it("flags a cancelled delivery refund_due", async () => {
    const { id, paymentId } = await pixDelivery();
    expect((await moveDelivery(company.owner, id, "cancel")).status).toBe(200);
    // Paid all the same (the charge was removed too late), first heard of as confirmed.
    expect((await gatewaySays(paymentId, "CONFIRMED", "PAYMENT_CONFIRMED")).status).toBe(200);
    expect(await read(id)).toMatchObject({ status: "cancelled", payment_status: "confirmed", refund_due: true });
    expect(await lastAudit(paymentId)).toMatchObject({ result: "processed" });
    // The company refunds it at the gateway: the flag goes.
    expect((await gatewaySays(paymentId, "REFUNDED", "PAYMENT_REFUNDED")).status).toBe(200);
    expect(await read(id)).toMatchObject({ status: "cancelled", payment_status: "refunded", refund_due: false });
  });
});

describe("payment reconciliation", () => {
  const reconcile = () =>
    api("/functions/v1/gateway-webhook/reconcile", {
      method: "POST",
      body: {},
      headers: { authorization: `Bearer ${stack().serviceRoleKey}` },
    });
  const ageBy = (id: string, minutes: number) =>
    db().begin(async (tx) => {
      // Time passes; the guards keep created_at as it is, so they are bypassed here.
      await tx`set local session_replication_role = replica`;
      await tx`update public.deliveries set created_at = created_at - make_interval(mins => ${minutes})
               where id = ${id}`;
    });

  it("applies a payment the webhook never brought, once the charge is 10 minutes old", async () => {
    const { id, paymentId } = await pixDelivery();
    const charged = await pixDelivery();
    // Both are paid; neither PAYMENT_RECEIVED ever arrives.
    await gateway.setStatus(paymentId, "RECEIVED");
    await gateway.setStatus(charged.paymentId, "RECEIVED");
    await ageBy(id, 11);
    await ageBy(charged.id, 9);

    const pass = await reconcile();
    expect(pass.status).toBe(200);
    expect(pass.body.payments).toMatchObject({ errors: 0 });
    expect(pass.body.payments.settled).toBeGreaterThanOrEqual(1);
    expect(await read(id)).toMatchObject({ status: "pending", payment_status: "received" });
    // A charge younger than 10 minutes is left to its webhook.
    expect(await read(charged.id)).toMatchObject({ status: "awaiting_payment", payment_status: "pending" });
    const history = await db()`select trigger from public.delivery_history where delivery_id = ${id} order by id`;
    expect(history.map((h) => h.trigger)).toEqual(["create", "payment_received"]);

    // Still unpaid ones stay as they are; overdue ones are cancelled, as the lost PAYMENT_OVERDUE would have.
    const unpaid = await pixDelivery();
    const overdue = await pixDelivery();
    await gateway.setStatus(overdue.paymentId, "OVERDUE");
    await ageBy(unpaid.id, 30);
    await ageBy(overdue.id, 30);
    expect((await reconcile()).body.payments.errors).toBe(0);
    expect(await read(unpaid.id)).toMatchObject({ status: "awaiting_payment", payment_status: "pending" });
    expect(await read(overdue.id)).toMatchObject({ status: "cancelled", payment_status: "overdue" });
    // Once moved, a delivery is no longer asked about.
    const asked = (await gateway.state()).log.filter((call) => call.path === `/v3/payments/${paymentId}`).length;
    expect((await reconcile()).status).toBe(200);
    expect((await gateway.state()).log.filter((call) => call.path === `/v3/payments/${paymentId}`).length).toBe(asked);
  });

  it("leaves a delivery awaiting payment as it is while the gateway fails, and reports it", async () => {
    const { id, paymentId } = await pixDelivery();
    await gateway.setStatus(paymentId, "RECEIVED");
    await ageBy(id, 15);
    await gateway.set("fail");
    const pass = await reconcile();
    expect(pass.status).toBe(200);
    expect(pass.body.payments.errors).toBeGreaterThanOrEqual(1);
    expect(await read(id)).toMatchObject({ status: "awaiting_payment" });
    await gateway.set("ok");
    expect((await reconcile()).status).toBe(200);
    expect(await read(id)).toMatchObject({ status: "pending", payment_status: "received" });
  });
});

describe("a company without a gateway configuration", () => {
  it("answers 200 `ignored` on its own path to an event signed with the platform secret", async () => {
    for (
      const [event, form, id] of [
        ["PAYMENT_RECEIVED", "payment", `pay_not_ours_${crypto.randomUUID()}`],
        ["TRANSFER_DONE", "transfer", `tra_not_ours_${crypto.randomUUID()}`],
      ]
    ) {
      const body = { event, [form]: { id, status: "DONE" } };
      const res = await webhook(companyWebhook(unconfigured), body, stack().platformWebhookSecret);
      expect(res).toMatchObject({ status: 200, body: { received: true } });
      const [audit] = await db()`select company_id, event, result, detail from public.webhook_events
                                 where object_id = ${id} order by received_at desc limit 1`;
      expect(audit).toMatchObject({
        company_id: unconfigured.companyId,
        event,
        result: "ignored",
        detail: expect.stringContaining("no gateway configuration"),
      });
    }
    // A signature with anything but the platform secret is still refused.
    expect((await webhook(companyWebhook(unconfigured), { event: "PAYMENT_RECEIVED" }, "a-guess")).status).toBe(401);
  });
});

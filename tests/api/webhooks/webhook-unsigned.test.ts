// The unsigned platform webhook (docs/spec.md §4.4; docs/contract.md, Webhooks): a hint, not a
// fact. The service fetches the named transfer or payment back from the gateway
// and applies the status the gateway reports, whatever the claim said: nothing
// while the gateway still reports it pending, the gateway's outcome once it has
// one. And GATEWAY_WEBHOOK_REQUIRE_SIGNATURE=true, which refuses unsigned
// requests with 401, in a function process of its own.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  configureGateway,
  createCompany,
  db,
  type DriverMember,
  stack,
  type TestCompany,
} from "../../support/api.ts";
import { PLATFORM_WEBHOOK, sign, webhook } from "../../support/webhooks.ts";
import {
  creditDriver,
  debitsOf,
  forgetGatewayLookups,
  processingWithdrawal,
  requestWithdrawal,
} from "../../support/money.ts";
import { createPixDelivery } from "../../support/deliveries.ts";
import { callFunctionProcess } from "../../support/function-process.ts";
import { gateway, routing } from "../../support/fakes.ts";

let a: TestCompany;

beforeAll(async () => {
  a = await createCompany("Unsigned A");
  await configureGateway(a);
  await credit(a.driver, "100.00");
});

afterEach(async () => {
  await gateway.reset();
  await routing.reset();
});

const credit = (driver: DriverMember, amount: string) => creditDriver(a.companyId, driver, amount);

/** What an unsigned request claims: the event, with the status the claim asserts. */
function claim(event: string, transferId: string | null, reference: string) {
  return {
    event,
    transfer: {
      object: "transfer",
      id: transferId,
      value: 10,
      status: event === "TRANSFER_DONE" || event === "TRANSFER_APPROVED" ? "DONE" : event.replace("TRANSFER_", ""),
      externalReference: reference,
      dateCreated: "2026-11-21",
    },
  };
}

async function withdrawalRow(id: string) {
  const [row] = await db()`select status, error_message, gateway_transfer_id, completed_at
                           from public.withdrawals where id = ${id}`;
  return row;
}

async function lastLog() {
  const [row] = await db()`select company_id, event, object_id, result, detail from public.webhook_events
                           order by received_at desc, id desc limit 1`;
  return row;
}

const wallet = async () => (await api("/api/v1/wallets/me", { token: a.driver.token })).body;

describe("an unsigned transfer event", () => {
  it("changes nothing while the gateway reports the transfer PENDING, and completes it once the gateway reports DONE", async () => {
    const before = await wallet();
    const { id, transferId } = await processingWithdrawal(a.driver);

    const pending = await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transferId, id), null);
    expect(pending).toMatchObject({ status: 200, body: { received: true } });
    expect((await withdrawalRow(id)).status).toBe("processing");
    expect(await debitsOf(id)).toBe(0);
    expect(await lastLog()).toMatchObject({
      company_id: a.companyId,
      result: "ignored",
      detail: "unsigned, checked with the gateway (PENDING): the transfer is not settled yet",
    });

    await gateway.setStatus(transferId, "DONE");
    // Within the minute, another unsigned request about the same transfer does not make us ask again.
    const tooSoon = await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transferId, id), null);
    expect(tooSoon.status).toBe(429);
    expect(tooSoon.headers.get("retry-after")).toBe("60");
    expect((await withdrawalRow(id)).status).toBe("processing");
    expect(await debitsOf(id)).toBe(0);

    await forgetGatewayLookups(`transfer:${transferId}`); // a minute later
    const done = await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transferId, id), null);
    expect(done).toMatchObject({ status: 200, body: { received: true } });
    expect(await withdrawalRow(id)).toMatchObject({
      status: "completed",
      error_message: null,
      gateway_transfer_id: transferId,
      completed_at: expect.any(Date),
    });
    expect(await debitsOf(id)).toBe(1);
    expect(await lastLog()).toEqual({
      company_id: a.companyId,
      event: "TRANSFER_DONE",
      object_id: transferId,
      result: "processed",
      detail: "unsigned, checked with the gateway (DONE = TRANSFER_DONE): withdrawal completed",
    });
    expect(await wallet()).toMatchObject({
      balance: before.balance - 10,
      available_balance: before.available_balance - 10,
    });

    // The same hint again (a minute later): a duplicate, still one debit.
    await forgetGatewayLookups(`transfer:${transferId}`);
    expect((await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transferId, id), null)).status).toBe(200);
    expect(await lastLog()).toMatchObject({ result: "duplicate" });
    expect(await debitsOf(id)).toBe(1);
  });

  it.each([
    ["FAILED", "TRANSFER_FAILED"],
    ["CANCELLED", "TRANSFER_CANCELLED"],
  ])("fails it when the gateway reports %s, even when the claim says done", async (status, event) => {
    const before = await wallet();
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, status);
    const res = await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transferId, id), null);
    expect(res.status).toBe(200);
    expect(await withdrawalRow(id)).toMatchObject({ status: "failed", error_message: event, completed_at: null });
    expect(await debitsOf(id)).toBe(0);
    expect(await lastLog()).toMatchObject({
      result: "processed",
      detail: `unsigned, checked with the gateway (${status} = ${event}): withdrawal failed`,
    });
    expect(await wallet()).toEqual(before);
  });

  it("does not complete a withdrawal when the claim says done and the gateway reports it failed, nor the reverse", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    expect((await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_FAILED", transferId, id), null)).status).toBe(200);
    // The claim said failed; the gateway says done: done it is.
    expect((await withdrawalRow(id)).status).toBe("completed");
    expect(await debitsOf(id)).toBe(1);
  });

  it("completes, with one debit, a withdrawal left in doubt because the gateway's answer was lost", async () => {
    const before = await wallet();
    await gateway.set("fail-after-create");
    const res = await requestWithdrawal(a.driver, 10);
    await gateway.set("ok");
    expect(res.status).toBe(502);
    const [row] = await db()`select id, in_doubt from public.withdrawals where driver_id = ${a.driver.driverId}
                             order by created_at desc limit 1`;
    expect(row.in_doubt).toBe(true);
    expect((await withdrawalRow(row.id)).status).toBe("processing");
    const transfer = (await gateway.state()).transfers.find((t) => t.externalReference === row.id)!;
    expect(transfer).toBeDefined();
    expect(await wallet()).toEqual({ ...before, available_balance: before.available_balance - 10 });

    // Still pending at the gateway: nothing moves, but the withdrawal now knows its transfer.
    expect((await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transfer.id, row.id), null)).status).toBe(200);
    expect(await withdrawalRow(row.id)).toMatchObject({ status: "processing", gateway_transfer_id: transfer.id });
    expect(await debitsOf(row.id)).toBe(0);
    expect(await lastLog()).toMatchObject({
      result: "processed",
      detail:
        "unsigned, checked with the gateway (PENDING): the transfer exists and is pending: attached to the withdrawal",
    });

    await gateway.setStatus(transfer.id, "DONE");
    await forgetGatewayLookups(`transfer:${transfer.id}`); // a minute later
    expect((await webhook(PLATFORM_WEBHOOK, claim("TRANSFER_DONE", transfer.id, row.id), null)).status).toBe(200);
    expect(await withdrawalRow(row.id)).toMatchObject({
      status: "completed",
      gateway_transfer_id: transfer.id,
      error_message: null,
    });
    expect(await debitsOf(row.id)).toBe(1);
    expect(await lastLog()).toMatchObject({
      result: "processed",
      detail: "unsigned, checked with the gateway (DONE = TRANSFER_DONE): withdrawal completed",
    });
    expect(await wallet()).toMatchObject({
      balance: before.balance - 10,
      available_balance: before.available_balance - 10,
    });
  });

  it("the fake refuses to set the status of an object it does not hold", async () => {
    await expect(gateway.setStatus("tra_nobody", "DONE")).rejects.toThrow(/404/);
  });
});

describe("an unsigned payment event", () => {
  it("makes a Pix delivery pending only once the gateway reports the payment RECEIVED", async () => {
    const created = await createPixDelivery(a);
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("awaiting_payment");
    const delivery = created.body.id as string;
    const paymentId = created.body.payment.gateway_payment_id as string;
    const body = {
      event: "PAYMENT_RECEIVED",
      payment: {
        object: "payment",
        id: paymentId,
        status: "RECEIVED",
        value: created.body.price,
        externalReference: delivery,
      },
    };
    const read = async () => (await api(`/api/v1/deliveries/${delivery}`, { token: a.owner.token })).body;

    expect((await webhook(PLATFORM_WEBHOOK, body, null)).status).toBe(200);
    expect(await read()).toMatchObject({ status: "awaiting_payment", payment_status: "pending" });
    expect(await lastLog()).toMatchObject({
      company_id: a.companyId,
      result: "ignored",
      detail: "unsigned, checked with the gateway (PENDING): the payment is not settled yet",
    });

    await gateway.setStatus(paymentId, "RECEIVED");
    await forgetGatewayLookups(`payment:${paymentId}`); // a minute later
    expect((await webhook(PLATFORM_WEBHOOK, body, null)).status).toBe(200);
    expect(await read()).toMatchObject({ status: "pending", payment_status: "received" });
    expect(await lastLog()).toMatchObject({
      company_id: a.companyId,
      event: "PAYMENT_RECEIVED",
      object_id: paymentId,
      result: "processed",
      detail: expect.stringMatching(/^unsigned, checked with the gateway \(RECEIVED = PAYMENT_RECEIVED\): /),
    });
  });
});

describe("with GATEWAY_WEBHOOK_REQUIRE_SIGNATURE=true", () => {
  it("an unsigned request is 401 and logged rejected; a signed one is still applied", { timeout: 60_000 }, async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "FAILED");
    const unsigned = JSON.stringify(claim("TRANSFER_FAILED", transferId, id));
    const signed = JSON.stringify(claim("TRANSFER_FAILED", transferId, id));
    const rejected = async () =>
      (await db()`select count(*)::int as n from public.webhook_events
                  where result = 'rejected' and detail = 'missing gateway-signature' and company_id is null`)[0].n;
    const rejectedBefore = await rejected();

    // The gateway-webhook function in a process of its own, on the same database, with the setting on.
    const post = (body: string, headers: Record<string, string>) => ({
      method: "POST",
      path: PLATFORM_WEBHOOK,
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    const { answers, stderr } = callFunctionProcess("gateway-webhook", [
      post(unsigned, {}),
      post(signed, { "gateway-signature": sign(stack().platformWebhookSecret, signed) }),
    ], { GATEWAY_WEBHOOK_REQUIRE_SIGNATURE: "true" });
    expect(answers.map(({ status, body }) => ({ status, body })), stderr).toEqual([
      { status: 401, body: { detail: "missing gateway-signature" } },
      { status: 200, body: { received: true } },
    ]);

    // The unsigned claim was not even checked with the gateway: the signed event, checked once, decided.
    expect(await withdrawalRow(id)).toMatchObject({ status: "failed", error_message: "TRANSFER_FAILED" });
    expect(await debitsOf(id)).toBe(0);
    expect(await rejected()).toBe(rejectedBefore + 1);
    expect((await gateway.state()).log.filter((entry) => entry.method === "GET")).toEqual([
      expect.objectContaining({ path: `/v3/transfers/${transferId}` }),
    ]);
    expect(await lastLog()).toMatchObject({
      object_id: transferId,
      result: "processed",
      detail: "checked with the gateway (FAILED = TRANSFER_FAILED): withdrawal failed",
    });
  });
});

// The gateway webhooks over HTTP (issue 5): signatures over the raw bytes, the
// secret each endpoint uses, tenancy, unknown events, concurrent copies of an
// event, the audit log, the unsigned platform webhook verified with the
// gateway, and the 5-second answer when processing cannot finish.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
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
import { companyWebhook, PLATFORM_WEBHOOK, sign, webhook } from "../../support/webhooks.ts";
import { creditDriver, debitsOf, processingWithdrawal } from "../../support/money.ts";
import { gateway } from "../../support/fakes.ts";

let a: TestCompany;
let b: TestCompany;
let unconfigured: TestCompany;
let secretA: string;
let secretB: string;

beforeAll(async () => {
  [a, b, unconfigured] = await Promise.all([
    createCompany("Hook A"),
    createCompany("Hook B"),
    createCompany("Hook none"),
  ]);
  [{ webhookSecret: secretA }, { webhookSecret: secretB }] = await Promise.all([
    configureGateway(a),
    configureGateway(b),
  ]);
  await credit(a, a.driver, "500.00");
});

afterEach(async () => {
  await gateway.reset();
});

const credit = (company: TestCompany, driver: DriverMember, amount: string) =>
  creditDriver(company.companyId, driver, amount);

function transferBody(
  event: string,
  transferId: string | null,
  reference: string | null,
  form: "transfer" | "payment" = "transfer",
) {
  return {
    event,
    [form]: {
      object: "transfer",
      id: transferId,
      value: 10,
      status: "DONE",
      externalReference: reference,
      dateCreated: "2026-11-21",
    },
  };
}

async function statusOf(id: string): Promise<string> {
  return (await db()`select status from public.withdrawals where id = ${id}`)[0].status;
}

async function logSize(): Promise<number> {
  return (await db()`select count(*)::int as n from public.webhook_events`)[0].n;
}

async function lastLog(n = 1) {
  return await db()`select company_id, event, object_id, result, detail from public.webhook_events
                    order by received_at desc, id desc limit ${n}`;
}

describe("signatures", () => {
  it("a signature over different bytes (the same JSON re-serialised) is 401, and changes nothing", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    // The gateway did make the transfer: only the signature stands between the event and the withdrawal.
    await gateway.setStatus(transferId, "DONE");
    const body = transferBody("TRANSFER_DONE", transferId, id);
    const sent = JSON.stringify(body);
    const res = await api(companyWebhook(a), {
      method: "POST",
      rawBody: sent,
      headers: {
        "content-type": "application/json",
        "gateway-signature": sign(secretA, JSON.stringify(body, null, 2)),
      },
    });
    expect(res.status).toBe(401);
    expect(await statusOf(id)).toBe("processing");
    expect((await lastLog())[0]).toMatchObject({
      company_id: a.companyId,
      result: "rejected",
      detail: "invalid signature",
    });

    // The very same bytes, signed: accepted; an upper-case hex signature is the same signature.
    const ok = await api(companyWebhook(a), {
      method: "POST",
      rawBody: sent,
      headers: { "content-type": "application/json", "gateway-signature": sign(secretA, sent).toUpperCase() },
    });
    expect(ok).toMatchObject({ status: 200, body: { received: true } });
    expect(await statusOf(id)).toBe("completed");
  });

  it("an unsigned request to a company endpoint is 401", async () => {
    const res = await webhook(companyWebhook(a), { event: "TRANSFER_DONE", transfer: { id: "tra_x" } }, null);
    expect(res.status).toBe(401);
    expect((await lastLog())[0]).toMatchObject({ result: "rejected", detail: "missing gateway-signature" });
  });

  it("the platform secret does not open a company that has its own secret", async () => {
    const res = await webhook(companyWebhook(a), { event: "SOMETHING_ELSE" }, stack().platformWebhookSecret);
    expect(res.status).toBe(401);
  });

  it("the platform secret opens a company without a secret of its own", async () => {
    const res = await webhook(companyWebhook(unconfigured), { event: "SOMETHING_ELSE" }, stack().platformWebhookSecret);
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    expect((await webhook(companyWebhook(unconfigured), { event: "SOMETHING_ELSE" }, "a-guess")).status).toBe(401);
  });

  it("another company's secret is 401", async () => {
    expect((await webhook(companyWebhook(a), { event: "SOMETHING_ELSE" }, secretB)).status).toBe(401);
  });

  it("a wrong signature on the platform endpoint is 401", async () => {
    expect((await webhook(PLATFORM_WEBHOOK, { event: "SOMETHING_ELSE" }, secretA)).status).toBe(401);
  });
});

describe("requests that are not events", () => {
  it("malformed JSON, correctly signed, is 400", async () => {
    const res = await webhook(companyWebhook(a), '{"event": "TRANSFER_DONE", ', secretA);
    expect(res.status).toBe(400);
    expect(res.body.detail[0]).toMatchObject({ type: "json_invalid", loc: ["body"] });
    expect((await lastLog())[0]).toMatchObject({ company_id: a.companyId, result: "rejected" });
  });

  it("a NUL character, which can never be stored, is 400 (not retried), correctly signed or not", async () => {
    const res = await webhook(companyWebhook(a), { event: "TRANSFER_DONE", transfer: { id: "tra_\u0000x" } }, secretA);
    expect(res.status).toBe(400);
    expect((await lastLog())[0]).toMatchObject({ company_id: a.companyId, result: "rejected" });
  });

  it("JSON without an event name is 400", async () => {
    expect((await webhook(companyWebhook(a), { transfer: { id: "tra_x" } }, secretA)).status).toBe(400);
    expect((await webhook(companyWebhook(a), [1, 2], secretA)).status).toBe(400);
  });

  it.each([randomUUID(), "not-a-uuid"])("an unknown company (%s) is 404, logged without a company", async (company) => {
    const res = await webhook(companyWebhook(company), { event: "TRANSFER_DONE" }, stack().platformWebhookSecret);
    expect(res.status).toBe(404);
    expect((await lastLog())[0]).toMatchObject({ company_id: null, result: "rejected", detail: "unknown company" });
  });

  it("an unknown event is 200 and ignored", async () => {
    const res = await webhook(companyWebhook(a), { event: "PAYMENT_CREATED", payment: { id: "pay_1" } }, secretA);
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    expect((await lastLog())[0]).toMatchObject({
      company_id: a.companyId,
      event: "PAYMENT_CREATED",
      object_id: "pay_1",
      result: "ignored",
    });
  });

  it("the function answers under its own name too (/functions/v1/gateway-webhook/{company_id})", async () => {
    const raw = JSON.stringify({ event: "SOMETHING_ELSE" });
    const res = await api(`/functions/v1/gateway-webhook/${a.companyId}`, {
      method: "POST",
      rawBody: raw,
      headers: { "gateway-signature": sign(secretA, raw) },
    });
    expect(res).toMatchObject({ status: 200, body: { received: true } });
    const platform = await api("/functions/v1/gateway-webhook", {
      method: "POST",
      rawBody: raw,
      headers: { "gateway-signature": sign(secretA, raw) },
    });
    expect(platform.status).toBe(401);
  });
});

describe("transfer events", () => {
  it("find the transfer id in payment.id in the other payload form", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    expect(
      (await webhook(companyWebhook(a), transferBody("TRANSFER_DONE", transferId, null, "payment"), secretA)).status,
    )
      .toBe(200);
    expect(await statusOf(id)).toBe("completed");
  });

  it("for another company's withdrawal change nothing", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    const res = await webhook(companyWebhook(b), transferBody("TRANSFER_DONE", transferId, id), secretB);
    expect(res.status).toBe(200);
    expect((await lastLog())[0]).toMatchObject({
      company_id: b.companyId,
      result: "ignored",
      detail: "no such withdrawal",
    });
    expect(await statusOf(id)).toBe("processing");
    expect(await debitsOf(id)).toBe(0);
  });

  it("20 concurrent copies of one TRANSFER_DONE produce one debit", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    const before = await logSize();
    const raw = JSON.stringify(transferBody("TRANSFER_DONE", transferId, id));
    const responses = await Promise.all(Array.from({ length: 20 }, () => webhook(companyWebhook(a), raw, secretA)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await statusOf(id)).toBe("completed");
    expect(await debitsOf(id)).toBe(1);
    const rows = await db()`select result, count(*)::int as n from public.webhook_events
                            where object_id = ${transferId} group by result order by result`;
    expect(rows).toEqual([{ result: "duplicate", n: 19 }, { result: "processed", n: 1 }]);
    expect(await logSize()).toBe(before + 20);
  });

  it("on the platform endpoint, signed with the platform secret, apply to the withdrawal's company", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "FAILED");
    const res = await webhook(
      PLATFORM_WEBHOOK,
      transferBody("TRANSFER_FAILED", transferId, id),
      stack().platformWebhookSecret,
    );
    expect(res.status).toBe(200);
    expect(await statusOf(id)).toBe("failed");
    expect((await lastLog())[0]).toMatchObject({ company_id: a.companyId, result: "processed", object_id: transferId });
  });

  it("answer 503 within 5 s when processing cannot finish, then apply on redelivery", { timeout: 20_000 }, async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    const raw = JSON.stringify(transferBody("TRANSFER_DONE", transferId, id));
    // Another transaction holds the withdrawal's row lock for longer than the gateway waits.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = db().begin(async (tx) => {
      await tx`select 1 from public.withdrawals where id = ${id} for update`;
      locked();
      await released;
    });
    await isLocked;
    const started = Date.now();
    const res = await webhook(companyWebhook(a), raw, secretA);
    const elapsed = Date.now() - started;
    release();
    await holder;
    expect(res.status).toBe(503);
    expect(elapsed).toBeLessThan(5_000);
    expect(await statusOf(id)).toBe("processing");
    expect((await lastLog())[0]).toMatchObject({ company_id: a.companyId, result: "error", object_id: transferId });

    expect((await webhook(companyWebhook(a), raw, secretA)).status).toBe(200);
    expect(await statusOf(id)).toBe("completed");
    expect(await debitsOf(id)).toBe(1);
  });
});

describe("payment events", () => {
  it("PAYMENT_RECEIVED makes a delivery awaiting payment pending, once", async () => {
    const paymentId = `pay_${randomUUID().slice(0, 8)}`;
    const [delivery] = await db()`
      insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
        origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
        gateway_payment_id)
      values (${a.companyId}, 'awaiting_payment', 'pending', 'pix', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
        20.00, 0.8, ${paymentId})
      returning id`;
    // The gateway received the payment (a charge made outside the fake's API, under the id the row names).
    await gateway.put("payment", { id: paymentId, status: "RECEIVED", value: 20, externalReference: delivery.id });
    const body = {
      event: "PAYMENT_RECEIVED",
      payment: { id: paymentId, status: "RECEIVED", value: 20, externalReference: delivery.id },
    };
    expect((await webhook(companyWebhook(b), body, secretB)).status).toBe(200);
    expect((await db()`select status from public.deliveries where id = ${delivery.id}`)[0].status).toBe(
      "awaiting_payment",
    );
    expect((await webhook(companyWebhook(a), body, secretA)).status).toBe(200);
    expect((await db()`select status from public.deliveries where id = ${delivery.id}`)[0].status).toBe("pending");
    expect((await lastLog())[0]).toMatchObject({
      company_id: a.companyId,
      event: "PAYMENT_RECEIVED",
      object_id: paymentId,
      result: "processed",
    });
    expect((await webhook(companyWebhook(a), body, secretA)).status).toBe(200);
    expect((await lastLog())[0]).toMatchObject({ result: "duplicate" });
  });
});

describe("the unsigned platform webhook", () => {
  it("does not apply the claim: the gateway still reports the transfer pending", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    const res = await webhook(PLATFORM_WEBHOOK, transferBody("TRANSFER_DONE", transferId, id), null);
    expect(res.status).toBe(200);
    expect(await statusOf(id)).toBe("processing");
    expect((await lastLog())[0]).toMatchObject({
      company_id: a.companyId,
      result: "ignored",
      detail: "unsigned, checked with the gateway (PENDING): the transfer is not settled yet",
    });
    // It asked the gateway, with the company's key.
    expect((await gateway.state()).log.at(-1)).toMatchObject({ method: "GET", path: `/v3/transfers/${transferId}` });
  });

  it("cannot redirect a withdrawal to a transfer that is not its own", async () => {
    const { id } = await processingWithdrawal(a.driver);
    // Even a transfer the gateway holds, done and naming the withdrawal as its reference.
    await gateway.put("transfer", { id: "tra_invented", status: "DONE", value: 10, externalReference: id });
    const res = await webhook(PLATFORM_WEBHOOK, transferBody("TRANSFER_DONE", "tra_invented", id), null);
    expect(res.status).toBe(200);
    expect((await lastLog())[0]).toMatchObject({ result: "ignored", detail: "unsigned, no such withdrawal" });
    expect(await statusOf(id)).toBe("processing");
  });

  it("about nothing of ours is ignored", async () => {
    const res = await webhook(
      PLATFORM_WEBHOOK,
      transferBody("TRANSFER_DONE", "tra_nobody", randomUUID()),
      null,
    );
    expect(res.status).toBe(200);
    expect((await lastLog())[0]).toMatchObject({
      company_id: null,
      result: "ignored",
      detail: "unsigned, no such withdrawal",
    });
  });

  it("is 503 (not 200) when the gateway cannot confirm it", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.down();
    const res = await webhook(PLATFORM_WEBHOOK, transferBody("TRANSFER_DONE", transferId, id), null);
    expect(res.status).toBe(503);
    expect(await statusOf(id)).toBe("processing");
    expect((await lastLog())[0]).toMatchObject({ company_id: a.companyId, result: "error" });
  });

  it("is 503 within 5 s when the gateway is slow", { timeout: 20_000 }, async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.slow(8_000);
    const started = Date.now();
    const res = await webhook(PLATFORM_WEBHOOK, transferBody("TRANSFER_DONE", transferId, id), null);
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await statusOf(id)).toBe("processing");
  });
});

describe("the audit log", () => {
  it("has one row per request, accepted or not, and never a secret or a signature", async () => {
    const { id, transferId } = await processingWithdrawal(a.driver);
    await gateway.setStatus(transferId, "DONE");
    const requests = [
      () => webhook(companyWebhook(a), transferBody("TRANSFER_DONE", transferId, id), secretA),
      () => webhook(companyWebhook(a), transferBody("TRANSFER_DONE", transferId, id), secretA),
      () => webhook(companyWebhook(a), transferBody("TRANSFER_DONE", transferId, id), "wrong"),
      () => webhook(companyWebhook(a), "{", secretA),
      () => webhook(companyWebhook(randomUUID()), { event: "X" }, secretA),
      () => webhook(companyWebhook(a), { event: "X" }, secretA),
      () => webhook(PLATFORM_WEBHOOK, { event: "X" }, stack().platformWebhookSecret),
      () => webhook(PLATFORM_WEBHOOK, { event: "X" }, null),
    ];
    const before = await logSize();
    const statuses = [];
    for (const request of requests) statuses.push((await request()).status);
    expect(statuses).toEqual([200, 200, 401, 400, 404, 200, 200, 200]);
    const rows = await lastLog(requests.length);
    expect(await logSize()).toBe(before + requests.length);
    expect(rows.map((r) => r.result).reverse()).toEqual([
      "processed",
      "duplicate",
      "rejected",
      "rejected",
      "rejected",
      "ignored",
      "ignored",
      "ignored",
    ]);

    // The company panel reads its own rows.
    const panel = await api("/api/v1/webhook-events?limit=5", { token: a.admin.token });
    expect(panel.status).toBe(200);
    expect(panel.body.items[0]).toMatchObject({ event: "X", result: "ignored", received_at: expect.any(String) });

    const signature = sign(secretA, JSON.stringify(transferBody("TRANSFER_DONE", transferId, id)));
    const everything = JSON.stringify(await db()`select * from public.webhook_events`);
    for (const secret of [secretA, secretB, stack().platformWebhookSecret, signature]) {
      expect(everything).not.toContain(secret);
      expect(readFileSync(stack().logFile, "utf8")).not.toContain(secret);
    }
  });
});

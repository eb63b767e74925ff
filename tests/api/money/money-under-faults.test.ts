// Money under faults (docs/state-machines.md, Withdrawal): a transfer the
// gateway made is never lost, whatever fails between us and the gateway, and
// no event moves money that the gateway's own record does not show.
import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { gateway } from "../../support/fakes.ts";
import { creditDriver, debitsOf, requestWithdrawal, walletOf } from "../../support/money.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";

let company: TestCompany;
let secret: string;

beforeAll(async () => {
  company = await createCompany("Faults Co");
  ({ webhookSecret: secret } = await configureGateway(company));
});

afterEach(async () => {
  await gateway.set("ok", 0);
});

/** TRANSFER_* as docs/spec.md §6 shows it: the transfer's id only, no externalReference. */
const transferById = (event: string, transferId: string) =>
  webhook(companyWebhook(company), { event, transfer: { id: transferId, value: 10, status: "DONE" } }, secret);

const withdrawalRow = async (id: string) =>
  (await db()`select status, in_doubt, failure_kind, gateway_transfer_id from public.withdrawals where id = ${id}`)[0];

/** The transfer the gateway made for a withdrawal (the fake's record), by our externalReference. */
async function transferFor(withdrawalId: string) {
  const { transfers } = await gateway.state();
  const made = transfers.filter((t) => t.externalReference === withdrawalId);
  expect(made, "exactly one transfer at the gateway").toHaveLength(1);
  return made[0];
}

/** A fresh driver of the company with `amount` to withdraw. */
async function fundedDriver(amount = "100.00") {
  const driver = company.driver;
  await creditDriver(company.companyId, driver, amount);
  return driver;
}

const reconcile = () =>
  api("/functions/v1/gateway-webhook/reconcile", {
    method: "POST",
    body: {},
    headers: { authorization: `Bearer ${stack().serviceRoleKey}` },
  });

describe("a transfer the gateway made but did not confirm", () => {
  it("after a 500: the withdrawal stays in doubt with its funds held, and TRANSFER_DONE by id completes it once", async () => {
    const driver = await fundedDriver();
    const before = await walletOf(driver);
    await gateway.set("fail-after-create");
    const res = await requestWithdrawal(driver, 10);
    expect(res.status).toBe(502);
    const [{ id }] = await db()`select id from public.withdrawals where driver_id = ${driver.driverId}
                                order by created_at desc limit 1`;
    expect(await withdrawalRow(id)).toMatchObject({ status: "processing", in_doubt: true, gateway_transfer_id: null });
    expect((await walletOf(driver)).available_balance).toBe(before.available_balance - 10);
    await gateway.set("ok");

    const transfer = await transferFor(id);
    await gateway.setStatus(transfer.id, "DONE");
    const event = await transferById("TRANSFER_DONE", transfer.id);
    expect(event.status).toBe(200);
    expect(await withdrawalRow(id)).toMatchObject({
      status: "completed",
      in_doubt: false,
      gateway_transfer_id: transfer.id,
    });
    expect(await debitsOf(id)).toBe(1);
    expect((await transferById("TRANSFER_DONE", transfer.id)).status).toBe(200);
    expect(await debitsOf(id)).toBe(1);
    expect((await walletOf(driver)).balance).toBe(before.balance - 10);
  });

  it("after a timeout: the same, the transfer made once the gateway answered too late", async () => {
    const driver = await fundedDriver();
    await gateway.set("ok", 10_500);
    const res = await requestWithdrawal(driver, 7);
    expect(res.status).toBe(502);
    const [{ id }] = await db()`select id from public.withdrawals where driver_id = ${driver.driverId}
                                order by created_at desc limit 1`;
    expect(await withdrawalRow(id)).toMatchObject({ status: "processing", in_doubt: true });
    await gateway.set("ok", 0);
    // The fake finishes the late request in the background.
    await expect.poll(async () => (await gateway.state()).transfers.some((t) => t.externalReference === id), {
      timeout: 5_000,
    }).toBe(true);
    const transfer = await transferFor(id);
    await gateway.setStatus(transfer.id, "DONE");
    expect((await transferById("TRANSFER_DONE", transfer.id)).status).toBe(200);
    expect(await withdrawalRow(id)).toMatchObject({ status: "completed" });
    expect(await debitsOf(id)).toBe(1);
  }, 30_000);

  it("when the edge died between the gateway's answer and our write: TRANSFER_DONE by id is matched at the gateway", async () => {
    const driver = await fundedDriver();
    // What the edge did before it died: the withdrawal recorded as the driver, the transfer made at the gateway.
    const [row] = await db().begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${JSON.stringify(claimsOf(driver.token))}, true),
                      set_config('role', 'driver', true)`;
      return await tx`select (public.request_withdrawal(12, '12345678909', 'cpf')).id as id`;
    });
    const id = row.id as string;
    const transferId = `tra_${randomUUID()}`;
    await gateway.put("transfer", {
      id: transferId,
      status: "DONE",
      value: 12,
      description: `Withdrawal ${id}`,
      externalReference: id,
    });
    expect((await transferById("TRANSFER_DONE", transferId)).status).toBe(200);
    expect(await withdrawalRow(id)).toMatchObject({ status: "completed", gateway_transfer_id: transferId });
    expect(await debitsOf(id)).toBe(1);
    const [audit] = await db()`select result, detail from public.webhook_events
                               where object_id = ${transferId} order by received_at desc limit 1`;
    expect(audit.result).toBe("processed");
  });

  it("reconciliation never releases funds the gateway paid out, and releases those it never moved", async () => {
    const driver = await fundedDriver();
    // In doubt, and the gateway did make it (DONE).
    await gateway.set("fail-after-create");
    expect((await requestWithdrawal(driver, 5)).status).toBe(502);
    await gateway.set("ok");
    const [{ id: paid }] = await db()`select id from public.withdrawals where driver_id = ${driver.driverId}
                                      order by created_at desc limit 1`;
    await gateway.setStatus((await transferFor(paid)).id, "DONE");
    // In doubt, and the gateway never made it: released only 15 minutes after the request.
    await gateway.set("fail");
    expect((await requestWithdrawal(driver, 6)).status).toBe(502);
    await gateway.set("ok");
    const [{ id: never }] = await db()`select id from public.withdrawals where driver_id = ${driver.driverId}
                                       order by created_at desc limit 1`;
    const first = await reconcile();
    expect(first.status).toBe(200);
    expect(await withdrawalRow(paid)).toMatchObject({ status: "completed" });
    expect(await debitsOf(paid)).toBe(1);
    expect(await withdrawalRow(never)).toMatchObject({ status: "processing", in_doubt: true });

    // 20 minutes pass (the guard trigger keeps created_at as it is, so it is bypassed here).
    await db().begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update public.withdrawals set created_at = now() - interval '20 minutes' where id = ${never}`;
    });
    expect((await reconcile()).status).toBe(200);
    expect(await withdrawalRow(never)).toMatchObject({ status: "failed", failure_kind: "no_transfer" });
    expect(await debitsOf(never)).toBe(0);
    // Run again: nothing more moves.
    expect((await reconcile()).status).toBe(200);
    expect(await debitsOf(paid)).toBe(1);
  });

  it("reconciliation needs the service role key", async () => {
    expect((await api("/functions/v1/gateway-webhook/reconcile", { method: "POST", body: {} })).status).toBe(401);
    expect(
      (await api("/functions/v1/gateway-webhook/reconcile", {
        method: "POST",
        body: {},
        headers: { authorization: `Bearer ${stack().anonKey}` },
      })).status,
    ).toBe(401);
  });
});

describe("an event the gateway's record contradicts", () => {
  it("a TRANSFER_DONE signed with the company secret, for a transfer the gateway reports FAILED, moves no money", async () => {
    const driver = await fundedDriver();
    const res = await requestWithdrawal(driver, 9);
    expect(res.status).toBe(201);
    await gateway.setStatus(res.body.gateway_transfer_id, "FAILED");
    const before = await walletOf(driver);
    expect((await transferById("TRANSFER_DONE", res.body.gateway_transfer_id)).status).toBe(200);
    expect(await withdrawalRow(res.body.id)).toMatchObject({ status: "failed", failure_kind: "transfer_failed" });
    expect(await debitsOf(res.body.id)).toBe(0);
    expect((await walletOf(driver)).balance).toBe(before.balance);
  });

  it("TRANSFER_FAILED then TRANSFER_DONE end in the state the gateway reports", async () => {
    const driver = await fundedDriver();
    const res = await requestWithdrawal(driver, 4);
    const transferId = res.body.gateway_transfer_id;
    await gateway.setStatus(transferId, "DONE");
    // The FAILED claim arrives first, but the gateway already says DONE.
    expect((await transferById("TRANSFER_FAILED", transferId)).status).toBe(200);
    expect(await withdrawalRow(res.body.id)).toMatchObject({ status: "completed" });
    expect((await transferById("TRANSFER_DONE", transferId)).status).toBe(200);
    expect(await debitsOf(res.body.id)).toBe(1);
  });

  it("a gateway that cannot be asked: 503, nothing applied, and applied on redelivery", async () => {
    const driver = await fundedDriver();
    const res = await requestWithdrawal(driver, 3);
    const transferId = res.body.gateway_transfer_id;
    await gateway.setStatus(transferId, "DONE");
    await gateway.set("fail");
    expect((await transferById("TRANSFER_DONE", transferId)).status).toBe(503);
    expect(await withdrawalRow(res.body.id)).toMatchObject({ status: "processing" });
    await gateway.set("ok");
    expect((await transferById("TRANSFER_DONE", transferId)).status).toBe(200);
    expect(await withdrawalRow(res.body.id)).toMatchObject({ status: "completed" });
  });
});

describe("the webhook's limits", () => {
  it("answers 503 within 5 s when a table it needs is locked for 8 s", async () => {
    const driver = await fundedDriver();
    const res = await requestWithdrawal(driver, 2);
    await gateway.setStatus(res.body.gateway_transfer_id, "DONE");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const locked = new Promise<void>((ready) => {
      void db().begin(async (tx) => {
        await tx`lock table public.withdrawals in access exclusive mode`;
        ready();
        await Promise.race([held, new Promise((r) => setTimeout(r, 8_000))]);
      });
    });
    await locked;
    const started = Date.now();
    const answer = await transferById("TRANSFER_DONE", res.body.gateway_transfer_id);
    const took = Date.now() - started;
    release();
    expect(answer.status).toBe(503);
    expect(took).toBeLessThan(5_000);
    // Redelivered once the lock is gone, it is applied.
    await expect.poll(async () => (await transferById("TRANSFER_DONE", res.body.gateway_transfer_id)).status, {
      timeout: 10_000,
    }).toBe(200);
    expect(await debitsOf(res.body.id)).toBe(1);
  }, 30_000);

  it("refuses a 2 MiB body with 413, also without a Content-Length", async () => {
    const big = JSON.stringify({ event: "TRANSFER_DONE", transfer: { id: "x", padding: "a".repeat(2 * 1024 * 1024) } });
    expect((await webhook(companyWebhook(company), big, secret)).status).toBe(413);
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${stack().apiUrl}${companyWebhook(company)}`, {
      method: "POST",
      body: chunked,
      headers: { "content-type": "application/json" },
      // @ts-expect-error: Node's fetch needs this for a stream body.
      duplex: "half",
    });
    expect(res.status).toBe(413);
  });
});

describe("a payment received for a cancelled delivery", () => {
  it("is recorded and flagged for a refund", async () => {
    const { createPixDelivery } = await import("../../support/deliveries.ts");
    const created = await createPixDelivery(company);
    expect(created.status).toBe(201);
    const paymentId = created.body.payment.gateway_payment_id;
    const event = (name: string) =>
      webhook(companyWebhook(company), { event: name, payment: { id: paymentId, status: name.slice(8) } }, secret);
    await gateway.setStatus(paymentId, "OVERDUE");
    expect((await event("PAYMENT_OVERDUE")).status).toBe(200);
    // The client pays after all.
    await gateway.setStatus(paymentId, "RECEIVED");
    expect((await event("PAYMENT_RECEIVED")).status).toBe(200);
    const delivery = (await api(`/api/v1/deliveries/${created.body.id}`, { token: company.owner.token })).body;
    expect(delivery).toMatchObject({ status: "cancelled", payment_status: "received", refund_due: true });
  });
});

/** The claims of a session token, as the edge would set them. */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
}

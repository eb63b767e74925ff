// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Wallets and withdrawals over HTTP with the gateway fake (issue 5): the
// withdrawal from request to completion or failure, the balance it holds and
// releases, the gateway's refusals and outages, concurrent requests against
// one balance, who sees which withdrawal, and the realtime broadcast.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, type DriverMember, type TestCompany } from "../../support/api.ts";
import { gateway } from "../../support/fakes.ts";
import {
  creditDriver,
  debitsOf,
  gatewayTransferEvent,
  requestWithdrawal,
  transferEvent,
  walletOf,
} from "../../support/money.ts";
import { supabaseClient } from "../../support/supabase.ts";

let a: TestCompany;
let b: TestCompany;
let secretA: string;
let apiKeyA: string;

beforeAll(async () => {
  [a, b] = await Promise.all([createCompany("Money A"), createCompany("Money B")]);
  ({ webhookSecret: secretA, apiKey: apiKeyA } = await configureGateway(a));
});

afterEach(async () => {
  await gateway.reset();
});

const credit = (company: TestCompany, driver: DriverMember, amount: string) =>
  creditDriver(company.companyId, driver, amount);
const wallet = walletOf;
const withdraw = requestWithdrawal;
/** What a 502 adds after the gateway's failure: the withdrawal is in doubt, not failed. */
const inDoubtDetail = (id: string) =>
  `The withdrawal ${id} stays processing (in_doubt) with its amount held until the gateway confirms whether the ` +
  "transfer was made.";

describe("wallet", () => {
  it("starts empty, in BRL, and shows each credit", async () => {
    expect(await wallet(b.driver)).toEqual({
      driver_id: b.driver.driverId,
      balance: 0,
      available_balance: 0,
      currency: "BRL",
    });
    await credit(b, b.driver, "12.34");
    expect(await wallet(b.driver)).toMatchObject({ balance: 12.34, available_balance: 12.34 });
    const page = await api("/api/v1/wallets/me/transactions", { token: b.driver.token });
    expect(page.status).toBe(200);
    expect(page.body.next_cursor).toBeNull();
    expect(page.body.items).toEqual([
      expect.objectContaining({
        kind: "delivery_credit",
        amount: 12.34,
        withdrawal_id: null,
        delivery_id: expect.any(String),
      }),
    ]);
  });

  it("is the driver's alone", async () => {
    for (const member of [a.owner, a.admin, a.legacyAdmin]) {
      expect((await api("/api/v1/wallets/me", { token: member.token })).status).toBe(403);
      expect((await api("/api/v1/wallets/me/transactions", { token: member.token })).status).toBe(403);
    }
    expect((await api("/api/v1/wallets/me")).status).toBe(401);
  });

  it("pages its ledger with a cursor", async () => {
    await credit(b, b.driver2, "1.00");
    await credit(b, b.driver2, "2.00");
    await credit(b, b.driver2, "3.00");
    const first = await api("/api/v1/wallets/me/transactions?limit=2", { token: b.driver2.token });
    expect(first.body.items.map((e: { amount: number }) => e.amount)).toEqual([3, 2]);
    const second = await api(`/api/v1/wallets/me/transactions?limit=2&cursor=${first.body.next_cursor}`, {
      token: b.driver2.token,
    });
    expect(second.body).toEqual({ items: [expect.objectContaining({ amount: 1 })], next_cursor: null });
    expect((await api("/api/v1/wallets/me/transactions?limit=0", { token: b.driver2.token })).status).toBe(400);
    expect((await api("/api/v1/wallets/me/transactions?cursor=zz", { token: b.driver2.token })).status).toBe(400);
  });
});

describe("a withdrawal", () => {
  let driver: DriverMember;

  beforeAll(async () => {
    driver = a.driver;
    await credit(a, driver, "100.00");
  });

  it("goes from processing to completed, debiting the wallet once", async () => {
    const created = await withdraw(driver, 30);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      driver_id: driver.driverId,
      amount: 30,
      status: "processing",
      pix_key: "*******8909",
      pix_key_type: "cpf",
      gateway_transfer_id: expect.any(String),
      error_message: null,
      completed_at: null,
    });
    const id = created.body.id;

    // The transfer was asked for with the company's key and our id as its reference.
    const { transfers, log } = await gateway.state();
    expect(transfers).toEqual([
      expect.objectContaining({
        id: created.body.gateway_transfer_id,
        value: 30,
        pixAddressKey: "12345678909",
        pixAddressKeyType: "CPF",
        externalReference: id,
      }),
    ]);
    expect(log.at(-1)).toMatchObject({ method: "POST", path: "/v3/transfers", accessToken: apiKeyA });
    expect(await wallet(driver)).toMatchObject({ balance: 100, available_balance: 70 });

    const done = await gatewayTransferEvent(a, secretA, "TRANSFER_DONE", created.body.gateway_transfer_id, id);
    expect(done).toMatchObject({ status: 200, body: { received: true } });
    const settled = await api(`/api/v1/withdrawals/${id}`, { token: driver.token });
    expect(settled.body).toMatchObject({ status: "completed", completed_at: expect.any(String), error_message: null });
    expect(await wallet(driver)).toMatchObject({ balance: 70, available_balance: 70 });

    // Again, and as TRANSFER_APPROVED: nothing more.
    expect((await transferEvent(a, secretA, "TRANSFER_DONE", created.body.gateway_transfer_id, id)).status).toBe(200);
    expect((await transferEvent(a, secretA, "TRANSFER_APPROVED", created.body.gateway_transfer_id, id)).status).toBe(
      200,
    );
    expect(await debitsOf(id)).toBe(1);
    expect(await wallet(driver)).toMatchObject({ balance: 70, available_balance: 70 });
    const ledger = await api("/api/v1/wallets/me/transactions", { token: driver.token });
    expect(ledger.body.items[0]).toMatchObject({
      kind: "withdrawal_debit",
      amount: -30,
      withdrawal_id: id,
      delivery_id: null,
    });
  });

  it.each(["TRANSFER_FAILED", "TRANSFER_CANCELLED"])("fails on %s, leaving the balance whole", async (event) => {
    const before = await wallet(driver);
    const created = await withdraw(driver, 10);
    expect(created.status).toBe(201);
    expect((await wallet(driver)).available_balance).toBe(before.available_balance - 10);

    expect(
      (await gatewayTransferEvent(a, secretA, event, created.body.gateway_transfer_id, created.body.id)).status,
    ).toBe(200);
    const failed = await api(`/api/v1/withdrawals/${created.body.id}`, { token: driver.token });
    expect(failed.body).toMatchObject({ status: "failed", error_message: event, completed_at: null });
    expect(await wallet(driver)).toEqual(before);

    // A later success claim, which the gateway's record (still failed) does not confirm, does not revive it.
    expect((await transferEvent(a, secretA, "TRANSFER_DONE", created.body.gateway_transfer_id, created.body.id)).status)
      .toBe(200);
    expect((await api(`/api/v1/withdrawals/${created.body.id}`, { token: driver.token })).body.status).toBe("failed");
    expect(await debitsOf(created.body.id)).toBe(0);
    expect(await wallet(driver)).toEqual(before);
  });

  it("is settled even when the event overtakes the transfer id (found by externalReference)", async () => {
    // The gateway makes the transfer at once but its answer to us is late.
    await gateway.lateAnswer(1_000);
    const pending = withdraw(driver, 5);
    // Wait until the gateway holds the transfer, then report it done before the gateway has answered us.
    let transfer: { id: string; externalReference?: string | null } | undefined;
    for (let i = 0; i < 100 && !transfer; i++) {
      transfer = (await gateway.state()).transfers[0];
      if (!transfer) await new Promise((r) => setTimeout(r, 10));
    }
    expect(transfer).toBeDefined();
    const id = transfer!.externalReference!;
    const [before] = await db()`select status, gateway_transfer_id from public.withdrawals where id = ${id}`;
    expect(before).toEqual({ status: "processing", gateway_transfer_id: null });
    expect((await gatewayTransferEvent(a, secretA, "TRANSFER_DONE", transfer!.id, id)).status).toBe(200);
    const created = await pending;
    expect(created.status).toBe(201);
    const settled = await api(`/api/v1/withdrawals/${id}`, { token: driver.token });
    expect(settled.body).toMatchObject({ status: "completed", gateway_transfer_id: created.body.gateway_transfer_id });
    expect(await debitsOf(id!)).toBe(1);
  });

  it("above the available balance is 422 and changes nothing", async () => {
    const before = await wallet(driver);
    const [count] = await db()`select count(*)::int as n from public.withdrawals where driver_id = ${driver.driverId}`;
    const res = await withdraw(driver, before.available_balance + 0.01);
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe(
      `insufficient balance: available ${before.available_balance.toFixed(2)}, requested ${
        (before.available_balance + 0.01).toFixed(2)
      }`,
    );
    expect(await wallet(driver)).toEqual(before);
    expect((await db()`select count(*)::int as n from public.withdrawals where driver_id = ${driver.driverId}`)[0].n)
      .toBe(count.n);
    expect((await gateway.state()).transfers).toEqual([]);
  });

  it("refused by the gateway (4xx) is failed with its message, 422, and releases the funds", async () => {
    const before = await wallet(driver);
    await gateway.set("reject");
    const res = await withdraw(driver, 10);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain("Operation rejected by the gateway");
    const [row] = await db()`select status, error_message, failure_kind, in_doubt from public.withdrawals
                             where driver_id = ${driver.driverId} order by created_at desc limit 1`;
    expect(row.status).toBe("failed");
    expect(row.error_message).toContain("Operation rejected by the gateway");
    expect(row).toMatchObject({ failure_kind: "gateway_rejected", in_doubt: false });
    expect(await wallet(driver)).toEqual(before);
  });

  it.each([
    ["failing (5xx)", () => gateway.set("fail")],
    ["down", () => gateway.down()],
  ])("with the gateway %s answers 502 and stays processing in doubt, its funds held", async (_, breakGateway) => {
    const before = await wallet(driver);
    await breakGateway();
    const res = await withdraw(driver, 10);
    expect(res.status).toBe(502);
    const [row] = await db()`select id, status, error_message, in_doubt, failure_kind from public.withdrawals
                             where driver_id = ${driver.driverId} order by created_at desc limit 1`;
    expect(row).toMatchObject({
      status: "processing",
      in_doubt: true,
      failure_kind: null,
      error_message: expect.stringContaining("Payment gateway unavailable"),
    });
    expect(res.body.detail).toBe(`${row.error_message}. ${inDoubtDetail(row.id)}`);
    expect((await api(`/api/v1/withdrawals/${row.id}`, { token: driver.token })).body).toMatchObject({
      status: "processing",
      in_doubt: true,
      gateway_transfer_id: null,
    });
    expect(await wallet(driver)).toEqual({ ...before, available_balance: before.available_balance - 10 });
  });

  // A gateway that does not answer in time, before its head or in the middle of its body: the same 10 s deadline.
  for (
    const [name, fault] of [
      [
        "with the gateway slower than 10 s answers 502 and stays processing in doubt, its funds held",
        () => gateway.slow(11_000),
      ],
      [
        "with the gateway's answer stalling after its head answers 502 (timed out) within 10 s, in doubt",
        () => gateway.stalledBody(11_000),
      ],
    ] as const
  ) {
    it(name, { timeout: 30_000 }, async () => {
      const before = await wallet(driver);
      await fault();
      const started = Date.now();
      const res = await withdraw(driver, 10);
      expect(res.status).toBe(502);
      const [row] = await db()`select id, status, in_doubt from public.withdrawals where driver_id = ${driver.driverId}
                               order by created_at desc limit 1`;
      expect(row).toMatchObject({ status: "processing", in_doubt: true });
      expect(res.body.detail).toBe(`Payment gateway unavailable: timed out. ${inDoubtDetail(row.id)}`);
      expect(Date.now() - started).toBeLessThan(11_000);
      expect(await wallet(driver)).toEqual({ ...before, available_balance: before.available_balance - 10 });
    });
  }

  it("needs the company's gateway configuration (422)", async () => {
    await credit(b, b.driver, "50.00");
    const res = await withdraw(b.driver, 10);
    expect(res).toMatchObject({ status: 422, body: { detail: "the company has not configured the payment gateway" } });
  });

  it("is for drivers only", async () => {
    for (const member of [a.owner, a.admin, a.legacyAdmin]) {
      expect(
        (await api("/api/v1/withdrawals", {
          token: member.token,
          body: { amount: 1, pix_key: "12345678909", pix_key_type: "cpf" },
        })).status,
      )
        .toBe(403);
    }
  });

  it.each([
    [{ amount: 1, pix_key: "1234567890", pix_key_type: "cpf" }, "pix_key"],
    [{ amount: 1, pix_key: "123.456.789-01", pix_key_type: "cpf" }, "pix_key"],
    [{ amount: 1, pix_key: "1234567800019", pix_key_type: "cnpj" }, "pix_key"],
    [{ amount: 1, pix_key: "not-an-email", pix_key_type: "email" }, "pix_key"],
    [{ amount: 1, pix_key: "(11) 3333-4444", pix_key_type: "phone" }, "pix_key"],
    [{ amount: 1, pix_key: "abc", pix_key_type: "evp" }, "pix_key"],
    [{ amount: 1, pix_key: "12345678909", pix_key_type: "iban" }, "pix_key_type"],
    [{ amount: 0, pix_key: "12345678909", pix_key_type: "cpf" }, "amount"],
    [{ amount: 1.001, pix_key: "12345678909", pix_key_type: "cpf" }, "amount"],
    [{ amount: "10", pix_key: "12345678909", pix_key_type: "cpf" }, "amount"],
    [{ pix_key: "12345678909", pix_key_type: "cpf" }, "amount"],
  ])("with a malformed body %j is 400 at %s", async (body, field) => {
    const res = await api("/api/v1/withdrawals", { token: driver.token, body });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ["body", field] })]));
  });

  it("accepts every key type in its format", async () => {
    await credit(a, a.driver2, "5.00");
    for (
      const [key, type] of [
        ["12345678909", "cpf"],
        ["12345678000195", "cnpj"],
        ["driver@example.com", "email"],
        ["+5511999998888", "phone"],
        ["123e4567-e89b-12d3-a456-426614174000", "evp"],
      ]
    ) {
      const res = await withdraw(a.driver2, 1, key, type);
      expect(res.status, type).toBe(201);
      expect(res.body.pix_key).toBe(`${"*".repeat(key.length - 4)}${key.slice(-4)}`);
    }
    expect((await gateway.state()).transfers.map((t) => t.pixAddressKeyType)).toEqual([
      "CPF",
      "CNPJ",
      "EMAIL",
      "PHONE",
      "EVP",
    ]);
  });
});

describe("a withdrawal whose transfer the gateway made but did not confirm", () => {
  let company: TestCompany;
  let secret: string;

  beforeAll(async () => {
    company = await createCompany("Money lost answer");
    ({ webhookSecret: secret } = await configureGateway(company));
  });

  /**
   * A withdrawal answered 502 although the gateway recorded its transfer: in doubt, its amount held.
   * Returns its id and the id the gateway holds.
   */
  async function lostAnswer(driver: DriverMember, amount: number) {
    await gateway.set("fail-after-create");
    const res = await withdraw(driver, amount);
    await gateway.set("ok");
    expect(res.status).toBe(502);
    const [row] = await db()`select id, status, error_message, gateway_transfer_id, in_doubt from public.withdrawals
                             where driver_id = ${driver.driverId} order by created_at desc limit 1`;
    expect(res.body.detail).toBe(`Payment gateway unavailable: HTTP 500. ${inDoubtDetail(row.id)}`);
    expect(row).toMatchObject({ status: "processing", in_doubt: true, gateway_transfer_id: null });
    const transfer = (await gateway.state()).transfers.find((t) => t.externalReference === row.id);
    expect(transfer).toMatchObject({ value: amount, status: "PENDING" });
    return { id: row.id as string, transferId: transfer!.id };
  }

  it("stays in doubt with its funds held, then completed with one debit by the late TRANSFER_DONE the gateway confirms", async () => {
    await credit(company, company.driver, "50.00");
    const { id, transferId } = await lostAnswer(company.driver, 20);
    expect(await wallet(company.driver)).toMatchObject({ balance: 50, available_balance: 30 });

    const done = await gatewayTransferEvent(company, secret, "TRANSFER_DONE", transferId, id);
    expect(done).toMatchObject({ status: 200, body: { received: true } });
    const settled = await api(`/api/v1/withdrawals/${id}`, { token: company.driver.token });
    expect(settled.body).toMatchObject({
      status: "completed",
      gateway_transfer_id: transferId,
      completed_at: expect.any(String),
      error_message: null,
    });
    expect(await debitsOf(id)).toBe(1);
    expect(await wallet(company.driver)).toMatchObject({ balance: 30, available_balance: 30 });
    const [logged] = await db()`select result, detail from public.webhook_events
                                where company_id = ${company.companyId} order by received_at desc, id desc limit 1`;
    expect(logged).toEqual({
      result: "processed",
      detail: "checked with the gateway (DONE = TRANSFER_DONE): withdrawal completed",
    });
    expect((await api(`/api/v1/withdrawals/${id}`, { token: company.driver.token })).body.in_doubt).toBe(false);

    // A copy is a duplicate; a contradicting TRANSFER_FAILED, even once the gateway reports it, is ignored.
    expect((await transferEvent(company, secret, "TRANSFER_DONE", transferId, id)).status).toBe(200);
    expect((await gatewayTransferEvent(company, secret, "TRANSFER_FAILED", transferId, id)).status).toBe(200);
    const results = await db()`select result from public.webhook_events where object_id = ${transferId}
                               order by received_at, id`;
    expect(results.map((r) => r.result)).toEqual(["processed", "duplicate", "ignored"]);
    expect(await debitsOf(id)).toBe(1);
    expect((await api(`/api/v1/withdrawals/${id}`, { token: company.driver.token })).body.status).toBe("completed");
    expect(await wallet(company.driver)).toMatchObject({ balance: 30, available_balance: 30 });
  });

  it("is failed and its funds released once, when the gateway reports the transfer FAILED", async () => {
    await credit(company, company.driver2, "10.00");
    const { id, transferId } = await lostAnswer(company.driver2, 10);
    expect(await wallet(company.driver2)).toMatchObject({ balance: 10, available_balance: 0 });
    expect((await gatewayTransferEvent(company, secret, "TRANSFER_FAILED", transferId, id)).status).toBe(200);
    // A copy changes nothing more.
    expect((await transferEvent(company, secret, "TRANSFER_FAILED", transferId, id)).status).toBe(200);
    const logged = await db()`select result from public.webhook_events where object_id = ${transferId}
                              order by received_at, id`;
    expect(logged.map((r) => r.result)).toEqual(["processed", "duplicate"]);
    expect(
      await db()`select status, gateway_transfer_id, in_doubt, failure_kind from public.withdrawals where id = ${id}`,
    ).toEqual([{
      status: "failed",
      gateway_transfer_id: transferId,
      in_doubt: false,
      failure_kind: "transfer_failed",
    }]);
    expect(await wallet(company.driver2)).toMatchObject({ balance: 10, available_balance: 10 });
  });

  it("debits even below zero when the gateway reports DONE after FAILED and the released funds were withdrawn meanwhile: the money did leave", async () => {
    const other = await createCompany("Money below zero");
    const { webhookSecret } = await configureGateway(other);
    await credit(other, other.driver, "10.00");
    const lost = await lostAnswer(other.driver, 10);
    // The gateway first reports the transfer failed: the funds are released...
    expect((await gatewayTransferEvent(other, webhookSecret, "TRANSFER_FAILED", lost.transferId, lost.id)).status)
      .toBe(200);
    // ...and withdrawn again.
    const again = await withdraw(other.driver, 10);
    expect(again.status).toBe(201);
    await gatewayTransferEvent(other, webhookSecret, "TRANSFER_DONE", again.body.gateway_transfer_id, again.body.id);
    expect(await wallet(other.driver)).toMatchObject({ balance: 0, available_balance: 0 });

    // Then its record says the first transfer was made after all.
    expect(
      (await gatewayTransferEvent(other, webhookSecret, "TRANSFER_DONE", lost.transferId, lost.id)).status,
    ).toBe(200);
    expect((await api(`/api/v1/withdrawals/${lost.id}`, { token: other.driver.token })).body).toMatchObject({
      status: "completed",
      failure_kind: "transfer_failed",
    });
    expect(await debitsOf(lost.id)).toBe(1);
    expect(await wallet(other.driver)).toMatchObject({ balance: -10, available_balance: -10 });
    const refused = await withdraw(other.driver, 0.01);
    expect(refused).toMatchObject({
      status: 422,
      body: { detail: "insufficient balance: available -10.00, requested 0.01" },
    });
  });

  it("refused by the gateway (4xx) stays failed: a TRANSFER_DONE naming a transfer the gateway does not hold changes nothing", async () => {
    await credit(company, company.driver, "5.00");
    const before = await wallet(company.driver);
    await gateway.set("reject");
    expect((await withdraw(company.driver, 5)).status).toBe(422);
    await gateway.set("ok");
    const [row] = await db()`select id from public.withdrawals where driver_id = ${company.driver.driverId}
                             order by created_at desc limit 1`;
    const claimed = `tra_claimed_${row.id}`;
    expect((await transferEvent(company, secret, "TRANSFER_DONE", claimed, row.id)).status).toBe(200);
    const [logged] = await db()`select result, detail from public.webhook_events where object_id = ${claimed}`;
    expect(logged).toEqual({ result: "ignored", detail: `the gateway has no transfer ${claimed}` });
    expect((await api(`/api/v1/withdrawals/${row.id}`, { token: company.driver.token })).body.status).toBe("failed");
    expect(await debitsOf(row.id)).toBe(0);
    expect(await wallet(company.driver)).toEqual(before);
  });
});

describe("concurrent withdrawals", () => {
  it("50 at once against a balance that covers 3: exactly 3 are processing", async () => {
    const company = await createCompany("Money race");
    await configureGateway(company);
    await credit(company, company.driver, "30.00");
    const results = await Promise.all(Array.from({ length: 50 }, () => withdraw(company.driver, 10)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 422)).toHaveLength(47);
    const rows = await db()`select status, amount from public.withdrawals where driver_id = ${company.driver.driverId}`;
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.status === "processing")).toBe(true);
    expect(await wallet(company.driver)).toMatchObject({ balance: 30, available_balance: 0 });
    expect((await gateway.state()).transfers).toHaveLength(3);
  });
});

describe("reading withdrawals", () => {
  let mine: string;

  beforeAll(async () => {
    await credit(a, a.driver2, "10.00");
    mine = (await withdraw(a.driver2, 2)).body.id;
  });

  it("a driver lists and reads only its own", async () => {
    const list = await api("/api/v1/withdrawals?limit=100", { token: a.driver2.token });
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBeGreaterThan(0);
    expect(list.body.items.every((w: { driver_id: string }) => w.driver_id === a.driver2.driverId)).toBe(true);
    expect((await api(`/api/v1/withdrawals/${mine}`, { token: a.driver2.token })).status).toBe(200);
    expect((await api(`/api/v1/withdrawals/${mine}`, { token: a.driver.token })).status).toBe(404);
  });

  it("owners and admins see the company's; a legacy admin none; another company 404", async () => {
    for (const member of [a.owner, a.admin]) {
      const list = await api("/api/v1/withdrawals?limit=100", { token: member.token });
      const drivers = new Set(list.body.items.map((w: { driver_id: string }) => w.driver_id));
      expect(drivers).toEqual(new Set([a.driver.driverId, a.driver2.driverId]));
      expect((await api(`/api/v1/withdrawals/${mine}`, { token: member.token })).body.id).toBe(mine);
    }
    expect((await api("/api/v1/withdrawals", { token: a.legacyAdmin.token })).status).toBe(403);
    expect((await api(`/api/v1/withdrawals/${mine}`, { token: a.legacyAdmin.token })).status).toBe(403);
    expect((await api(`/api/v1/withdrawals/${mine}`, { token: b.owner.token })).status).toBe(404);
    expect((await api("/api/v1/withdrawals", { token: b.owner.token })).body.items).toEqual([]);
    expect((await api("/api/v1/withdrawals/not-a-uuid", { token: a.owner.token })).status).toBe(400);
  });

  it("pages with a cursor", async () => {
    const first = await api("/api/v1/withdrawals?limit=1", { token: a.owner.token });
    expect(first.body.items).toHaveLength(1);
    const second = await api(`/api/v1/withdrawals?limit=1&cursor=${first.body.next_cursor}`, { token: a.owner.token });
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
  });
});

describe("realtime", () => {
  const clients: ReturnType<typeof supabaseClient>[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.removeAllChannels()));
  });

  it("broadcasts withdrawal_updated to the driver and the company", async () => {
    const company = await createCompany("Money realtime");
    const { webhookSecret } = await configureGateway(company);
    await credit(company, company.driver, "20.00");

    const inboxes: Record<string, { event: string; payload: any }[]> = {};
    for (
      const [topic, token] of [
        [`driver:${company.driver.driverId}`, company.driver.token],
        [`company:${company.companyId}`, company.owner.token],
      ]
    ) {
      const supabase = supabaseClient();
      clients.push(supabase);
      await supabase.realtime.setAuth(token);
      const inbox: { event: string; payload: any }[] = (inboxes[topic] = []);
      await new Promise<void>((resolve, reject) => {
        supabase.channel(topic, { config: { private: true } })
          .on("broadcast", { event: "withdrawal_updated" }, (m) => inbox.push({ event: m.event, payload: m.payload }))
          .subscribe((status, error) =>
            status === "SUBSCRIBED" ? resolve() : status !== "CLOSED" && reject(error ?? new Error(status))
          );
      });
    }

    const created = await withdraw(company.driver, 20);
    expect(created.status).toBe(201);
    await gatewayTransferEvent(
      company,
      webhookSecret,
      "TRANSFER_DONE",
      created.body.gateway_transfer_id,
      created.body.id,
    );
    const final = (await api(`/api/v1/withdrawals/${created.body.id}`, { token: company.driver.token })).body;

    for (const inbox of Object.values(inboxes)) {
      for (let i = 0; i < 200 && !inbox.some((m) => m.payload.status === "completed"); i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(inbox.map((m) => m.payload.status)).toEqual(["processing", "processing", "completed"]);
      expect(inbox.at(-1)!.payload).toEqual(final);
    }
  });
});

describe("the OpenAPI document", () => {
  it("declares the wallet, withdrawal and webhook operations", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([
      "/api/v1/wallets/me",
      "/api/v1/wallets/me/transactions",
      "/api/v1/withdrawals",
      "/api/v1/withdrawals/{id}",
      "/api/v1/webhooks/gateway/{company_id}",
      "/api/v1/webhooks/gateway",
    ]));
    expect(Object.keys(doc.paths["/api/v1/withdrawals"].post.responses)).toEqual(
      expect.arrayContaining(["201", "400", "422", "502"]),
    );
    expect(doc.paths["/api/v1/webhooks/gateway/{company_id}"].post.security).toEqual([{ gatewaySignature: [] }]);
  });
});

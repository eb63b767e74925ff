// No path loses or creates money (issue 5, issue 10): a randomized run of
// withdrawal requests (some concurrent, some refused by the gateway, some left
// in doubt by a gateway failure, outage or lost answer, with or without a
// transfer behind them), transfer events (duplicated, concurrent, misaddressed,
// unsigned, in both payload forms) whose outcome is what the gateway fake's
// record of the transfer says, not the claim (the fake settles its transfers
// as the run goes, now and then DONE after FAILED), credits and reversals,
// checked against a model and then summed: the ledger against the deliveries
// and the withdrawals, and the withdrawals against the transfers the gateway
// holds. The seed is printed; RUN_SEED=<n> replays a run. And a refund's
// reversal waits for the wallet lock that a withdrawal request holds.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  configureGateway,
  createCompany,
  db,
  type DriverMember,
  stack,
  type TestCompany,
} from "../../support/api.ts";
import { companyWebhook, PLATFORM_WEBHOOK, webhook } from "../../support/webhooks.ts";
import { creditDriver, forgetGatewayLookups, transferStatusOf } from "../../support/money.ts";
import { gateway } from "../../support/fakes.ts";

/** mulberry32: small, seedable, good enough to pick actions. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)],
    chance: (p: number) => next() < p,
  };
}

const SEED = Number(process.env.RUN_SEED ?? Date.now() % 1_000_000);
const random = prng(SEED);

/** Cents as the JSON number the API takes: a test input, not arithmetic on money. */
const money = (cents: number) => Number((cents / 100).toFixed(2));
const cents = (amount: number | string) => Math.round(Number(amount) * 100);

type Status = "processing" | "completed" | "failed";
interface ModelWithdrawal {
  id: string;
  driver: DriverMember;
  cents: number;
  /** The transfer the gateway holds for it, if any (also for one in doubt because its answer was lost). */
  transferId: string | null;
  /** The gateway's record of that transfer: PENDING until the gateway settles it. */
  gatewayStatus: string | null;
  status: Status;
  /** Completed after it was recorded failed: its debit may take the balance below zero. */
  late: boolean;
}

let company: TestCompany;
let other: TestCompany;
let secret: string;
let otherSecret: string;
const withdrawals: ModelWithdrawal[] = [];
const credits = new Map<string, { driver: DriverMember; cents: number; reversed: boolean }>();
const history: string[] = [];

beforeAll(async () => {
  [company, other] = await Promise.all([createCompany("Ledger"), createCompany("Ledger other")]);
  [{ webhookSecret: secret }, { webhookSecret: otherSecret }] = await Promise.all([
    configureGateway(company),
    configureGateway(other),
  ]);
  await gateway.reset();
});

afterAll(async () => {
  await gateway.reset();
});

async function credit(driver: DriverMember, amountCents: number) {
  const amount = (amountCents / 100).toFixed(2);
  const deliveryId = await creditDriver(company.companyId, driver, amount);
  credits.set(deliveryId, { driver, cents: amountCents, reversed: false });
  history.push(`credit ${driver.driverId.slice(0, 4)} ${amount}`);
}

/** A refund after completion, as the deliveries issue records it: a reversal entry for the credit. */
async function reverse(deliveryId: string) {
  const entry = credits.get(deliveryId)!;
  await db()`insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
             values (${company.companyId}, ${entry.driver.driverId}, 'credit_reversal', ${
    (-entry.cents / 100).toFixed(2)
  }, ${deliveryId})`;
  entry.reversed = true;
  history.push(`reverse ${deliveryId.slice(0, 4)}`);
}

function modelBalances(driver: DriverMember) {
  let balance = 0;
  for (const c of credits.values()) if (c.driver === driver) balance += c.reversed ? 0 : c.cents;
  let held = 0;
  for (const w of withdrawals) {
    if (w.driver !== driver) continue;
    if (w.status === "completed") balance -= w.cents;
    if (w.status === "processing") held += w.cents;
  }
  return { balance, available: balance - held };
}

const MODES = ["ok", "ok", "ok", "ok", "reject", "fail", "down", "fail-after-create"] as const;

async function withdrawBatch() {
  const mode = random.pick(MODES);
  if (mode === "down") await gateway.down();
  else await gateway.set(mode);
  const requests = Array.from({ length: random.int(1, 4) }, () => {
    const driver = random.pick([company.driver, company.driver2]);
    return { driver, cents: random.int(100, 6_000) };
  });
  const responses = await Promise.all(requests.map((r) =>
    api("/api/v1/withdrawals", {
      token: r.driver.token,
      body: { amount: money(r.cents), pix_key: "12345678909", pix_key_type: "cpf" },
    })
  ));
  await gateway.up();
  await gateway.set("ok");
  let failures = 0;
  responses.forEach((res, i) => {
    const { driver, cents: amount } = requests[i];
    history.push(`withdraw ${driver.driverId.slice(0, 4)} ${money(amount)} (${mode}) -> ${res.status}`);
    if (res.status === 201) {
      expect(mode, `seed ${SEED}`).toBe("ok");
      withdrawals.push({
        id: res.body.id,
        driver,
        cents: amount,
        transferId: res.body.gateway_transfer_id,
        gatewayStatus: "PENDING",
        status: "processing",
        late: false,
      });
    } else if (res.status === 422 && String(res.body.detail).startsWith("insufficient balance")) {
      // Refused before anything was recorded.
    } else {
      expect([mode, res.status], `seed ${SEED}`).toEqual([mode, mode === "reject" ? 422 : 502]);
      failures++;
    }
  });
  // A withdrawal the gateway refused is recorded failed, its funds released; one whose request failed, timed
  // out or found the gateway down stays processing in doubt, its funds held. Its id is only in the database.
  // With "fail-after-create" the gateway holds its transfer all the same.
  if (failures > 0) {
    const known = withdrawals.map((w) => w.id);
    const unanswered = await db()`select id, driver_id, amount, status, in_doubt from public.withdrawals
                                  where company_id = ${company.companyId} and not (id = any(${known}::uuid[]))`;
    expect(unanswered.length, `seed ${SEED}`).toBe(failures);
    const transfers = mode === "fail-after-create" ? (await gateway.state()).transfers : [];
    for (const row of unanswered) {
      expect([row.status, row.in_doubt], `seed ${SEED}`).toEqual(
        mode === "reject" ? ["failed", false] : ["processing", true],
      );
      const driver = row.driver_id === company.driver.driverId ? company.driver : company.driver2;
      const transfer = transfers.find((t) => t.externalReference === row.id);
      expect(Boolean(transfer), `seed ${SEED}`).toBe(mode === "fail-after-create");
      withdrawals.push({
        id: row.id,
        driver,
        cents: cents(row.amount),
        transferId: transfer?.id ?? null,
        gatewayStatus: transfer ? "PENDING" : null,
        status: row.status,
        late: false,
      });
    }
  }
}

const EVENTS = ["TRANSFER_DONE", "TRANSFER_APPROVED", "TRANSFER_FAILED", "TRANSFER_CANCELLED"] as const;
type Route = "company" | "platform" | "other company" | "unsigned" | "reference only" | "payment form";
const ROUTES: Route[] = [
  "company",
  "company",
  "company",
  "platform",
  "other company",
  "unsigned",
  "reference only",
  "payment form",
];

async function eventBatch() {
  const target = random.pick(withdrawals);
  if (!target) return;
  const event = random.pick(EVENTS);
  const route = random.pick(ROUTES);
  const copies = random.int(1, 5);
  const claimedId = route === "reference only" ? null : target.transferId;
  // Whether the service can tell which transfer of the gateway's the claim is about, and so ask the gateway:
  // the claim names it, or our record already holds its id (an event or a reconciliation may have stored it).
  const [{ gateway_transfer_id: stored }] =
    await db()`select gateway_transfer_id from public.withdrawals where id = ${target.id}`;
  const checked = target.transferId !== null && route !== "other company" && (claimedId !== null || stored !== null);
  // The gateway settles its transfer, mostly as the event says, and now and then reports DONE after FAILED.
  // Otherwise the claim is one the gateway's record does not back. (Only before a checked event, so that
  // the gateway's record and ours never differ between steps, whenever the reconciliation job runs.)
  const settles = target.gatewayStatus === "PENDING"
    ? random.chance(0.7)
    : target.gatewayStatus !== "DONE" && target.gatewayStatus !== null && random.chance(0.25);
  if (checked && settles) {
    target.gatewayStatus = target.gatewayStatus === "PENDING" ? transferStatusOf(event) : "DONE";
    await gateway.setStatus(target.transferId!, target.gatewayStatus);
  }
  // An unsigned request may make us ask the gateway about a transfer once a minute: let a minute pass.
  if (route === "unsigned" && target.transferId) await forgetGatewayLookups(`transfer:${target.transferId}`);
  const object = {
    object: "transfer",
    id: claimedId,
    value: money(target.cents),
    status: event.startsWith("TRANSFER_D") || event === "TRANSFER_APPROVED" ? "DONE" : event.replace("TRANSFER_", ""),
    externalReference: target.id,
  };
  const body = JSON.stringify({ event, [route === "payment form" ? "payment" : "transfer"]: object });
  const [path, key] = {
    company: [companyWebhook(company), secret],
    platform: [PLATFORM_WEBHOOK, stack().platformWebhookSecret],
    "other company": [companyWebhook(other), otherSecret],
    unsigned: [PLATFORM_WEBHOOK, null],
    "reference only": [companyWebhook(company), secret],
    "payment form": [companyWebhook(company), secret],
  }[route] as [string, string | null];
  const responses = await Promise.all(Array.from({ length: copies }, () => webhook(path, body, key)));
  history.push(
    `${event} x${copies} via ${route} for ${
      target.id.slice(0, 4)
    } (${target.status}, gateway ${target.gatewayStatus}) -> ${responses.map((r) => r.status)}`,
  );
  // Copies of an unsigned request about one transfer: one asks the gateway, the others are 429.
  const asks = route === "unsigned" && target.transferId !== null;
  expect(responses.map((r) => r.status).sort(), `seed ${SEED}`).toEqual(
    asks ? [200, ...Array(copies - 1).fill(429)] : Array(copies).fill(200),
  );
  // Only what the gateway's record says moves a withdrawal, whatever the claim: DONE completes a processing
  // one or one recorded failed (late), FAILED or CANCELLED fails a processing one, PENDING moves nothing;
  // a completed one stays completed. A claim the service cannot check moves nothing.
  if (!checked) return;
  if (target.gatewayStatus === "DONE" && target.status !== "completed") {
    target.late = target.status === "failed";
    target.status = "completed";
  } else if (
    (target.gatewayStatus === "FAILED" || target.gatewayStatus === "CANCELLED") && target.status === "processing"
  ) {
    target.status = "failed";
  }
}

async function reversalOrCredit() {
  // Only refunds the wallet can still cover: a reversal after the money was withdrawn would
  // (rightly) leave a negative balance, which is not what this run is about.
  const open = [...credits.entries()].filter(([, c]) => !c.reversed && modelBalances(c.driver).available >= c.cents);
  if (open.length > 0 && random.chance(0.3)) await reverse(random.pick(open)[0]);
  else await credit(random.pick([company.driver, company.driver2]), random.int(500, 8_000));
}

describe("a randomized run of requests and events", () => {
  it(`loses and creates no money (seed ${SEED})`, { timeout: 120_000 }, async () => {
    await credit(company.driver, 10_000);
    await credit(company.driver2, 5_000);
    for (let step = 0; step < 120; step++) {
      const roll = random.int(1, 10);
      if (roll <= 4) await withdrawBatch();
      else if (roll <= 8) await eventBatch();
      else await reversalOrCredit();
    }
    const context = `seed ${SEED}\n${history.join("\n")}`;

    // The model and the service agree on every withdrawal...
    const rows = await db()`select id, driver_id, amount, status, gateway_transfer_id, error_message
                            from public.withdrawals where company_id = ${company.companyId}`;
    expect(rows.length, context).toBe(withdrawals.length);
    for (const w of withdrawals) {
      const row = rows.find((r) => r.id === w.id);
      expect(row && { status: row.status, cents: cents(row.amount) }, context).toEqual({
        status: w.status,
        cents: w.cents,
      });
    }
    // ...and on every wallet, as the driver reads it.
    for (const driver of [company.driver, company.driver2]) {
      const wallet = (await api("/api/v1/wallets/me", { token: driver.token })).body;
      const model = modelBalances(driver);
      expect({ balance: cents(wallet.balance), available: cents(wallet.available_balance) }, context).toEqual(model);
      // Only a late completion (the money left after we had released it) may take it below zero.
      const late = withdrawals.filter((w) => w.driver === driver && w.late).reduce((n, w) => n + w.cents, 0);
      expect(model.available + late, context).toBeGreaterThanOrEqual(0);
    }

    // The ledger is the deliveries' credits and reversals less the completed withdrawals, entry for entry.
    const ledger = await db()`
      select e.kind, e.amount, e.delivery_id, e.withdrawal_id, d.price * d.driver_share as earned, w.amount as withdrawn,
             w.status as withdrawal_status
      from public.wallet_entries e
      left join public.deliveries d on d.id = e.delivery_id
      left join public.withdrawals w on w.id = e.withdrawal_id
      where e.company_id = ${company.companyId}`;
    for (const e of ledger) {
      if (e.kind === "delivery_credit") expect(cents(e.amount), context).toBe(cents(e.earned));
      if (e.kind === "credit_reversal") expect(cents(e.amount), context).toBe(-cents(e.earned));
      if (e.kind === "withdrawal_debit") {
        expect(e.withdrawal_status, context).toBe("completed");
        expect(cents(e.amount), context).toBe(-cents(e.withdrawn));
      }
    }
    const debited = ledger.filter((e) => e.kind === "withdrawal_debit").map((e) => e.withdrawal_id).sort();
    expect(debited, context).toEqual(withdrawals.filter((w) => w.status === "completed").map((w) => w.id).sort());
    const sum = (kind: string) => ledger.filter((e) => e.kind === kind).reduce((n, e) => n + cents(e.amount), 0);
    const completedCents = withdrawals.filter((w) => w.status === "completed").reduce((n, w) => n + w.cents, 0);
    const creditedCents = [...credits.values()].reduce((n, c) => n + c.cents, 0);
    const reversedCents = [...credits.values()].filter((c) => c.reversed).reduce((n, c) => n + c.cents, 0);
    expect([sum("delivery_credit"), -sum("credit_reversal"), -sum("withdrawal_debit")].map((n) => n + 0), context)
      .toEqual([creditedCents, reversedCents, completedCents]);

    // Money only leaves through a transfer the gateway holds for a withdrawal that held the amount:
    // one transfer per withdrawal the gateway accepted, for exactly its amount, none for the others.
    const transfers = (await gateway.state()).transfers;
    const accepted = withdrawals.filter((w) => w.transferId !== null);
    expect(transfers.map((t) => t.externalReference).sort(), context).toEqual(accepted.map((w) => w.id).sort());
    for (const w of accepted) {
      const transfer = transfers.find((t) => t.externalReference === w.id)!;
      expect([transfer.id, cents(transfer.value!)], context).toEqual([w.transferId, w.cents]);
    }
  });
});

describe("a refund's credit reversal", () => {
  it("waits for the driver's wallet lock, which a withdrawal request holds while it checks the balance", async () => {
    const shop = await createCompany("Ledger lock");
    const { webhookSecret } = await configureGateway(shop);
    const paymentId = `pay_${randomUUID().slice(0, 8)}`;
    const [delivery] = await db()`
      with delivery as (
        insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
          origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
          driver_id, gateway_payment_id, accepted_at, started_at, completed_at)
        values (${shop.companyId}, 'completed', 'received', 'pix', 'Origin', 0, 0, 'Destination', 0, 0, 1000, 100,
          20.00, 1, ${shop.driver.driverId}, ${paymentId}, now(), now(), now())
        returning id, company_id, driver_id
      )
      insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id)
      select company_id, driver_id, 'delivery_credit', 20.00, id from delivery
      returning delivery_id as id`;
    const reversals = async () =>
      (await db()`select count(*)::int as n from public.wallet_entries
                  where delivery_id = ${delivery.id} and kind = 'credit_reversal'`)[0].n;

    // Another transaction holds the lock exactly as public.request_withdrawal takes it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = db().begin(async (tx) => {
      await tx`select from public.drivers where id = ${shop.driver.driverId} for no key update`;
      locked();
      await released;
    });
    await isLocked;
    // The gateway refunded the payment (a charge made outside the fake's API, under the id the row names).
    await gateway.put("payment", { id: paymentId, status: "REFUNDED", value: 20, externalReference: delivery.id });
    const refund = webhook(companyWebhook(shop), {
      event: "PAYMENT_REFUNDED",
      payment: { object: "payment", id: paymentId, status: "REFUNDED", value: 20, externalReference: delivery.id },
    }, webhookSecret);

    // The refund's transaction queues behind the lock instead of writing the reversal beside it.
    let waiting = false;
    for (let i = 0; i < 100 && !waiting; i++) {
      const [row] = await db()`select count(*)::int as n from pg_stat_activity
                               where wait_event_type = 'Lock' and query like '%apply_payment_event%'`;
      waiting = row.n > 0;
      if (!waiting) await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await holder;
    expect(waiting).toBe(true);

    expect(await refund).toMatchObject({ status: 200, body: { received: true } });
    expect(await reversals()).toBe(1);
    expect((await api("/api/v1/wallets/me", { token: shop.driver.token })).body).toMatchObject({
      balance: 0,
      available_balance: 0,
    });
  });
});

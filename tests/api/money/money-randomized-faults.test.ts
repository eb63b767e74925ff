// A randomized fault run (issue: money under faults): withdrawals whose
// transfer requests fail every way, then more than 1,000 webhook events with
// copies, claims that contradict the gateway, id-only and other payload forms,
// signed and unsigned, and the gateway failing under them; then the gateway
// settles everything and reconciliation runs. At the end the ledger must match
// the gateway fake to the cent: every transfer the fake made is debited exactly
// once if DONE and never otherwise, and nothing else is. Every withdrawal request
// carries an Idempotency-Key, and is also sent as copies at once or retried with
// it the way docs/spec.md §7 tells a client to (after a 502 above all): each
// copy gets the first answer again or 409, and no key makes two withdrawals.
// Prints its figures. MONEY_FAULTS_SEED repeats a run; MONEY_FAULTS_EVENTS sets
// its size.
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
import { gateway } from "../../support/fakes.ts";
import { creditDriver, requestWithdrawal } from "../../support/money.ts";
import { companyWebhook, PLATFORM_WEBHOOK, webhook } from "../../support/webhooks.ts";

const SEED = Number(process.env.MONEY_FAULTS_SEED ?? Math.floor(Math.random() * 1_000_000));
const EVENTS = Number(process.env.MONEY_FAULTS_EVENTS ?? 1_000);
const WITHDRAWALS = 60;

/** mulberry32: a small seeded generator, so that a failing run can be repeated. */
function generator(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const random = generator(SEED);
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
const chance = (p: number) => random() < p;

let company: TestCompany;
let secret: string;
const figures = {
  events: 0,
  byStatus: {} as Record<string, number>,
  withdrawals: {
    requested: 0,
    answered: {} as Record<string, number>,
    edgeDied: 0,
    /** Copies sent at once with the first request's key, and retries sent after its answer. */
    copies: 0,
    retries: 0,
    /** How the copies and retries were answered: the first answer again, or 409 while it ran. */
    replayed: 0,
    running: 0,
  },
  gatewayFaults: 0,
};

beforeAll(async () => {
  company = await createCompany("Randomized Faults Co");
  ({ webhookSecret: secret } = await configureGateway(company));
  for (const driver of [company.driver, company.driver2]) await creditDriver(company.companyId, driver, "10000.00");
});

afterAll(async () => {
  await gateway.set("ok", 0);
});

const count = (bucket: Record<string, number>, key: string | number) => {
  bucket[key] = (bucket[key] ?? 0) + 1;
};

/** The claims of a session token, as the edge would set them. */
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());

/** What the edge did before it died: the withdrawal recorded as the driver, the transfer made at the gateway. */
async function withdrawalWhoseEdgeDied(driver: DriverMember, amount: number) {
  const [row] = await db().begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify(claimsOf(driver.token))}, true),
                    set_config('role', 'driver', true)`;
    return await tx`select (public.request_withdrawal(${amount}, '12345678909', 'cpf')).id as id`;
  });
  await gateway.put("transfer", {
    id: `tra_${randomUUID()}`,
    status: "PENDING",
    value: amount,
    description: `Withdrawal ${row.id}`,
    externalReference: row.id,
    dateCreated: new Date().toISOString().slice(0, 10),
  });
}

/** One claim about a transfer, in one of the forms a gateway (or a forger with the secret) may send. */
function claim(transfer: { id: string; externalReference?: string | null }) {
  const event = pick(["TRANSFER_DONE", "TRANSFER_APPROVED", "TRANSFER_FAILED", "TRANSFER_CANCELLED"]);
  const object = pick([
    { id: transfer.id },
    { id: transfer.id, externalReference: transfer.externalReference, status: "DONE", value: 1 },
    { id: transfer.id, description: `Withdrawal ${transfer.externalReference}` },
  ]);
  const body = chance(0.15) ? { event, payment: object } : { event, transfer: object };
  const where = random();
  if (where < 0.8) return () => webhook(companyWebhook(company), body, secret);
  if (where < 0.9) return () => webhook(PLATFORM_WEBHOOK, body, stack().platformWebhookSecret);
  return () => webhook(PLATFORM_WEBHOOK, body, null);
}

async function send(call: () => Promise<{ status: number }>, allowed: number[]) {
  const res = await call();
  figures.events++;
  count(figures.byStatus, res.status);
  expect(allowed, `an event answered ${res.status}`).toContain(res.status);
}

describe("a randomized fault run", () => {
  it(`keeps the ledger equal to the gateway's transfers (seed ${SEED})`, async () => {
    // 1. Withdrawals, the gateway failing each way.
    for (let i = 0; i < WITHDRAWALS; i++) {
      const driver = pick([company.driver, company.driver2]);
      const amount = Math.round((1 + random() * 39) * 100) / 100;
      figures.withdrawals.requested++;
      if (chance(0.08)) {
        figures.withdrawals.edgeDied++;
        await withdrawalWhoseEdgeDied(driver, amount);
        continue;
      }
      const mode = pick(["ok", "ok", "ok", "ok", "ok", "ok", "ok", "fail-after-create", "fail", "reject"]);
      const key = randomUUID();
      const send = () => requestWithdrawal(driver, amount, "12345678909", "cpf", { "Idempotency-Key": key });
      await gateway.set(mode);
      // Sometimes copies at once (a double tap, a client that retries without waiting): one runs.
      const copies = chance(0.25) ? 1 + Math.floor(random() * 4) : 0;
      const answers = await Promise.all(Array.from({ length: 1 + copies }, send));
      await gateway.set("ok");
      figures.withdrawals.copies += copies;
      const ran = answers.filter((a) => a.status !== 409 && a.headers.get("idempotent-replayed") !== "true");
      expect(ran, JSON.stringify(answers.map((a) => a.status))).toHaveLength(1);
      const res = ran[0];
      count(figures.withdrawals.answered, res.status);
      expect([201, 422, 502]).toContain(res.status);
      const copy = (answer: typeof res) => {
        if (answer === res) return;
        if (answer.status === 409) figures.withdrawals.running++;
        else {
          figures.withdrawals.replayed++;
          expect({ status: answer.status, body: answer.body }).toEqual({ status: res.status, body: res.body });
        }
      };
      answers.forEach(copy);
      // A client retries a 502 (1, 2 and 4 s later; here at once), and sometimes an answer it never got.
      const retries = res.status === 502 ? 1 + Math.floor(random() * 3) : chance(0.1) ? 1 : 0;
      for (let r = 0; r < retries; r++) {
        figures.withdrawals.retries++;
        const again = await send();
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        copy(again);
      }
    }

    // 2. Events: copies, contradictions, forms, and the gateway failing under them.
    while (figures.events < EVENTS) {
      const { transfers } = await gateway.state();
      const transfer = pick(transfers.filter((t) => typeof t.externalReference === "string"));
      const roll = random();
      if (roll < 0.25 && transfer.status === "PENDING") {
        await gateway.setStatus(transfer.id, pick(["DONE", "DONE", "DONE", "FAILED", "CANCELLED"]));
      } else if (roll < 0.33) {
        figures.gatewayFaults++;
        await gateway.set("fail");
        await send(
          () => webhook(companyWebhook(company), { event: "TRANSFER_DONE", transfer: { id: transfer.id } }, secret),
          [503],
        );
        await gateway.set("ok");
      } else {
        const copies = 1 + Math.floor(random() * 4);
        const call = claim(transfer);
        // An unsigned copy may be refused (429) within the minute; signed ones are always answered 200.
        await Promise.all(Array.from({ length: copies }, () => send(call, [200, 429])));
      }
    }

    // 3. The gateway settles what is left; half the transfers' events arrive once more, the other half are
    // lost; then hours pass (the guard keeps created_at and updated_at, so it is bypassed) and reconciliation
    // asks the gateway about every withdrawal still processing.
    for (const transfer of (await gateway.state()).transfers) {
      if (transfer.status === "PENDING") await gateway.setStatus(transfer.id, pick(["DONE", "FAILED"]));
      if (chance(0.5)) {
        await send(
          () => webhook(companyWebhook(company), { event: "TRANSFER_DONE", transfer: { id: transfer.id } }, secret),
          [200],
        );
      }
    }
    await db().begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update public.withdrawals
               set created_at = created_at - interval '2 hours', updated_at = updated_at - interval '2 hours'
               where company_id = ${company.companyId} and status = 'processing'`;
    });
    const reconciled = await api("/functions/v1/gateway-webhook/reconcile", {
      method: "POST",
      body: {},
      headers: { authorization: `Bearer ${stack().serviceRoleKey}` },
    });
    expect(reconciled.status).toBe(200);
    expect(reconciled.body.withdrawals.errors).toBe(0);

    // 4. The ledger against the gateway.
    const rows = await db()<
      { id: string; driver_id: string; amount: string; status: string; debits: number; debited: string | null }[]
    >`
      select w.id, w.driver_id, w.amount, w.status,
             (select count(*)::int from public.wallet_entries e where e.withdrawal_id = w.id) as debits,
             (select sum(e.amount) from public.wallet_entries e where e.withdrawal_id = w.id) as debited
      from public.withdrawals w where w.company_id = ${company.companyId}`;
    // One withdrawal per request, whatever its copies and retries (the edge-died ones included).
    expect(rows).toHaveLength(figures.withdrawals.requested);
    const byReference = new Map((await gateway.state()).transfers.map((t) => [t.externalReference, t]));
    const outcome: Record<string, number> = {};
    for (const w of rows) {
      const transfer = byReference.get(w.id);
      count(outcome, `${w.status}${transfer ? ` (gateway ${transfer.status})` : " (no transfer)"}`);
      if (transfer?.status === "DONE") {
        expect({ id: w.id, status: w.status, debits: w.debits, debited: Number(w.debited) })
          .toEqual({ id: w.id, status: "completed", debits: 1, debited: -Number(w.amount) });
        expect(Number(transfer.value)).toBe(Number(w.amount));
      } else {
        expect({ id: w.id, status: w.status, debits: w.debits }).toEqual({ id: w.id, status: "failed", debits: 0 });
      }
    }
    for (const driver of [company.driver, company.driver2]) {
      const done = rows.filter((w) => w.driver_id === driver.driverId && byReference.get(w.id)?.status === "DONE")
        .reduce((sum, w) => sum + Math.round(Number(w.amount) * 100), 0);
      const [wallet] = await db()`select balance from private.wallet_balances(${driver.driverId})`;
      expect(Math.round(Number(wallet.balance) * 100)).toBe(1_000_000 - done);
    }
    console.log(JSON.stringify({ moneyFaults: { seed: SEED, ...figures, outcome, reconciliation: reconciled.body } }));
  }, 600_000);
});

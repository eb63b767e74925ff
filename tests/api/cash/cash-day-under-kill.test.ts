// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// A driver's day of cash at the door on a stack of its own, killed with SIGKILL in the middle (the Deno server and
// Postgres, a settlement in flight): 10 cash deliveries, some collected at another amount than asked, settlements
// with Idempotency-Keys, the one in flight retried with its key after the restart. At the end the cash ledger adds
// up to the cent: what is outstanding is exactly what was collected less what was settled, each completion wrote
// one entry and each key one settlement.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type OwnStack, passwordSignIn, processes, sleep, startOwnStack } from "../../support/stack.ts";

const PASSWORD = "correct-horse-battery";
let stack: OwnStack;

async function call(path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, replayed: res.headers.get("idempotent-replayed") };
}

const cents = (amount: number) => Math.round(amount * 100);

afterAll(async () => {
  await stack?.stop();
});

describe("a day of cash with a kill -9 in the middle", () => {
  it("keeps the driver's cash ledger exact to the cent", async () => {
    stack = await startOwnStack();
    const ownerEmail = `owner-${randomUUID().slice(0, 8)}@test.example`;
    const registered = await fetch(`${stack.apiUrl}/api/v1/companies/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        company_name: "Dia de dinheiro",
        owner_name: "Dona",
        email: ownerEmail,
        password: PASSWORD,
      }),
    });
    expect(registered.status).toBe(201);
    let owner = await passwordSignIn(stack, ownerEmail, PASSWORD);
    const driverEmail = `driver-${randomUUID().slice(0, 8)}@test.example`;
    const driver = await call("/api/v1/drivers", owner, { name: "Rita", email: driverEmail, password: PASSWORD });
    expect(driver.status).toBe(201);
    let driverToken = await passwordSignIn(stack, driverEmail, PASSWORD);

    // 10 cash deliveries: R$ 57,50 for R$ 100 and so on; three collected at another amount.
    const asked = Array.from({ length: 10 }, (_, i) => (5750 + i * 333) / 100);
    const collected = asked.map((amount, i) => (i % 4 === 1 ? Math.round(amount * 100 - 150) / 100 : amount));
    const ids: string[] = [];
    for (const amount of asked) {
      const res = await call("/api/v1/deliveries", owner, {
        origin_address: "Praça da Sé",
        origin: { lat: -23.5505, lng: -46.6333 },
        destination_address: "Av. Paulista, 1000",
        destination: { lat: -23.5614, lng: -46.6559 },
        payment_method: "invoice",
        driver_id: driver.body.id,
        collect: { amount, method: "cash", change_for: 100 },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.id);
    }
    const complete = async (i: number) => {
      expect((await call(`/api/v1/deliveries/${ids[i]}/start`, driverToken, {})).status).toBe(200);
      const done = await call(`/api/v1/deliveries/${ids[i]}/complete`, driverToken, {
        collected: { amount: collected[i], method: "cash" },
      }, { "Idempotency-Key": `complete-${ids[i]}` });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.collect_mismatch).toBe(collected[i] !== asked[i]);
    };
    const settlements = new Map<string, number>();
    const settle = async (key: string, amount: number) => {
      settlements.set(key, amount);
      return await call(`/api/v1/drivers/${driver.body.id}/cash-settlements`, owner, { amount }, {
        "Idempotency-Key": key,
      });
    };

    // The morning: 5 deliveries, one settlement.
    for (let i = 0; i < 5; i++) await complete(i);
    expect((await settle("morning", 100)).status).toBe(201);

    // A settlement in flight, then kill -9 of the server and of Postgres.
    const inFlight = settle("in-flight", 50.5).catch(() => null);
    await sleep(30);
    const postmaster = stack.postmasterPid();
    const server = [postmaster, ...processes().filter((p) => p.ppid === postmaster).map((p) => p.pid)];
    for (const pid of server) {
      try {
        process.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    // Postgres first, gone for good (reaped by the stack, its parent) before the stack is killed too: a postmaster
    // killed after its parent may be left a zombie that no process reaps, whose pid in postmaster.pid then stops
    // the next Postgres from starting ("lock file already exists").
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (const until = Date.now() + 10_000; server.some(alive) && Date.now() < until;) await sleep(20);
    stack.child.kill("SIGKILL");
    await inFlight;
    await new Promise((done) =>
      stack.child.exitCode !== null || stack.child.signalCode !== null ? done(null) : stack.child.once("exit", done)
    );

    stack = await startOwnStack({ dataDir: stack.dataDir, apiPort: stack.apiPort, dbPort: stack.dbPort, args: [] });
    owner = await passwordSignIn(stack, ownerEmail, PASSWORD);
    driverToken = await passwordSignIn(stack, driverEmail, PASSWORD);

    // The settlement in flight, retried with its key (after its lease, while 409): run now if it had not reached the
    // database (201), or told that it was cut off after it wrote (422): recorded once either way, as the end shows.
    let retried = await settle("in-flight", 50.5);
    for (let tries = 0; retried.status === 409 && tries < 30; tries++) {
      await sleep(1_000);
      retried = await settle("in-flight", 50.5);
    }
    expect([201, 422], JSON.stringify(retried.body)).toContain(retried.status);
    // A completion already made, retried with its key after the restart: answered again, nothing written twice.
    const again = await call(`/api/v1/deliveries/${ids[4]}/complete`, driverToken, {
      collected: { amount: collected[4], method: "cash" },
    }, { "Idempotency-Key": `complete-${ids[4]}` });
    expect(again.status).toBe(200);
    expect(again.replayed).toBe("true");

    // The afternoon: the other 5, a settlement above what is outstanding refused, then the rest settled but 0.01.
    for (let i = 5; i < 10; i++) await complete(i);
    const totalCollected = collected.reduce((sum, amount) => sum + cents(amount), 0);
    const settledSoFar = cents(100) + cents(50.5);
    const tooMuch = await call(`/api/v1/drivers/${driver.body.id}/cash-settlements`, owner, {
      amount: (totalCollected - settledSoFar + 1) / 100,
    });
    expect(tooMuch.status).toBe(422);
    expect((await settle("evening", (totalCollected - settledSoFar - 1) / 100)).status).toBe(201);

    const cash = await call(`/api/v1/drivers/${driver.body.id}/cash?limit=1000`, owner);
    const settledCents = [...settlements.values()].reduce((sum, amount) => sum + cents(amount), 0);
    expect(cents(cash.body.collected)).toBe(totalCollected);
    expect(cents(cash.body.settled)).toBe(settledCents);
    expect(cents(cash.body.outstanding)).toBe(1);
    expect(cash.body.entries.filter((e: any) => e.kind === "collected")).toHaveLength(10);
    expect(cash.body.entries.filter((e: any) => e.kind === "settlement")).toHaveLength(settlements.size);
    expect(cash.body.entries.reduce((sum: number, e: any) => sum + cents(e.amount), 0)).toBe(1);

    // The database agrees, entry by entry.
    const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`select sum(amount)::text as outstanding, count(*)::int as entries,
        count(distinct delivery_id)::int as deliveries from public.cash_entries where driver_id = ${driver.body.id}`;
      expect(row).toEqual({ outstanding: "0.01", entries: 10 + settlements.size, deliveries: 10 });
    } finally {
      await sql.end();
    }

    const summary = await call("/api/v1/cash/summary", owner);
    expect(summary.body.items).toEqual([expect.objectContaining({
      driver_id: driver.body.id,
      deliveries: 10,
      mismatches: collected.filter((amount, i) => amount !== asked[i]).length,
      outstanding: 0.01,
    })]);
  }, 420_000);
});

// `npm run bench:webhooks`: gateway webhooks through the whole HTTP path
// (POST /api/v1/webhooks/gateway/{company_id}: signature, the company's secret,
// finding the withdrawal, asking the gateway for the transfer, applying it with
// its audit row) beside the same work called directly (the same read, the same
// gateway GET, the same applying transaction with its audit row, over
// postgres.js, both statements built by the proxy's own code and the
// transaction sent as the proxy sends it), so the proxy's overhead shows as a
// ratio; then the HTTP path alone at a steady 200 requests per second, for its
// latency.
//
// Every event is a TRANSFER_DONE for a withdrawal still processing, so each one
// debits a wallet: the work of a first delivery, not a retry's. The gateway is a
// loopback fake served by this process, which reports every transfer DONE.
// Starts its own local stack on free loopback ports with a fresh database, and
// stops it at the end. See bench/README.md.
//
// Settings (environment): BENCH_EVENTS (400 per side and round), BENCH_ROUNDS
// (10), BENCH_CONCURRENCY (10), BENCH_RATE (200 per second), BENCH_RATE_SECONDS (10).
import postgres from "postgres";
import { hmacHex } from "../functions/_shared/crypto.ts";
import { settingsStatement } from "../functions/_shared/gateway.ts";
import { applyStatement, findStatement, type Ours } from "../functions/gateway-webhook/settle.ts";
import { addCpu, cpuPerRequest, cpuSince, type CpuSnapshot, cpuSnapshot } from "./cpu.ts";
import { atOnce, freePort, insertUsers, percentile, pool, positiveInt, registerCompany, startStack } from "./stack.ts";

const EVENTS = positiveInt("BENCH_EVENTS", 400);
const ROUNDS = positiveInt("BENCH_ROUNDS", 10);
const CONCURRENCY = positiveInt("BENCH_CONCURRENCY", 10);
const RATE = positiveInt("BENCH_RATE", 200);
const RATE_SECONDS = positiveInt("BENCH_RATE_SECONDS", 10);
const DRIVERS = 50;
const DEADLINE_MS = 10 * 60_000;
const SECRET = "bench-webhook-secret-0123456789abcdef";

/** The gateway: every transfer it is asked about exists and is DONE. */
function startFakeGateway(): { url: string; requests: () => number; stop: () => Promise<void> } {
  let count = 0;
  const port = freePort();
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (req) => {
    count++;
    const match = /^\/v3\/transfers\/([^/]+)$/.exec(new URL(req.url).pathname);
    if (req.method !== "GET" || !match) {
      return Response.json({ errors: [{ description: "not found" }] }, { status: 404 });
    }
    return Response.json({ id: decodeURIComponent(match[1]), status: "DONE", value: 5 });
  });
  return { url: `http://127.0.0.1:${port}`, requests: () => count, stop: () => server.shutdown() };
}

interface Withdrawal {
  id: string;
  transferId: string;
  /** Its TRANSFER_DONE as the gateway sends it, signed (see signed). */
  event?: { body: Uint8Array<ArrayBuffer>; signature: string };
}

/** `count` processing withdrawals with their transfer ids, spread over the drivers. */
async function arrangeWithdrawals(sql: postgres.Sql, companyId: string, count: number, tag: string) {
  return await sql<Withdrawal[]>`
    insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type, status, gateway_transfer_id)
    select ${companyId}, d.ids[1 + n % array_length(d.ids, 1)], 5.00, 'bench@example.com', 'email', 'processing',
      'tra_' || ${tag} || '_' || n
    from generate_series(1, ${count}) n,
      (select array_agg(id) as ids from public.drivers where company_id = ${companyId}) d
    returning id, gateway_transfer_id as "transferId"`;
}

function eventBody(w: Withdrawal): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(JSON.stringify({
    id: `evt_${w.transferId}`,
    event: "TRANSFER_DONE",
    transfer: { id: w.transferId, status: "DONE", value: 5, externalReference: w.id },
  }));
}

/**
 * The withdrawals with their events, encoded and signed before the timing
 * starts: composing and signing an event is the gateway's work, not the
 * proxy's, and on this machine the client shares the cores with the stack.
 */
function signed(items: Withdrawal[]): Withdrawal[] {
  for (const w of items) {
    const body = eventBody(w);
    w.event = { body, signature: hmacHex(SECRET, body) };
  }
  return items;
}

type Send = (w: Withdrawal) => Promise<void>;

function viaHttp(apiUrl: string, companyId: string): Send {
  return async (w) => {
    const { body, signature } = w.event!;
    const res = await fetch(`${apiUrl}/api/v1/webhooks/gateway/${companyId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "gateway-signature": signature },
      body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${text}`);
  };
}

/**
 * The same work without the proxy: the read of the company's settings, the read
 * that finds the withdrawal, the gateway GET, and the applying transaction with
 * its audit row (the service
 * role's claims and statement timeout, the statement, commit). Both statements
 * are built by the proxy's own code (functions/gateway-webhook/settle.ts), so
 * the two sides cannot drift apart.
 */
function viaSql(sql: postgres.Sql, gatewayUrl: string, companyId: string): Send {
  return async (w) => {
    const claim = { kind: "transfer" as const, objectId: w.transferId, externalReference: w.id, describedId: null };
    // The company endpoint's reads: its settings, for the signature (every request), then the withdrawal.
    const [settings] = await sql.unsafe(...settingsStatement(companyId) as [string, string[]]);
    if (!settings?.webhook_secret_ciphertext) throw new Error("no settings");
    const [ours] = await sql.unsafe<Ours[]>(...findStatement(claim, companyId, false) as [string, string[]]);
    if (!ours) throw new Error("no such withdrawal");
    const res = await fetch(`${gatewayUrl}/v3/transfers/${encodeURIComponent(w.transferId)}`, {
      headers: { access_token: "bench" },
    });
    const object = await res.json();
    const audit = { companyId, event: "TRANSFER_DONE", objectId: w.transferId };
    // One transaction sent as the proxy sends it (functions/_shared/db.ts asServiceAtOnce).
    const [[applied]] = await atOnce(sql, { role: "service_role" }, [
      applyStatement(audit, ours, "transfer", object).statement,
    ]);
    if (applied.result !== "processed") throw new Error(`not applied: ${JSON.stringify(applied)}`);
  };
}

interface Measurement {
  done: number;
  seconds: number;
  latenciesMs: number[];
  roundRates: number[];
  /** The CPU each process spent during the rounds (bench/cpu.ts). */
  cpu: CpuSnapshot;
}

function measurement(): Measurement {
  return { done: 0, seconds: 0, latenciesMs: [], roundRates: [], cpu: { client: 0, stack: 0, postgres: 0 } };
}

async function runRound(stackPid: number, items: Withdrawal[], send: Send, m: Measurement) {
  const cpuBefore = cpuSnapshot(stackPid);
  const started = performance.now();
  await pool(items, CONCURRENCY, async (w) => {
    const t0 = performance.now();
    await send(w);
    m.latenciesMs.push(performance.now() - t0);
  });
  const seconds = (performance.now() - started) / 1000;
  addCpu(m.cpu, cpuSince(cpuBefore, cpuSnapshot(stackPid)));
  m.done += items.length;
  m.seconds += seconds;
  m.roundRates.push(items.length / seconds);
}

/** Sends at a steady `rate` per second for `seconds`, whatever the answers' pace; latency of each. */
async function paced(items: Withdrawal[], send: Send, rate: number): Promise<number[]> {
  const latencies: number[] = [];
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (const [i, w] of items.entries()) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push((async () => {
      const t0 = performance.now();
      await send(w);
      latencies.push(performance.now() - t0);
    })());
  }
  await Promise.all(inFlight);
  return latencies;
}

function line(label: string, m: Measurement) {
  const sorted = [...m.latenciesMs].sort((a, b) => a - b);
  const rounds = [...m.roundRates].sort((a, b) => a - b);
  console.log(
    `  ${label.padEnd(44)} ${String(m.done).padStart(5)} in ${m.seconds.toFixed(2).padStart(5)} s = ` +
      `${(m.done / m.seconds).toFixed(0).padStart(5)}/s  (rounds ${rounds[0].toFixed(0)}-${
        rounds[rounds.length - 1].toFixed(0)
      }/s; latency p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms)`,
  );
  if (m.cpu.client + m.cpu.stack + m.cpu.postgres > 0) {
    console.log(`  ${"".padEnd(44)} ${cpuPerRequest(m.cpu, m.done)}`);
  }
}

async function main(): Promise<number> {
  const began = performance.now();
  const gateway = startFakeGateway();
  console.log(`Starting the local stack (fresh database, loopback only; the gateway: a fake at ${gateway.url})...`);
  const stack = await startStack({ GATEWAY_SANDBOX_URL: gateway.url, GATEWAY_PRODUCTION_URL: gateway.url });
  const watchdog = setTimeout(async () => {
    console.error(`bench: over ${DEADLINE_MS / 60_000} min, stopping`);
    await stack.stop();
    Deno.exit(1);
  }, DEADLINE_MS);
  const sql = postgres(stack.dbUrl, { max: CONCURRENCY, prepare: false, onnotice: () => {} });
  try {
    const { companyId, owner } = await registerCompany(stack, "Bench Webhooks Co");
    const configured = await fetch(`${stack.apiUrl}/api/v1/companies/me/gateway-config`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ api_key: "$aact_hmlg_bench_key", webhook_secret: SECRET }),
    });
    if (configured.status !== 200) throw new Error(`gateway config: ${configured.status} ${await configured.text()}`);
    const users = Array.from({ length: DRIVERS }, (_, i) => ({
      userId: crypto.randomUUID(),
      email: `driver-${i}-${crypto.randomUUID().slice(0, 8)}@bench.example`,
    }));
    await sql.begin(async (tx) => {
      await insertUsers(tx, users);
      for (const [i, u] of users.entries()) {
        await tx`insert into public.memberships (user_id, company_id, role) values (${u.userId}, ${companyId}, 'driver')`;
        await tx`insert into public.drivers (company_id, user_id, name, email)
                 values (${companyId}, ${u.userId}, ${`Driver ${i}`}, ${u.email})`;
      }
    });

    const http = viaHttp(stack.apiUrl, companyId);
    const direct = viaSql(sql, gateway.url, companyId);
    // Untimed: connections open, code paths warm.
    await runRound(stack.pid, signed(await arrangeWithdrawals(sql, companyId, 100, "warm_http")), http, measurement());
    await runRound(stack.pid, await arrangeWithdrawals(sql, companyId, 100, "warm_sql"), direct, measurement());

    const httpM = measurement();
    const directM = measurement();
    console.log(
      `\nWebhooks applied per second (each a TRANSFER_DONE that debits a wallet, with its audit row): ` +
        `${ROUNDS} interleaved rounds of ${EVENTS} per side, ${CONCURRENCY} in flight\n`,
    );
    for (let round = 0; round < ROUNDS; round++) {
      await runRound(stack.pid, signed(await arrangeWithdrawals(sql, companyId, EVENTS, `h${round}`)), http, httpM);
      await runRound(stack.pid, await arrangeWithdrawals(sql, companyId, EVENTS, `s${round}`), direct, directM);
    }
    line("HTTP POST /api/v1/webhooks/gateway/{id}", httpM);
    line("direct: reads, gateway GET, apply + audit", directM);
    const ratio = (httpM.done / httpM.seconds) / (directM.done / directM.seconds);
    console.log(
      `\n  HTTP reaches ${(100 * ratio).toFixed(0)}% of the direct rate (direct / HTTP = ${(1 / ratio).toFixed(2)}x)`,
    );
    // Round by round: each HTTP round beside the direct round run right after it, under the same load on the
    // machine; the median is what a burst of other work during one round cannot move.
    const pairs = httpM.roundRates.map((rate, i) => rate / directM.roundRates[i]).sort((a, b) => a - b);
    const median = (pairs[Math.floor((pairs.length - 1) / 2)] + pairs[Math.ceil((pairs.length - 1) / 2)]) / 2;
    console.log(
      `  round by round: median ${(100 * median).toFixed(0)}%, ` +
        `from ${(100 * pairs[0]).toFixed(0)}% to ${
          (100 * pairs[pairs.length - 1]).toFixed(0)
        }% over ${pairs.length} pairs of rounds`,
    );

    const steady = signed(await arrangeWithdrawals(sql, companyId, RATE * RATE_SECONDS, "rate"));
    const steadyCpu = cpuSnapshot(stack.pid);
    const latencies = (await paced(steady, http, RATE)).sort((a, b) => a - b);
    const steadyUsed = cpuSince(steadyCpu, cpuSnapshot(stack.pid));
    console.log(
      `\n  HTTP at a steady ${RATE}/s for ${RATE_SECONDS} s: ${latencies.length} webhooks, latency ` +
        `p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms`,
    );
    if (steadyUsed) console.log(`    ${cpuPerRequest(steadyUsed, latencies.length)}`);

    const [{ processing }] = await sql`select count(*)::int as processing from public.withdrawals
      where company_id = ${companyId} and status = 'processing'`;
    const [{ audited }] = await sql`select count(*)::int as audited from public.webhook_events
      where company_id = ${companyId} and result = 'processed'`;
    console.log(
      `  withdrawals left processing: ${processing}; processed events audited: ${audited}; ` +
        `gateway requests: ${gateway.requests()}`,
    );
    console.log(`\nDone in ${((performance.now() - began) / 1000).toFixed(1)} s.`);
    return processing === 0 ? 0 : 1;
  } finally {
    clearTimeout(watchdog);
    await sql.end({ timeout: 1 });
    await stack.stop();
    await gateway.stop();
  }
}

Deno.exit(await main());

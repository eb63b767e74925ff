// `npm run bench`: accepted location updates per second through the whole HTTP
// path (PUT /api/v1/locations/me: JWT check, Hono, zod, one transaction as the
// driver) beside the same statement sent directly (the same transaction, as the
// driver, over postgres.js), so the proxy's overhead shows as a ratio, and
// beside update_my_location alone (the position without the ETA claim); all
// three again for drivers with a delivery in progress, whose updates also
// extend the delivery's trail, so the trail's cost shows too. Starts its own
// local stack on free loopback ports with a fresh database, and stops it at
// the end. See bench/README.md.
//
// Settings (environment): BENCH_DRIVERS (600: half without, half with a
// delivery in progress), BENCH_ROUNDS (10), BENCH_CONCURRENCY (10, the proxy's
// own connection pool size).
import bcrypt from "bcryptjs";
import postgres from "postgres";
import { addCpu, cpuPerRequest, cpuSince, type CpuSnapshot, cpuSnapshot } from "./cpu.ts";
import { rpcStatement } from "../functions/_shared/db.ts";
import { inlined } from "../functions/_shared/sql-text.ts";
import { atOnce, PASSWORD, percentile, pool, positiveInt, type Stack, startStack } from "./stack.ts";
import type { Claims } from "../functions/_shared/jwt.ts";

const DRIVERS = positiveInt("BENCH_DRIVERS", 600);
const ROUNDS = positiveInt("BENCH_ROUNDS", 10);
const CONCURRENCY = positiveInt("BENCH_CONCURRENCY", 10);
/** The whole run, start-up included, is bounded: past this the stack is stopped and the bench fails. */
const DEADLINE_MS = 5 * 60_000;

interface Driver {
  id: string;
  token: string;
  claims: Claims;
}

/**
 * A company through the public API, then `count` drivers arranged in SQL (a
 * cheap bcrypt cost, so that signing them in takes no time), each signed in
 * through the identity provider for a real access token.
 */
async function arrangeDrivers(
  stack: Stack,
  sql: postgres.Sql,
  count: number,
): Promise<{ companyId: string; drivers: Driver[] }> {
  const email = `owner-${crypto.randomUUID()}@bench.example`;
  const registered = await fetch(`${stack.apiUrl}/api/v1/companies/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ company_name: "Bench Co", owner_name: "Owner", email, password: PASSWORD }),
  });
  if (registered.status !== 201) {
    throw new Error(`registration failed: ${registered.status} ${await registered.text()}`);
  }
  const { company_id: companyId } = await registered.json();

  const hash = bcrypt.hashSync(PASSWORD, 4);
  const rows = Array.from({ length: count }, (_, i) => ({
    user_id: crypto.randomUUID(),
    email: `driver-${i}-${crypto.randomUUID().slice(0, 8)}@bench.example`,
    name: `Driver ${String(i).padStart(4, "0")}`,
  }));
  await sql.begin(async (tx) => {
    for (const row of rows) {
      await tx`insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                 raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                 confirmation_token, recovery_token, email_change_token_new, email_change)
               values ('00000000-0000-0000-0000-000000000000', ${row.user_id}, 'authenticated', 'authenticated',
                 ${row.email}, ${hash}, now(), '{"provider": "email", "providers": ["email"]}', '{}', now(), now(),
                 '', '', '', '')`;
      await tx`insert into public.memberships (user_id, company_id, role) values (${row.user_id}, ${companyId}, 'driver')`;
      await tx`insert into public.drivers (company_id, user_id, name, email)
               values (${companyId}, ${row.user_id}, ${row.name}, ${row.email})`;
    }
  });
  const ids = new Map(
    (await sql`select user_id, id from public.drivers where company_id = ${companyId}`).map((r) => [r.user_id, r.id]),
  );

  const drivers = await pool(rows, CONCURRENCY, async (row) => {
    const res = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { "content-type": "application/json", apikey: stack.anonKey },
      body: JSON.stringify({ email: row.email, password: PASSWORD }),
    });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
    const token = (await res.json()).access_token as string;
    const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    return { id: ids.get(row.user_id)!, token, claims };
  });
  return { companyId, drivers };
}

interface Measurement {
  accepted: number;
  refused: number;
  seconds: number;
  latenciesMs: number[];
  roundRates: number[];
  /** The CPU each process spent during the phase's rounds (bench/cpu.ts). */
  cpu: CpuSnapshot;
}

type Update = (driver: Driver, round: number) => Promise<boolean>;

interface Phase {
  label: string;
  drivers: Driver[];
  update: Update;
  result: Measurement;
}

function phase(label: string, drivers: Driver[], update: Update): Phase {
  return {
    label,
    drivers,
    update,
    result: {
      accepted: 0,
      refused: 0,
      seconds: 0,
      latenciesMs: [],
      roundRates: [],
      cpu: { client: 0, stack: 0, postgres: 0 },
    },
  };
}

/**
 * `rounds` rounds; in each, every phase in turn sends one update per driver of
 * its group, at most CONCURRENCY at once. Interleaving the phases exposes them
 * to the same load on the machine, so their ratios hold even when the absolute
 * figures wander. Before each phase's round (outside the timing) every
 * driver's last update is moved 10 s back, so each timed update is one the
 * database should accept.
 */
async function run(sql: postgres.Sql, stack: Stack, companyId: string, phases: Phase[], rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const { drivers, update, result } of phases) {
      await sql`update public.driver_locations set updated_at = updated_at - interval '10 seconds'
                where company_id = ${companyId}`;
      const cpuBefore = cpuSnapshot(stack.pid);
      const started = performance.now();
      let accepted = 0;
      await pool(drivers, CONCURRENCY, async (driver) => {
        const t0 = performance.now();
        const ok = await update(driver, round);
        result.latenciesMs.push(performance.now() - t0);
        if (ok) accepted++;
        else result.refused++;
      });
      const seconds = (performance.now() - started) / 1000;
      addCpu(result.cpu, cpuSince(cpuBefore, cpuSnapshot(stack.pid)));
      result.accepted += accepted;
      result.seconds += seconds;
      result.roundRates.push(accepted / seconds);
    }
  }
}

/** A position that moves a little every round. */
function position(driver: Driver, round: number) {
  const seed = parseInt(driver.id.slice(0, 6), 16) / 0xffffff;
  return {
    lat: -23.5 + seed / 10 + round / 10_000,
    lng: -46.6 - seed / 10,
    heading: (round * 7) % 360,
    speed: 9.5,
    accuracy: 5,
  };
}

function viaHttp(apiUrl: string) {
  return async (driver: Driver, round: number) => {
    const res = await fetch(`${apiUrl}/api/v1/locations/me`, {
      method: "PUT",
      headers: { authorization: `Bearer ${driver.token}`, "content-type": "application/json" },
      body: JSON.stringify(position(driver, round)),
    });
    await res.body?.cancel();
    return res.status === 200;
  };
}

/**
 * What the proxy runs per request (functions/api/routes/locations.ts), sent the
 * same way without the proxy: one transaction as the driver whose begin, claims,
 * statement and commit leave at once (functions/_shared/db.ts queueAtOnce, as
 * asUserAtOnce sends them), the statement with its values inline. `fn`
 * update_my_location_with_eta is the proxy's own statement (the position and the
 * claim of the driver's due ETA refreshes); update_my_location, the position
 * alone: the database function's own rate.
 */
function viaSql(sql: postgres.Sql, fn: "update_my_location_with_eta" | "update_my_location") {
  return async (driver: Driver, round: number) => {
    const p = position(driver, round);
    try {
      await atOnce(sql, driver.claims, [inlined(rpcStatement(fn, p))]);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === "PT429") return false;
      throw error;
    }
  };
}

function rateOf(m: Measurement): number {
  return m.accepted / m.seconds;
}

function report({ label, result: m }: Phase): void {
  const sorted = [...m.latenciesMs].sort((a, b) => a - b);
  const rounds = [...m.roundRates].sort((a, b) => a - b);
  console.log(
    `  ${label.padEnd(48)} ${String(m.accepted).padStart(5)} in ${m.seconds.toFixed(2).padStart(5)} s = ` +
      `${rateOf(m).toFixed(0).padStart(5)}/s  (rounds ${rounds[0].toFixed(0)}-${
        rounds[rounds.length - 1].toFixed(0)
      }/s; ` +
      `latency p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms)` +
      (m.refused ? `  ${m.refused} REFUSED` : ""),
  );
  if (m.cpu.client + m.cpu.stack + m.cpu.postgres > 0) {
    console.log(`  ${"".padEnd(48)} ${cpuPerRequest(m.cpu, m.accepted + m.refused)}`);
  }
}

/**
 * Gives each of `drivers` a delivery in progress whose trail is already full
 * (500 points), so each accepted update also appends a point and drops the
 * oldest: the trail's steady state. Arranged in SQL: the bench measures
 * location updates, not the delivery flow.
 */
async function arrangeDeliveriesInProgress(sql: postgres.Sql, drivers: Driver[]): Promise<void> {
  await sql`
    with started as (
      insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
        origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
        driver_id, accepted_at, started_at)
      select d.company_id, 'in_progress', 'invoiced', 'invoice', 'Origin', -23.55, -46.63, 'Destination', -23.56,
        -46.64, 1500, 300, 12.50, 0.80, d.id, now(), now()
      from public.drivers d where d.id = any(${drivers.map((d) => d.id)}::uuid[])
      returning id, company_id
    )
    insert into public.delivery_trail_points (delivery_id, seq, company_id, lat, lng, recorded_at)
    select s.id, n, s.company_id, -23.55, -46.63, now() from started s, generate_series(1, 500) n`;
}

async function main(): Promise<number> {
  const began = performance.now();
  console.log(`Starting the local stack (fresh database, loopback only)...`);
  const stack = await startStack();
  const watchdog = setTimeout(async () => {
    console.error(`bench: over ${DEADLINE_MS / 1000} s, stopping`);
    await stack.stop();
    Deno.exit(1);
  }, DEADLINE_MS);
  // The same pool size as the proxy's (functions/_shared/db.ts), so both sides get the same connections.
  const sql = postgres(stack.dbUrl, { max: CONCURRENCY, prepare: false, onnotice: () => {} });
  try {
    const { companyId, drivers } = await arrangeDrivers(stack, sql, DRIVERS);
    const idle = drivers.slice(0, Math.ceil(drivers.length / 2));
    const busy = drivers.slice(idle.length);
    await arrangeDeliveriesInProgress(sql, busy);
    const http = viaHttp(stack.apiUrl);
    const direct = viaSql(sql, "update_my_location_with_eta");
    const functionAlone = viaSql(sql, "update_my_location");
    // One untimed round each way: connections open, code paths warm, every driver has a row.
    await run(sql, stack, companyId, [phase("", drivers, http), phase("", drivers, direct)], 1);

    const phases = [
      phase("HTTP PUT /api/v1/locations/me", idle, http),
      phase("SQL  the same statement, direct", idle, direct),
      phase("SQL  update_my_location alone, direct", idle, functionAlone),
      phase("HTTP, with a delivery in progress (trail)", busy, http),
      phase("SQL,  the same, with a trail", busy, direct),
      phase("SQL,  update_my_location alone, with a trail", busy, functionAlone),
    ];
    console.log(
      `\nAccepted location updates per second: ${idle.length} + ${busy.length} drivers, ${ROUNDS} interleaved ` +
        `rounds, ${CONCURRENCY} in flight, each driver once per 10 s window\n`,
    );
    await run(sql, stack, companyId, phases, ROUNDS);
    phases.forEach(report);

    const [httpIdle, directIdle, aloneIdle, httpBusy, directBusy, aloneBusy] = phases.map((p) => p.result);
    const percentOf = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}%`;
    // Each HTTP round beside the direct round of the same interleaved round: the median is what a burst of
    // other work on the machine during one round cannot move.
    const roundByRound = (part: Measurement, whole: Measurement) => {
      const ratios = part.roundRates.map((rate, i) => rate / whole.roundRates[i]).sort((a, b) => a - b);
      const median = (ratios[Math.floor((ratios.length - 1) / 2)] + ratios[Math.ceil((ratios.length - 1) / 2)]) / 2;
      return `${percentOf(rateOf(part), rateOf(whole))} (rounds: median ${(100 * median).toFixed(0)}%, ` +
        `${(100 * ratios[0]).toFixed(0)}-${(100 * ratios[ratios.length - 1]).toFixed(0)}%)`;
    };
    console.log(
      `\n  beside update_my_location alone: HTTP at ${roundByRound(httpIdle, aloneIdle)}; ` +
        `with a trail ${roundByRound(httpBusy, aloneBusy)}`,
    );
    console.log(
      `  proxy overhead, beside the same statement: HTTP at ${roundByRound(httpIdle, directIdle)}; ` +
        `with a trail ${roundByRound(httpBusy, directBusy)}`,
    );
    console.log(
      `  trail (one point in, one out of a full 500-point trail): HTTP at ` +
        `${percentOf(rateOf(httpBusy), rateOf(httpIdle))}, direct at ` +
        `${percentOf(rateOf(directBusy), rateOf(directIdle))} of the rate without one`,
    );
    const [{ count }] = await sql`select count(*)::int from realtime.messages where event = 'driver_location'`;
    console.log(`  broadcasts sent: ${count} (one per accepted update, warm-up included)`);
    console.log(`\nDone in ${((performance.now() - began) / 1000).toFixed(1)} s.`);
    const refused = phases.reduce((n, p) => n + p.result.refused, 0);
    if (refused > 0) console.error(`bench: ${refused} timed updates were refused; the figures are not comparable`);
    return refused > 0 ? 1 : 0;
  } finally {
    clearTimeout(watchdog);
    await sql.end({ timeout: 1 });
    await stack.stop();
  }
}

Deno.exit(await main());

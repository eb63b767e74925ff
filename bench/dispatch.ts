// `npm run bench:dispatch`: issue 24's figures. Starts its own stack (bench/stack.ts); see bench/README.md.
//
// 1. Ranking among BENCH_DRIVERS (10,000) online drivers of one company, spread over São Paulo with two more
//    companies' drivers among them (sharing the positions' index): the SQL of a round without the routing call
//    (private.dispatch_candidates, the nearest-first walk to at most 20 eligible with the reasons of the others,
//    then private.rank_candidates), beside the floor, the plain indexed nearest-neighbour query of the same 20
//    drivers (the same index, no eligibility). Each sampled pickup is timed on both sides, interleaved; p50/p95.
// 2. Deliveries arriving at BENCH_RATE (100) a second for BENCH_SECONDS (10) in `offer` mode, BENCH_ONLINE
//    (2,000) drivers online: each delivery created as the edge creates it (public.create_delivery as the service
//    role, one transaction), the stack's own machinery doing the rest (pg_net wakes the dispatch function, which
//    claims, asks the routing simulator's table, and offers). Latency: from the delivery's creation (its history
//    row, written inside the creating transaction: before its commit, so a little more than the real wait) to
//    its offer's insert; p50/p95/p99/max, and every delivery must get its offer.
import postgres from "postgres";
import { atOnce, percentile, positiveInt, registerCompany, startStack } from "./stack.ts";
import { cpuPerRequest, cpuSince, cpuSnapshot } from "./cpu.ts";
import { rpcStatement } from "../functions/_shared/db.ts";

const DRIVERS = positiveInt("BENCH_DRIVERS", 10_000);
const OTHERS = positiveInt("BENCH_OTHER_DRIVERS", 5_000);
const SAMPLES = positiveInt("BENCH_SAMPLES", 200);
const ONLINE = positiveInt("BENCH_ONLINE", 2_000);
const RATE = positiveInt("BENCH_RATE", 100);
const SECONDS = positiveInt("BENCH_SECONDS", 10);
const WARMUP = 20;

/** São Paulo's centre and the square drivers and pickups are spread over (about 30 km a side). */
const CENTRE = { lat: -23.55, lng: -46.63 };
const HALF_SIDE_DEG = 0.135;
const somewhere = () => ({
  lat: CENTRE.lat + (Math.random() * 2 - 1) * HALF_SIDE_DEG,
  lng: CENTRE.lng + (Math.random() * 2 - 1) * HALF_SIDE_DEG,
});

/**
 * `count` drivers of a company, straight in SQL (users, memberships, drivers: they never sign in), each online
 * somewhere in the square; one in twenty with a delivery accepted (at the default limit of one), one in five with
 * one to three completed today.
 */
async function arrangeDrivers(sql: postgres.Sql, companyId: string, count: number, label: string) {
  await sql.begin(async (tx) => {
    await tx.unsafe(
      `
      with users as (
        insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data,
          email_confirmed_at, created_at, updated_at)
        select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
          $2 || '-' || n || '@bench.example', '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), now()
        from generate_series(1, $3::integer) n
        returning id, email
      ), members as (
        insert into public.memberships (user_id, company_id, role) select id, $1, 'driver' from users
      )
      insert into public.drivers (company_id, user_id, name, email)
      select $1, id, 'Driver ' || split_part(email, '@', 1), email from users`,
      [companyId, label, count],
    );
    await tx.unsafe(
      `insert into public.driver_locations (driver_id, company_id, lat, lng, updated_at)
       select d.id, d.company_id, $2 + (random() * 2 - 1) * $4, $3 + (random() * 2 - 1) * $4, now()
       from public.drivers d where d.company_id = $1`,
      [companyId, CENTRE.lat, CENTRE.lng, HALF_SIDE_DEG],
    );
    // Deliveries of the drivers: accepted (one in twenty) and completed today (one in five, one to three each).
    await tx.unsafe(
      `insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
         origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price,
         driver_share, driver_id, accepted_at, started_at, completed_at)
       select $1, x.status, 'invoiced', 'invoice', 'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500, 300,
         12.5, 0.8, d.id, now() - interval '1 hour', case when x.status = 'completed' then now() - interval '50 minutes' end,
         case when x.status = 'completed' then now() - interval '30 minutes' end
       from (select d.id, row_number() over (order by d.id) as n from public.drivers d where d.company_id = $1) d
       cross join lateral (
         select 'accepted' as status where d.n % 20 = 0
         union all select 'completed' from generate_series(1, (d.n % 3)::integer + 1) where d.n % 5 = 1
       ) x`,
      [companyId],
    );
  });
}

async function setMode(sql: postgres.Sql, companyId: string, mode: string) {
  await sql`insert into public.dispatch_settings (company_id, mode, offer_timeout_s, offer_batch, max_active_per_driver,
      max_distance_km) values (${companyId}, ${mode}, 60, 1, 1, 20)
    on conflict (company_id) do update set mode = excluded.mode`;
}

const fmt = (ms: number) => ms.toFixed(2).padStart(7);

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

async function rankingBench(sql: postgres.Sql, companyId: string) {
  // Pickups to rank for: deliveries (cancelled ones: nothing dispatches them) at random places in the square.
  const pickups = Array.from({ length: SAMPLES + WARMUP }, somewhere);
  const ids = (await sql.unsafe(
    `insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
       origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
       cancelled_at)
     select $1, 'cancelled', 'invoiced', 'invoice', 'Pickup', p.lat, p.lng, 'Destination', -23.56, -46.64, 1500, 300,
       12.5, 0.8, now()
     from jsonb_to_recordset($2::jsonb) as p (lat double precision, lng double precision)
     returning id`,
    [companyId, pickups as never],
  )).map((r) => r.id as string);
  await sql`vacuum analyze public.driver_locations`;
  await sql`vacuum analyze public.deliveries`;
  // Every driver online: a position in the last 2 minutes.
  await sql`update public.driver_locations set updated_at = now() where company_id = ${companyId}`;

  const ranking = (id: string) =>
    sql`select cardinality(private.rank_candidates(private.dispatch_candidates(d, private.dispatch_settings_of(d.company_id)),
          null, false)) as considered,
          (select count(*) from unnest(private.rank_candidates(private.dispatch_candidates(d,
            private.dispatch_settings_of(d.company_id)), null, false)) c where c.rank is not null) as eligible
        from public.deliveries d where d.id = ${id}`;
  // The floor: the same index, the 20 nearest of the company, nothing else (the pickup as values, as
  // private.dispatch_candidates has it: an index's nearest-first order needs a fixed point).
  const nearest = (i: number) =>
    sql`select count(*) as found from (
          select l.driver_id from public.driver_locations l
          where l.company_id = ${companyId}
          order by private.earth_point(l.lat, l.lng) operator(extensions.<->)
            private.earth_point(${pickups[i].lat}, ${pickups[i].lng})
          limit 20) n`;
  const rankOnce = (id: string) =>
    sql`select cardinality(private.rank_candidates(private.dispatch_candidates(d, private.dispatch_settings_of(d.company_id)),
          null, false)) as considered from public.deliveries d where d.id = ${id}`;

  const rankMs: number[] = [];
  const floorMs: number[] = [];
  for (const [i, id] of ids.entries()) {
    let t0 = performance.now();
    await rankOnce(id);
    const rank = performance.now() - t0;
    t0 = performance.now();
    await nearest(i);
    const floor = performance.now() - t0;
    if (i >= WARMUP) {
      rankMs.push(rank);
      floorMs.push(floor);
    }
  }
  const shape = await ranking(ids[WARMUP]);
  const r = summary(rankMs);
  const f = summary(floorMs);
  console.log(
    `\nRanking among ${DRIVERS} online drivers of one company (${2 * OTHERS} of two others among them), ` +
      `${SAMPLES} pickups, one at a time, milliseconds:`,
  );
  console.log(`  ${"".padEnd(58)}     p50     p95     max`);
  console.log(
    `  ${"SQL  dispatch_candidates + rank_candidates (no routing)".padEnd(58)} ${fmt(r.p50)} ${fmt(r.p95)} ${
      fmt(r.max)
    }`,
  );
  console.log(
    `  ${"SQL  floor: the 20 nearest by the same index".padEnd(58)} ${fmt(f.p50)} ${fmt(f.p95)} ${fmt(f.max)}`,
  );
  console.log(
    `  ranking / floor at p95: ${(r.p95 / f.p95).toFixed(1)}x; a round considered ${shape[0].considered} drivers, ` +
      `${shape[0].eligible} of them eligible (the target: p95 at most 20 ms)`,
  );
  return r.p95;
}

async function arrivalsBench(sql: postgres.Sql, companyId: string, ownerId: string, stackPid: number) {
  await setMode(sql, companyId, "offer");
  await sql`vacuum analyze public.driver_locations`;
  const total = RATE * SECONDS;
  const service = { role: "service_role" };
  const created: string[] = [];
  const failures: unknown[] = [];
  const inFlight: Promise<void>[] = [];
  const cpuBefore = cpuSnapshot(stackPid);
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    // A steady rate, whatever the answers' pace.
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const pickup = somewhere();
    const id = crypto.randomUUID();
    created.push(id);
    inFlight.push(
      atOnce(sql, service, [
        rpcStatement("create_delivery", {
          id,
          company_id: companyId,
          created_by: ownerId,
          payment_method: "invoice",
          origin_address: "Pickup",
          origin_lat: pickup.lat,
          origin_lng: pickup.lng,
          destination_address: "Destination",
          destination_lat: CENTRE.lat,
          destination_lng: CENTRE.lng,
          distance_m: 1500,
          duration_s: 300,
        }),
      ]).then(() => {}, (error) => void failures.push(error)),
    );
  }
  await Promise.all(inFlight);
  const sent = (performance.now() - start) / 1000;

  // Every delivery's offer, waited for (10 s at most once the last was created).
  const deadline = Date.now() + 10_000;
  let rows: { lag_ms: number }[] = [];
  for (;;) {
    rows = await sql<{ lag_ms: number }[]>`
      select extract(epoch from o.offered_at - h.created_at) * 1000 as lag_ms
      from public.dispatch_offers o
      join public.delivery_history h on h.delivery_id = o.delivery_id and h.trigger = 'create'
      where o.delivery_id = any (${created}::uuid[]) and o.round = 1`;
    if (rows.length >= total || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const cpu = cpuSince(cpuBefore, cpuSnapshot(stackPid));
  const [{ unassigned }] = await sql`select count(*)::int as unassigned from public.deliveries
    where id = any (${created}::uuid[]) and dispatch_status = 'unassigned'`;
  const lags = summary(rows.map((r) => Number(r.lag_ms)));
  const [{ tables }] = await sql`select count(*)::int as tables from public.dispatch_rounds
    where delivery_id = any (${created}::uuid[]) and ranked_by = 'road_duration'`;
  console.log(
    `\n${total} deliveries arriving at ${RATE}/s (created in ${sent.toFixed(1)} s: ${(total / sent).toFixed(0)}/s) ` +
      `in offer mode, ${ONLINE} drivers online:`,
  );
  console.log(
    `  offered ${rows.length} of ${total} (${unassigned} unassigned, ${failures.length} failed to create), ` +
      `${tables} ranked by road duration`,
  );
  console.log(
    `  from pending to the offer, ms: p50 ${fmt(lags.p50)}, p95 ${fmt(lags.p95)}, p99 ${fmt(lags.p99)}, ` +
      `max ${fmt(lags.max)} (the target: p99 at most 1000 ms)`,
  );
  if (cpu) console.log(`  ${cpuPerRequest(cpu, total)} (a delivery created and dispatched)`);
  return rows.length === total && failures.length === 0;
}

async function main(): Promise<number> {
  const stack = await startStack();
  const sql = postgres(stack.dbUrl, { max: 10, prepare: false, onnotice: () => {} });
  try {
    const t0 = performance.now();
    const big = await registerCompany(stack, "Dispatch bench (ranking)");
    const others = [await registerCompany(stack, "Neighbour A"), await registerCompany(stack, "Neighbour B")];
    const arrivals = await registerCompany(stack, "Dispatch bench (arrivals)");
    await arrangeDrivers(sql, big.companyId, DRIVERS, "big");
    for (const [i, other] of others.entries()) await arrangeDrivers(sql, other.companyId, OTHERS, `other${i}`);
    await arrangeDrivers(sql, arrivals.companyId, ONLINE, "arrivals");
    await setMode(sql, big.companyId, "offer");
    console.log(
      `arranged ${DRIVERS + 2 * OTHERS + ONLINE} drivers in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const p95 = await rankingBench(sql, big.companyId);
    // Positions are refreshed: every driver sent one in the last 2 minutes.
    await sql`update public.driver_locations set updated_at = now() where company_id = ${arrivals.companyId}`;
    const ownerId = String(arrivals.owner.claims.sub);
    if (Deno.env.get("BENCH_PROFILE")) {
      // The statements inside the functions too.
      await sql`alter system set pg_stat_statements.track = 'all'`;
      await sql`select pg_reload_conf()`;
    }
    await sql`select extensions.pg_stat_statements_reset()`;
    const allOffered = await arrivalsBench(sql, arrivals.companyId, ownerId, stack.pid);
    if (Deno.env.get("BENCH_PROFILE")) {
      // Where the database spent its time during the arrivals (BENCH_PROFILE=1).
      const top = await sql`select calls, round(total_exec_time::numeric, 0) as total_ms,
          round(mean_exec_time::numeric, 2) as mean_ms, left(translate(query, chr(10), ' '), 110) as query
        from extensions.pg_stat_statements order by total_exec_time desc limit 30`;
      console.log("\nthe database during the arrivals (pg_stat_statements, top 30 by total time):");
      for (const row of top) {
        console.log(`  ${row.calls} calls, ${row.total_ms} ms, ${row.mean_ms} ms each: ${row.query}`);
      }
    }
    return allOffered && p95 > 0 ? 0 : 1;
  } finally {
    await sql.end();
    await stack.stop();
  }
}

Deno.exit(await main());

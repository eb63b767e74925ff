// `npm run bench:units`: issue 37's Postgres CPU per unit of work, measured on one database backend, which a
// machine shared with other work cannot inflate the way it inflates rates and latencies (see bench/README.md).
// Starts its own stack (bench/stack.ts). One connection (so one backend) sends, one transaction at a time and
// as the proxy sends them (`atOnce`: its claims statement, the call inline), each unit of work `BENCH_UNITS`
// (200) times, and the CPU that backend spent (/proc, user + system) is divided by the count:
//
// - a location update, `update_my_location_with_eta` (what PUT /locations/me sends) beside `update_my_location`
//   alone, for drivers without and with a delivery in progress (whose trail is extended);
// - a delivery created (`create_delivery`, offer mode, 2,000 drivers online), its round claimed
//   (`claim_dispatches`, the walk) and completed (`complete_dispatch`, ranked by the durations given, offered).
//
// The stack's dispatcher is kept out of it (Vault's project URL points at a closed port, so each wake-up is
// still queued as in a project but reaches nothing): here the bench claims and completes, with the dispatch
// function's own calls.
import postgres from "postgres";
import { atOnce, positiveInt, registerCompany, startStack } from "./stack.ts";
import { rpcStatement } from "../functions/_shared/db.ts";

const UNITS = positiveInt("BENCH_UNITS", 200);
// BENCH_PROFILE=1: after each line, where that backend's time went, by database function (track_functions: a
// function's self time is its own statements' time, its callees' apart; a trigger is a function). Timing every
// call costs CPU of its own, so the figures above it are taken without the profile.
const PROFILE = Boolean(Deno.env.get("BENCH_PROFILE"));
const DRIVERS = positiveInt("BENCH_ONLINE", 2_000);
const CENTRE = { lat: -23.55, lng: -46.63 };
const HALF_SIDE_DEG = 0.135;
const somewhere = () => ({
  lat: CENTRE.lat + (Math.random() * 2 - 1) * HALF_SIDE_DEG,
  lng: CENTRE.lng + (Math.random() * 2 - 1) * HALF_SIDE_DEG,
});

/** The backend's CPU time so far, in milliseconds (/proc's schedstat: nanoseconds on a CPU). */
function backendCpuMs(pid: number): number {
  return Number(Deno.readTextFileSync(`/proc/${pid}/schedstat`).split(" ")[0]) / 1e6;
}

async function main(): Promise<number> {
  const stack = await startStack();
  const sql = postgres(stack.dbUrl, { max: 1, prepare: false, onnotice: () => {} });
  try {
    const company = await registerCompany(stack, "Units bench");
    const companyId = company.companyId;
    const ownerId = String(company.owner.claims.sub);
    await sql.unsafe(
      `with users as (
         insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data,
           email_confirmed_at, created_at, updated_at)
         select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
           'units-' || n || '@bench.example', '{"provider": "email", "providers": ["email"]}', '{}', now(), now(), now()
         from generate_series(1, $2::integer) n
         returning id, email
       ), members as (
         insert into public.memberships (user_id, company_id, role) select id, $1, 'driver' from users
       )
       insert into public.drivers (company_id, user_id, name, email)
       select $1, id, 'Driver ' || split_part(email, '@', 1), email from users`,
      [companyId, DRIVERS],
    );
    await sql.unsafe(
      `insert into public.driver_locations (driver_id, company_id, lat, lng, updated_at)
       select d.id, d.company_id, $2 + (random() * 2 - 1) * $4, $3 + (random() * 2 - 1) * $4, now() - interval '1 minute'
       from public.drivers d where d.company_id = $1`,
      [companyId, CENTRE.lat, CENTRE.lng, HALF_SIDE_DEG],
    );
    // One driver in four has a delivery in progress (its trail gets the points): the first UNITS * 2 by id
    // are the location updaters, half of them with one.
    const drivers = (await sql`select d.id, d.user_id from public.drivers d where d.company_id = ${companyId}
      order by d.id`).map((r) => ({ id: String(r.id), user: String(r.user_id) }));
    const plain = drivers.slice(0, UNITS);
    const trailed = drivers.slice(UNITS, 2 * UNITS);
    await sql.unsafe(
      `insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
         origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price,
         driver_share, driver_id, accepted_at, started_at)
       select $1, 'in_progress', 'invoiced', 'invoice', 'Origin', -23.55, -46.63, 'Destination', -23.56, -46.64, 1500,
         300, 12.5, 0.8, d, now() - interval '1 hour', now() - interval '50 minutes'
       from unnest($2::uuid[]) d`,
      [companyId, trailed.map((d) => d.id)],
    );
    await sql`insert into public.dispatch_settings (company_id, mode, offer_timeout_s, offer_batch,
        max_active_per_driver, max_distance_km) values (${companyId}, 'offer', 60, 1, 1, 20)
      on conflict (company_id) do update set mode = excluded.mode`;
    // The stack's dispatcher is never reached (its wake-ups go to a closed port, each still sent as in a
    // project): this bench claims and completes itself.
    await sql`select vault.update_secret(s.id, 'http://127.0.0.1:9') from vault.secrets s where s.name = 'project_url'`;
    await sql`vacuum analyze public.driver_locations`;
    await sql`vacuum analyze public.deliveries`;
    const [{ pid }] = await sql`select pg_backend_pid() as pid`;
    if (PROFILE) await sql`set track_functions = 'all'`;
    await sql`set stats_fetch_consistency = none`;
    type FunctionTimes = Map<string, { calls: number; self: number; total: number }>;
    const functionTimes = async (): Promise<FunctionTimes> => {
      // The backend's pending counts reach the shared statistics when a transaction ends after this call.
      await sql`select pg_stat_force_next_flush()`;
      const rows = await sql`select schemaname || '.' || funcname as name, calls::float8 as calls,
          self_time as self, total_time as total
        from pg_stat_user_functions`;
      return new Map(rows.map((r) => [String(r.name), { calls: r.calls, self: r.self, total: r.total }]));
    };
    type Profile = Map<string, { calls: number; self: number }>;
    /** Adds what each function spent between two readings to `into`. */
    const addSpent = (into: Profile, from: FunctionTimes, to: FunctionTimes) => {
      for (const [name, t] of to) {
        const was = from.get(name) ?? { calls: 0, self: 0, total: 0 };
        if (t.calls === was.calls) continue;
        const sum = into.get(name) ?? { calls: 0, self: 0 };
        into.set(name, { calls: sum.calls + t.calls - was.calls, self: sum.self + t.self - was.self });
      }
    };
    /** The functions that took the backend's time, per unit of work, the costliest first. */
    const printProfile = (profile: Profile, units: number) => {
      const rows = [...profile].sort((a, b) => b[1].self - a[1].self).slice(0, 12);
      for (const [name, f] of rows) {
        const self = (f.self / units).toFixed(3).padStart(7);
        console.log(`      ${name.padEnd(52)} ${self} ms self, ${(f.calls / units).toFixed(2)} calls`);
      }
    };

    const measure = async (label: string, work: (i: number) => Promise<unknown>) => {
      const start = PROFILE ? await functionTimes() : new Map();
      const before = backendCpuMs(pid);
      const t0 = performance.now();
      for (let i = 0; i < UNITS; i++) await work(i);
      const cpu = (backendCpuMs(pid) - before) / UNITS;
      const wall = (performance.now() - t0) / UNITS;
      console.log(`  ${label.padEnd(58)} ${cpu.toFixed(2).padStart(6)} ms CPU  (${wall.toFixed(2)} ms wall)`);
      if (PROFILE) {
        const profile: Profile = new Map();
        addSpent(profile, start, await functionTimes());
        printProfile(profile, UNITS);
      }
      return cpu;
    };
    const driverClaims = (user: string) => ({ sub: user, role: "driver", aud: "authenticated" });
    const position = (call: "update_my_location" | "update_my_location_with_eta", user: string) => {
      const p = somewhere();
      return atOnce(sql, driverClaims(user), [rpcStatement(call, { lat: p.lat, lng: p.lng, heading: 90, speed: 5 })]);
    };
    const moveBack = () =>
      sql`update public.driver_locations set updated_at = updated_at - interval '20 seconds'
      where company_id = ${companyId}`;

    console.log(`Postgres CPU per unit of work, one backend, ${UNITS} each (${DRIVERS} drivers online):`);
    // Warm-up: one of each, untimed.
    await position("update_my_location", drivers[2 * UNITS].user);
    await position("update_my_location_with_eta", drivers[2 * UNITS + 1].user);
    await moveBack();
    // The floor under every line: the transaction as the proxy sends it (begin, the claims statement, commit)
    // around a statement that does nothing.
    await measure(
      "the transaction alone (select 1 as the driver)",
      (i) => atOnce(sql, driverClaims(plain[i].user), [["select 1", []]]),
    );
    await measure("update_my_location alone", (i) => position("update_my_location", plain[i].user));
    await moveBack();
    await measure(
      "update_my_location_with_eta (the HTTP path's)",
      (i) => position("update_my_location_with_eta", plain[i].user),
    );
    await moveBack();
    await measure("update_my_location alone, with a trail", (i) => position("update_my_location", trailed[i].user));
    await moveBack();
    await measure(
      "update_my_location_with_eta, with a trail",
      (i) => position("update_my_location_with_eta", trailed[i].user),
    );

    const service = { role: "service_role" };
    const ids: string[] = [];
    const create = async () => {
      const p = somewhere();
      const id = crypto.randomUUID();
      ids.push(id);
      await atOnce(sql, service, [rpcStatement("create_delivery", {
        id,
        company_id: companyId,
        created_by: ownerId,
        payment_method: "invoice",
        origin_address: "Pickup",
        origin_lat: p.lat,
        origin_lng: p.lng,
        destination_address: "Destination",
        destination_lat: CENTRE.lat,
        destination_lng: CENTRE.lng,
        distance_m: 1500,
        duration_s: 300,
      })]);
    };
    await sql`update public.driver_locations set updated_at = now() where company_id = ${companyId}`;
    await create();
    const claims: { delivery_id: string; claim: string; candidates: unknown[] }[] = [];
    const claimOne = async () => {
      const [[row]] = await atOnce(sql, service, [rpcStatement("claim_dispatches", { batch: 1 })]);
      claims.push(...(row.result as typeof claims));
    };
    const completeOne = (i: number) => {
      const job = claims[i];
      return atOnce(sql, service, [rpcStatement("complete_dispatch", {
        delivery_id: job.delivery_id,
        claim: job.claim,
        durations: job.candidates.map((_, k) => 60 + 7 * k),
        routing_error: null,
      })]);
    };
    await claimOne();
    await completeOne(0);
    claims.length = 0;
    // One delivery at a time, created, claimed and completed, each step's CPU counted apart.
    const spent = { create: 0, claim: 0, complete: 0 };
    const profiles: Record<keyof typeof spent, Profile> = { create: new Map(), claim: new Map(), complete: new Map() };
    const step = async (name: keyof typeof spent, work: () => Promise<unknown>) => {
      const start = PROFILE ? await functionTimes() : new Map();
      const before = backendCpuMs(pid);
      await work();
      spent[name] += backendCpuMs(pid) - before;
      if (PROFILE) addSpent(profiles[name], start, await functionTimes());
    };
    const t0 = performance.now();
    for (let i = 0; i < UNITS; i++) {
      await step("create", create);
      await step("claim", claimOne);
      await step("complete", () => completeOne(i));
    }
    const wall = (performance.now() - t0) / UNITS;
    const line = (label: string, ms: number) =>
      console.log(`  ${label.padEnd(58)} ${(ms / UNITS).toFixed(2).padStart(6)} ms CPU`);
    line("create_delivery (offer mode: queued)", spent.create);
    if (PROFILE) printProfile(profiles.create, UNITS);
    line("claim_dispatches (batch 1: the walk)", spent.claim);
    if (PROFILE) printProfile(profiles.claim, UNITS);
    line("complete_dispatch (ranked, offered)", spent.complete);
    if (PROFILE) printProfile(profiles.complete, UNITS);
    line(
      `a delivery created and dispatched, together (${wall.toFixed(1)} ms wall)`,
      spent.create + spent.claim + spent.complete,
    );
    const [{ offered }] = await sql`select count(*)::int as offered from public.dispatch_offers
      where delivery_id = any (${ids}::uuid[])`;
    console.log(`  (${offered} of ${ids.length} deliveries offered)`);
    return offered >= UNITS ? 0 : 1;
  } finally {
    await sql.end();
    await stack.stop();
  }
}

Deno.exit(await main());

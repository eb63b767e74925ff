// `npm run bench:lists`: every list endpoint, for every role allowed to call
// it, at 1,000,000 deliveries in one company plus 9 companies of 100,000, over
// HTTP beside the same SQL called directly (the same transaction the proxy
// runs, sent the same way: the claims and the role, then the function). Prints p50/p95 per
// endpoint, role and page or filter. Seeds the data set itself, in SQL; starts
// its own local stack on free loopback ports with a fresh database, and stops
// it at the end. See bench/README.md.
//
// Settings (environment): BENCH_BIG (1000000 deliveries in the big company),
// BENCH_SMALL (100000 in each of the 9 others), BENCH_SAMPLES (40 timed
// requests per line, one at a time, after 5 untimed), BENCH_EXPLAIN (set: print the
// plans of the list queries for the lines over 15 ms and the new driver's first page).
import postgres from "postgres";
import {
  claimsStatement,
  insertUsers,
  percentile,
  pipelined,
  positiveInt,
  registerCompany,
  type SignedIn,
  signIn,
  type Stack,
  startStack,
} from "./stack.ts";

const BIG = positiveInt("BENCH_BIG", 1_000_000);
const SMALL = positiveInt("BENCH_SMALL", 100_000);
const OTHERS = 9;
const SAMPLES = positiveInt("BENCH_SAMPLES", 40);
const WARMUP = 5;
const DRIVERS = 40;
/** The first few drivers take most of the company's deliveries. */
const HEAVY = 4;
/** How deep the heavy driver's deep pages go: a tenth of the big company (of its ~15 %). */
const HEAVY_DEEP = Math.floor(BIG / 10);
const DEADLINE_MS = 30 * 60_000;

interface Member extends SignedIn {
  label: string;
  driverId?: string;
}

/** Members of a company arranged in SQL (an admin, a legacy admin, drivers), each signed in. */
async function arrangeMembers(stack: Stack, sql: postgres.Sql, companyId: string, drivers: number) {
  const tag = crypto.randomUUID().slice(0, 8);
  const admin = { userId: crypto.randomUUID(), email: `admin-${tag}@bench.example` };
  const legacy = { userId: crypto.randomUUID(), email: `legacy-${tag}@bench.example`, metadata: { role: "admin" } };
  const driverUsers = Array.from({ length: drivers }, (_, i) => ({
    userId: crypto.randomUUID(),
    email: `driver-${i}-${tag}@bench.example`,
  }));
  await sql.begin(async (tx) => {
    await insertUsers(tx, [admin, legacy, ...driverUsers]);
    await tx`insert into public.memberships (user_id, company_id, role)
             values (${admin.userId}, ${companyId}, 'company_admin'), (${legacy.userId}, ${companyId}, 'admin')`;
    for (const [i, user] of driverUsers.entries()) {
      await tx`insert into public.memberships (user_id, company_id, role) values (${user.userId}, ${companyId}, 'driver')`;
      // Older drivers first, so that the list of drivers has a history too.
      await tx`insert into public.drivers (company_id, user_id, name, email, created_at)
               values (${companyId}, ${user.userId}, ${`Driver ${i}`}, ${user.email},
                       now() - make_interval(days => ${drivers - i}))`;
    }
  });
  const ids = new Map(
    (await sql`select user_id, id from public.drivers where company_id = ${companyId}`).map((r) => [r.user_id, r.id]),
  );
  return {
    admin: { label: "admin", ...(await signIn(stack, admin.email)) } as Member,
    legacy: { label: "legacy admin", ...(await signIn(stack, legacy.email)) } as Member,
    drivers: await Promise.all(
      driverUsers.map(async (u, i) => ({
        label: `driver ${i}`,
        driverId: ids.get(u.userId) as string,
        ...(await signIn(stack, u.email)),
      })),
    ) as Member[],
  };
}

/**
 * `count` deliveries over about three years, newest last: the heavy drivers
 * take 60 % of them, the others the rest; about 95 % completed, 4 % cancelled (half
 * of those before anyone took them), then accepted, in progress, awaiting
 * payment and 10 pending (offered to every driver): fewer than a page. Pix and invoice mixed.
 */
async function seedDeliveries(sql: postgres.Sql, companyId: string, count: number) {
  await sql`
    -- The newest driver has taken nothing yet: its list is the pending deliveries alone.
    with d as (select (array_agg(id order by created_at))[1:count(*) - 1] as ids
               from public.drivers where company_id = ${companyId}),
    g as (
      select n, d.ids,
        case
          when n > ${count} - 10 then 'pending'
          when n % 997 = 0 then 'awaiting_payment'
          when n % 499 = 0 then 'accepted'
          when n % 503 = 0 then 'in_progress'
          when n % 25 = 0 then 'cancelled'
          else 'completed'
        end as status,
        case when n % 3 = 0 then 'invoice' else 'pix' end as method,
        case when n % 10 < 6 then d.ids[1 + n % ${HEAVY}]
             else d.ids[${HEAVY + 1} + n % (array_length(d.ids, 1) - ${HEAVY})] end as driver
      from generate_series(1, ${count}) n, d
    )
    insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
      origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
      driver_id, gateway_payment_id, created_at, updated_at, accepted_at, cancelled_at)
    select ${companyId}, g.status,
      case when g.method = 'invoice' then 'invoiced'
           when g.status in ('awaiting_payment', 'pending') then 'pending'
           when g.status = 'cancelled' and g.n % 2 = 0 then 'refunded'
           when g.n % 7 = 0 then 'received' else 'confirmed' end,
      g.method, 'Rua A, 1', -23.55, -46.63, 'Rua B, 2', -23.56, -46.64, 1500, 300, 12.50, 0.80,
      case when g.status in ('pending', 'awaiting_payment') or (g.status = 'cancelled' and g.n % 50 = 0) then null
           else g.driver end,
      case when g.method = 'pix' then 'pay_' || replace(gen_random_uuid()::text, '-', '') end,
      c.at, c.at,
      case when g.status in ('pending', 'awaiting_payment') or (g.status = 'cancelled' and g.n % 50 = 0) then null
           else c.at + interval '1 minute' end,
      case when g.status = 'cancelled' then c.at + interval '2 minutes' end
    from g, lateral (select now() - make_interval(secs => (${count} - g.n) * (94608000.0 / ${count}))) c(at)`;
}

/** Turns the broadcast triggers of deliveries and withdrawals off for the seed, and on again. */
async function setBroadcasts(sql: postgres.Sql, on: boolean) {
  const state = on ? "enable" : "disable";
  await sql.unsafe(`alter table public.deliveries ${state} trigger deliveries_broadcast_insert`);
  await sql.unsafe(`alter table public.withdrawals ${state} trigger withdrawals_broadcast`);
}

/** The big company's money and audit history: credits of completed deliveries, withdrawals, webhook events. */
async function seedHistory(sql: postgres.Sql, companyId: string) {
  await sql`
    insert into public.wallet_entries (company_id, driver_id, kind, amount, delivery_id, created_at)
    select company_id, driver_id, 'delivery_credit', 10.00, id, created_at + interval '1 hour'
    from public.deliveries where company_id = ${companyId} and status = 'completed'`;
  await sql`
    insert into public.withdrawals (company_id, driver_id, amount, pix_key, pix_key_type, status,
      gateway_transfer_id, created_at, updated_at, completed_at)
    select ${companyId}, d.ids[1 + n % array_length(d.ids, 1)], 50.00, 'bench@example.com', 'email', 'completed',
      'tra_' || n || '_' || left(${companyId}::text, 8), now() - make_interval(mins => n), now(), now()
    from generate_series(1, 100000) n,
      (select array_agg(id) as ids from public.drivers where company_id = ${companyId}) d`;
  await sql`
    insert into public.webhook_events (company_id, received_at, event, object_id, result, detail)
    select ${companyId}, now() - make_interval(secs => n * 30), 'PAYMENT_CONFIRMED', 'pay_' || n, 'processed', 'bench'
    from generate_series(1, 200000) n`;
}

interface Case {
  endpoint: string;
  role: string;
  what: string;
  path: string;
  member: Member;
  fn: string;
  args: Record<string, unknown>;
}

function casesFor(
  owner: Member,
  members: Awaited<ReturnType<typeof arrangeMembers>>,
  cursors: Record<string, string>,
  withPaymentStatus: boolean,
): Case[] {
  const { admin, legacy, drivers } = members;
  const heavy = drivers[0];
  const light = drivers[DRIVERS - 2];
  const fresh = drivers[DRIVERS - 1];
  const out: Case[] = [];
  const add = (endpoint: string, member: Member, role: string, what: string, path: string, fn: string, args = {}) =>
    out.push({ endpoint, role, what, path, member, fn, args });
  const q = (params: Record<string, string>) => {
    const s = new URLSearchParams(params).toString();
    return s ? `?${s}` : "";
  };
  for (const [member, role] of [[owner, "owner"], [admin, "admin"], [legacy, "legacy admin"]] as const) {
    const list = (what: string, params: Record<string, string>) =>
      add("GET /deliveries", member, role, what, `/api/v1/deliveries${q(params)}`, "list_deliveries", params);
    list("first page", {});
    list(`deep page (${Math.floor(BIG * 0.9).toLocaleString("en")}th)`, { cursor: cursors.deliveriesDeep });
    list("status=pending", { status: "pending" });
    list("status=cancelled", { status: "cancelled" });
    list("driver_id (a heavy driver)", { driver_id: heavy.driverId! });
    list("driver_id + status=cancelled", { driver_id: heavy.driverId!, status: "cancelled" });
    if (withPaymentStatus) {
      list("payment_status=refunded", { payment_status: "refunded" });
      list("payment_status=pending", { payment_status: "pending" });
    }
    add("GET /drivers", member, role, "first page", "/api/v1/drivers", "list_drivers");
    add("GET /drivers", member, role, "second page", `/api/v1/drivers?cursor=${cursors.drivers}`, "list_drivers", {
      cursor: cursors.drivers,
    });
  }
  for (const [member, role] of [[owner, "owner"], [admin, "admin"]] as const) {
    add("GET /withdrawals", member, role, "first page", "/api/v1/withdrawals", "list_withdrawals");
    add(
      "GET /withdrawals",
      member,
      role,
      "deep page (90,000th)",
      `/api/v1/withdrawals?cursor=${cursors.withdrawals}`,
      "list_withdrawals",
      { cursor: cursors.withdrawals },
    );
    add("GET /webhook-events", member, role, "first page", "/api/v1/webhook-events", "list_webhook_events");
    add(
      "GET /webhook-events",
      member,
      role,
      "deep page (180,000th)",
      `/api/v1/webhook-events?cursor=${cursors.webhookEvents}`,
      "list_webhook_events",
      { cursor: cursors.webhookEvents },
    );
  }
  const driverRoles = [
    [heavy, "driver (heavy)", cursors.heavyDeep],
    [light, "driver (light)", null],
    [fresh, "driver (new)", null],
  ] as const;
  for (const [member, role, deep] of driverRoles) {
    const list = (what: string, params: Record<string, string>) =>
      add("GET /deliveries", member, role, what, `/api/v1/deliveries${q(params)}`, "list_deliveries", params);
    list("first page", {});
    if (deep) list(`deep page (own ${HEAVY_DEEP.toLocaleString("en")}th)`, { cursor: deep });
    list("status=pending", { status: "pending" });
    list("status=completed", { status: "completed" });
    list("status=cancelled", { status: "cancelled" });
    if (withPaymentStatus) list("payment_status=refunded", { payment_status: "refunded" });
    add("GET /withdrawals", member, role, "first page", "/api/v1/withdrawals", "list_withdrawals");
    add(
      "GET /wallets/me/transactions",
      member,
      role,
      "first page",
      "/api/v1/wallets/me/transactions",
      "list_wallet_transactions",
    );
    if (deep) {
      add(
        "GET /wallets/me/transactions",
        member,
        role,
        `deep page (own ${HEAVY_DEEP.toLocaleString("en")}th)`,
        `/api/v1/wallets/me/transactions?cursor=${cursors.walletDeep}`,
        "list_wallet_transactions",
        {
          cursor: cursors.walletDeep,
        },
      );
    }
  }
  return out;
}

async function timeHttp(stack: Stack, c: Case): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${stack.apiUrl}${c.path}`, { headers: { authorization: `Bearer ${c.member.token}` } });
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${c.path} as ${c.role}: HTTP ${res.status}`);
  return ms;
}

async function timeSql(sql: postgres.Sql, c: Case): Promise<number> {
  const names = Object.keys(c.args);
  const call = `select public.${c.fn}(${names.map((n, i) => `${n} => $${i + 1}`).join(", ")}) as result`;
  const [claimsSql, claimsArgs] = claimsStatement(c.member.claims);
  const t0 = performance.now();
  await pipelined(sql, [[claimsSql, claimsArgs], [call, names.map((n) => c.args[n])]]);
  return performance.now() - t0;
}

function stats(ms: number[]): [number, number] {
  const sorted = [...ms].sort((a, b) => a - b);
  return [percentile(sorted, 50), percentile(sorted, 95)];
}

/**
 * The plans of the statements inside the function as the member ran them
 * (auto_explain's nested statements, sent back as LOG messages).
 */
async function explain(dbUrl: string, c: Case): Promise<string> {
  const lines: string[] = [];
  const one = postgres(dbUrl, {
    max: 1,
    prepare: false,
    onnotice: (n) => lines.push(String(n.message)),
  });
  try {
    const [claimsSql, claimsArgs] = claimsStatement(c.member.claims);
    await one.begin(async (tx) => {
      await tx.unsafe(`load 'auto_explain'`);
      await tx.unsafe(`set local auto_explain.log_min_duration = 0; set local auto_explain.log_nested_statements = on;
        set local auto_explain.log_analyze = on; set local auto_explain.log_timing = off;
        set local client_min_messages = log`);
      await tx.unsafe(claimsSql, claimsArgs);
      const names = Object.keys(c.args);
      await tx.unsafe(
        `select public.${c.fn}(${names.map((n, i) => `${n} => $${i + 1}`).join(", ")})`,
        names.map((n) => c.args[n]) as string[],
      );
    });
  } finally {
    await one.end({ timeout: 1 });
  }
  // The plans of the list queries only, not of the role and cursor helpers.
  const list =
    /from public\.(deliveries|withdrawals|wallet_entries|webhook_events|drivers) \w+\s+where \w+\.(company_id|driver_id) = (company|driver|me)\b/;
  return lines.filter((m) => list.test(m)).map((m) =>
    m.split("\n").filter((l) => /Scan|Limit|Append|Sort|Rows Removed|Index Cond|Filter/.test(l))
      .map((l) => l.length > 220 ? `${l.slice(0, 220)}...` : l).join("\n")
  ).join("\n--\n");
}

async function main(): Promise<number> {
  const began = performance.now();
  const seconds = () => ((performance.now() - began) / 1000).toFixed(0);
  console.log(`Starting the local stack (fresh database, loopback only)...`);
  const stack = await startStack();
  const watchdog = setTimeout(async () => {
    console.error(`bench: over ${DEADLINE_MS / 60_000} min, stopping`);
    await stack.stop();
    Deno.exit(1);
  }, DEADLINE_MS);
  const sql = postgres(stack.dbUrl, { max: 10, prepare: false, onnotice: () => {} });
  try {
    const big = await registerCompany(stack, "Bench Big Co");
    const owner: Member = { label: "owner", ...big.owner };
    const members = await arrangeMembers(stack, sql, big.companyId, DRIVERS);
    console.log(`Seeding ${BIG.toLocaleString("en")} deliveries in one company (${DRIVERS} drivers) ...`);
    // The seed writes history, not events: with the broadcast triggers on, each of its 1.9 million deliveries
    // and 100,000 withdrawals would also write a realtime.messages row or two and a NOTIFY, all held in memory
    // until the statement ends (the backend grew past 10 GB) and then read by the stack's Realtime: more than
    // half the seed's time, and work that would still be going on while the lists are timed.
    await setBroadcasts(sql, false);
    await seedDeliveries(sql, big.companyId, BIG);
    await seedHistory(sql, big.companyId);
    console.log(`  ${seconds()} s; now ${OTHERS} companies of ${SMALL.toLocaleString("en")} ...`);
    for (let i = 0; i < OTHERS; i++) {
      const other = await registerCompany(stack, `Bench Co ${i}`);
      await arrangeMembers(stack, sql, other.companyId, 10);
      await seedDeliveries(sql, other.companyId, SMALL);
    }
    await setBroadcasts(sql, true);
    await sql`vacuum analyze`;
    const [{ total }] = await sql`select count(*)::int as total from public.deliveries`;
    console.log(`  ${seconds()} s; ${total.toLocaleString("en")} deliveries in all, vacuumed and analyzed.`);

    const heavy = members.drivers[0];
    const cursorAt = async (query: postgres.PendingQuery<postgres.Row[]>) => {
      const [row] = await query;
      return row.cursor as string;
    };
    const cursors = {
      deliveriesDeep: await cursorAt(sql`select private.encode_cursor(created_at, id) as cursor from public.deliveries
        where company_id = ${big.companyId} order by created_at desc, id desc offset ${Math.floor(BIG * 0.9)} limit 1`),
      heavyDeep: await cursorAt(sql`select private.encode_cursor(created_at, id) as cursor from public.deliveries
        where driver_id = ${heavy.driverId!} order by created_at desc, id desc offset ${HEAVY_DEEP} limit 1`),
      drivers: await cursorAt(sql`select private.encode_cursor(created_at, id) as cursor from public.drivers
        where company_id = ${big.companyId} order by created_at desc, id desc offset 19 limit 1`),
      withdrawals: await cursorAt(sql`select private.encode_cursor(created_at, id) as cursor from public.withdrawals
        where company_id = ${big.companyId} order by created_at desc, id desc offset 90000 limit 1`),
      webhookEvents: await cursorAt(sql`select private.encode_cursor(received_at, id) as cursor
        from public.webhook_events where company_id = ${big.companyId}
        order by received_at desc, id desc offset 180000 limit 1`),
      walletDeep: await cursorAt(sql`select private.encode_cursor(created_at, id) as cursor from public.wallet_entries
        where driver_id = ${heavy.driverId!} order by created_at desc, id desc offset ${HEAVY_DEEP} limit 1`),
    };
    const [{ has }] = await sql`select exists (select from pg_proc where proname = 'list_deliveries'
      and 'payment_status' = any (proargnames)) as has`;
    const cases = casesFor(owner, members, cursors, has);

    console.log(
      `\nList endpoints, one request at a time: p50 / p95 over ${SAMPLES} requests each ` +
        `(after ${WARMUP} untimed), HTTP beside the same SQL direct\n`,
    );
    console.log(
      `  ${"endpoint".padEnd(27)} ${"role".padEnd(15)} ${"page / filter".padEnd(30)} ${"HTTP p50".padStart(9)} ` +
        `${"p95".padStart(7)}   ${"SQL p50".padStart(8)} ${"p95".padStart(7)}`,
    );
    let worst = 0;
    const slow: Case[] = [];
    for (const c of cases) {
      for (let i = 0; i < WARMUP; i++) {
        await timeHttp(stack, c);
        await timeSql(sql, c);
      }
      const http: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        http.push(await timeHttp(stack, c));
        direct.push(await timeSql(sql, c));
      }
      const [h50, h95] = stats(http);
      const [s50, s95] = stats(direct);
      worst = Math.max(worst, h95);
      if (h95 > 15) slow.push(c);
      console.log(
        `  ${c.endpoint.padEnd(27)} ${c.role.padEnd(15)} ${c.what.padEnd(30)} ${h50.toFixed(1).padStart(6)} ms ` +
          `${h95.toFixed(1).padStart(7)}   ${s50.toFixed(1).padStart(5)} ms ${s95.toFixed(1).padStart(7)}` +
          (h95 > 15 ? "  > 15 ms" : ""),
      );
    }
    console.log(`\n  worst HTTP p95: ${worst.toFixed(1)} ms; ${slow.length} of ${cases.length} lines over 15 ms`);
    if (Deno.env.get("BENCH_EXPLAIN")) {
      const shown = cases.filter((c) => slow.includes(c) || (c.role === "driver (new)" && c.what === "first page"));
      for (const c of shown) {
        console.log(`\n${c.endpoint} as ${c.role}, ${c.what}:\n${await explain(stack.dbUrl, c)}`);
      }
    }
    console.log(`\nDone in ${seconds()} s.`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    await sql.end({ timeout: 1 });
    await stack.stop();
  }
}

Deno.exit(await main());

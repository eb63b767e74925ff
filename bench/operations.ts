// `npm run bench:operations`: issue 25's figures at 1,000,000 deliveries in one company (plus BENCH_OTHERS
// companies of 100,000, sharing the search index): the list's `q` search (first page), the reports' summary over
// 90 days, and the CSV export of 100,000 rows with the stack's memory watched. Each line is timed over HTTP, as
// the same function called directly (the proxy's transaction, sent the same way), and as the plain query that
// is the floor (the same rows read by the superuser, no function, no row-level security). The summary is also
// measured the other way the issue allows: the same aggregate over the deliveries with a covering index (made
// here only), beside the roll-up the schema keeps. Starts its own stack; see bench/README.md.
//
// Settings (environment): BENCH_BIG (1000000), BENCH_SMALL (100000), BENCH_OTHERS (3), BENCH_SAMPLES (40),
// BENCH_EXPORT (100000 rows).
import postgres from "postgres";
import {
  claimsStatement,
  insertUsers,
  percentile,
  pipelined,
  positiveInt,
  registerCompany,
  type SignedIn,
  type Stack,
  startStack,
} from "./stack.ts";

const BIG = positiveInt("BENCH_BIG", 1_000_000);
const SMALL = positiveInt("BENCH_SMALL", 100_000);
const OTHERS = Number(Deno.env.get("BENCH_OTHERS") ?? 3);
const SAMPLES = positiveInt("BENCH_SAMPLES", 40);
const EXPORT_ROWS = positiveInt("BENCH_EXPORT", 100_000);
const WARMUP = 5;
const DEADLINE_MS = 40 * 60_000;

const FIRST = [
  "José",
  "João",
  "Maria",
  "Ana",
  "Antônio",
  "Francisca",
  "Conceição",
  "Luís",
  "Márcia",
  "Ângela",
  "Paulo",
  "Carlos",
  "Júlia",
  "Lúcia",
  "Sebastião",
  "Raimundo",
  "Letícia",
  "Fábio",
  "Beatriz",
  "Cláudia",
  "Rogério",
  "Vinícius",
  "Débora",
  "Mônica",
  "Sérgio",
  "Patrícia",
  "André",
  "Flávia",
  "Rafael",
  "Tânia",
];
const LAST = [
  "Santos",
  "Oliveira",
  "Souza",
  "Lima",
  "Pereira",
  "Ferreira",
  "Costa",
  "Rodrigues",
  "Almeida",
  "Nascimento",
  "Araújo",
  "Gonçalves",
  "Ribeiro",
  "Carvalho",
  "Gomes",
  "Martins",
  "Rocha",
  "Mendonça",
  "Barbosa",
  "Falcão",
];
const STREETS = [
  "Rua Três Irmãos",
  "Avenida Paulista",
  "Rua Augusta",
  "Rua da Consolação",
  "Alameda Santos",
  "Rua Vergueiro",
  "Avenida São João",
  "Rua Teodoro Sampaio",
  "Rua Oscar Freire",
  "Avenida Brigadeiro Faria Lima",
  "Rua Haddock Lobo",
  "Rua Bela Cintra",
  "Rua Frei Caneca",
  "Avenida Rebouças",
  "Rua Cardeal Arcoverde",
  "Rua dos Pinheiros",
  "Avenida Ipiranga",
  "Rua Direita",
  "Rua Líbero Badaró",
  "Praça da Sé",
];

const sqlArray = (values: string[]) => `array[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")}]`;

/**
 * `count` deliveries over about three years: recipients named from common Brazilian names (`da Silva` for one in
 * ten; `Hermenegildo` for about one in a thousand; `Wanderléia Quintão` once), phones, addresses on twenty
 * streets, about 95 % completed (20 to 200 minutes after creation, a third with a window), 4 % cancelled, a few
 * failed, open and pending; prices from 8 to 40.
 */
async function seedDeliveries(sql: postgres.Sql, companyId: string, driverIds: string[], count: number) {
  await sql.unsafe(
    `
    insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
      origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
      driver_id, recipient_name, recipient_phone, window_start, window_end, created_at, updated_at, accepted_at,
      started_at, completed_at, cancelled_at, failed_at, failure_reason)
    select $1, g.status, 'invoiced', 'invoice',
      'Praça da Sé, ' || (1 + n % 300), -23.55, -46.63,
      (${sqlArray(STREETS)})[1 + (n / 7) % 20] || ', ' || (1 + n % 2000), -23.56, -46.64,
      1500 + n % 9000, 300 + n % 1500, 8 + (n % 3200) / 100.0, 0.80,
      case when g.status in ('pending') then null else ($2::uuid[])[1 + n % array_length($2::uuid[], 1)] end,
      case when n = $3 / 2 then 'Wanderléia Quintão'
           when n % 997 = 1 then 'Hermenegildo ' || (${sqlArray(LAST)})[1 + n % 20]
           else (${sqlArray(FIRST)})[1 + n % 30] || ' ' ||
             case when n % 10 = 0 then 'da Silva' else (${sqlArray(LAST)})[1 + (n / 30) % 20] end end,
      '+55 11 9' || lpad(n::text, 8, '0'),
      case when n % 3 = 0 then c.at + interval '1 hour' end,
      case when n % 3 = 0 then c.at + interval '3 hours' end,
      c.at, c.at,
      case when g.status not in ('pending') then c.at + interval '5 minutes' end,
      case when g.status in ('in_progress', 'completed', 'failed') then c.at + interval '10 minutes' end,
      case when g.status = 'completed' then c.at + make_interval(mins => 20 + n % 180) end,
      case when g.status = 'cancelled' then c.at + interval '30 minutes' end,
      case when g.status = 'failed' then c.at + interval '1 hour' end,
      case when g.status = 'failed' then 'recipient_absent' end
    from generate_series(1, $3::integer) n
    cross join lateral (select case
        when n > $3 - 10 then 'pending'
        when n % 499 = 0 then 'accepted'
        when n % 503 = 0 then 'in_progress'
        when n % 211 = 0 then 'failed'
        when n % 25 = 0 then 'cancelled'
        else 'completed' end as status) g
    cross join lateral (select now() - make_interval(secs => ($3 - n) * (94608000.0 / $3))) c(at)`,
    [companyId, driverIds, count],
  );
}

async function arrangeDrivers(sql: postgres.Sql, companyId: string, count: number): Promise<string[]> {
  const users = Array.from({ length: count }, (_, i) => ({
    userId: crypto.randomUUID(),
    email: `driver-${i}-${crypto.randomUUID().slice(0, 8)}@bench.example`,
  }));
  await sql.begin(async (tx) => {
    await insertUsers(tx, users);
    for (const [i, user] of users.entries()) {
      await tx`insert into public.memberships (user_id, company_id, role) values (${user.userId}, ${companyId}, 'driver')`;
      await tx`insert into public.drivers (company_id, user_id, name, email) values (${companyId}, ${user.userId},
        ${`Driver ${i}`}, ${user.email})`;
    }
  });
  return (await sql`select id from public.drivers where company_id = ${companyId}`).map((r) => r.id as string);
}

function stats(ms: number[]): [number, number] {
  const sorted = [...ms].sort((a, b) => a - b);
  return [percentile(sorted, 50), percentile(sorted, 95)];
}

const f = (ms: number) => ms.toFixed(1).padStart(6);

interface Line {
  what: string;
  http: () => Promise<void>;
  direct: () => Promise<void>;
  floor: () => Promise<void>;
}

async function time(run: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

async function measure(lines: Line[]): Promise<number> {
  let worst = 0;
  console.log(
    `  ${"".padEnd(44)} ${"HTTP p50".padStart(9)} ${"p95".padStart(7)}   ${"direct p50".padStart(10)} ` +
      `${"p95".padStart(7)}   ${"floor p50".padStart(9)} ${"p95".padStart(7)}`,
  );
  for (const line of lines) {
    for (let i = 0; i < WARMUP; i++) {
      await line.http();
      await line.direct();
      await line.floor();
    }
    const http: number[] = [];
    const direct: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      http.push(await time(line.http));
      direct.push(await time(line.direct));
      floor.push(await time(line.floor));
    }
    const [h50, h95] = stats(http);
    const [d50, d95] = stats(direct);
    const [f50, f95] = stats(floor);
    worst = Math.max(worst, h95);
    console.log(
      `  ${line.what.padEnd(44)} ${f(h50)} ms ${f(h95)}   ${f(d50)} ms ${f(d95)}   ${f(f50)} ms ${f(f95)}`,
    );
  }
  return worst;
}

/** The stack's resident memory (its Deno process, where the Edge Functions run), in MiB. */
function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function exportOnce(stack: Stack, owner: SignedIn, from: string) {
  const before = rssMiB(stack.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(stack.pid))), 25);
  const t0 = performance.now();
  const res = await fetch(`${stack.apiUrl}/api/v1/deliveries/export?from=${encodeURIComponent(from)}`, {
    headers: { authorization: `Bearer ${owner.token}` },
  });
  if (res.status !== 200) throw new Error(`export: HTTP ${res.status} ${await res.text()}`);
  const first = performance.now() - t0;
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body!) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  const ms = performance.now() - t0;
  clearInterval(sampler);
  await new Promise((r) => setTimeout(r, 200));
  return { rows: lines - 1, bytes, ms, first, before, peak, after: rssMiB(stack.pid) };
}

async function main(): Promise<number> {
  const began = performance.now();
  const seconds = () => ((performance.now() - began) / 1000).toFixed(0);
  console.log("Starting the local stack (fresh database, loopback only)...");
  const stack = await startStack();
  const watchdog = setTimeout(async () => {
    console.error(`bench: over ${DEADLINE_MS / 60_000} min, stopping`);
    await stack.stop();
    Deno.exit(1);
  }, DEADLINE_MS);
  const sql = postgres(stack.dbUrl, { max: 4, prepare: false, onnotice: () => {} });
  try {
    const big = await registerCompany(stack, "Bench Big Co");
    const owner = big.owner;
    const drivers = await arrangeDrivers(sql, big.companyId, 40);
    console.log(
      `Seeding ${BIG.toLocaleString("en")} deliveries in one company and ${OTHERS} of ` +
        `${SMALL.toLocaleString("en")} ...`,
    );
    // As bench/lists.ts: no broadcasts for the history; the search index is built once after the rows.
    await sql.unsafe(`alter table public.deliveries disable trigger deliveries_broadcast_insert`);
    await sql.unsafe(`drop index public.deliveries_search_text_idx`);
    await seedDeliveries(sql, big.companyId, drivers, BIG);
    for (let i = 0; i < OTHERS; i++) {
      const other = await registerCompany(stack, `Bench Co ${i}`);
      await seedDeliveries(sql, other.companyId, await arrangeDrivers(sql, other.companyId, 10), SMALL);
    }
    console.log(`  ${seconds()} s; building the search index ...`);
    await sql.unsafe(`create index deliveries_search_text_idx on public.deliveries
      using gin (search_text extensions.gin_trgm_ops)`);
    await sql.unsafe(`alter table public.deliveries enable trigger deliveries_broadcast_insert`);
    await sql`vacuum analyze`;
    const [{ total }] = await sql`select count(*)::int as total from public.deliveries`;
    console.log(`  ${seconds()} s; ${total.toLocaleString("en")} deliveries in all, vacuumed and analyzed.\n`);

    // Section: search
    const [sample] =
      await sql`select id::text, recipient_phone from public.deliveries where company_id = ${big.companyId}
      order by created_at desc offset 5000 limit 1`;
    const phone = String(sample.recipient_phone).replace(/^\+55 11 (\d{5})(\d{4})$/, "(11) $1-$2");
    const searches: [string, string][] = [
      ["q: one recipient (wanderleia)", "wanderleia"],
      ["q: 1 in 1,000 (hermenegildo)", "hermenegildo"],
      ["q: 1 in 10 (da silva)", "da silva"],
      ["q: a street, no accents (tres irmaos)", "tres irmaos"],
      ["q: a phone as typed", phone],
      ["q: an id's first 8 characters", sample.id.slice(0, 8)],
      ["q: nothing matches (xyzzyq)", "xyzzyq"],
    ];
    const [claimsSql, claimsArgs] = claimsStatement(owner.claims);
    const lines: Line[] = [];
    for (const [what, q] of searches) {
      const [terms] = await sql`select pattern, id_from, id_to from private.search_terms(${q})`;
      lines.push({
        what,
        http: async () => {
          const res = await fetch(`${stack.apiUrl}/api/v1/deliveries?q=${encodeURIComponent(q)}`, {
            headers: { authorization: `Bearer ${owner.token}` },
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`q=${q}: HTTP ${res.status}`);
        },
        direct: async () => {
          await pipelined(sql, [[claimsSql, claimsArgs], ["select public.list_deliveries(q => $1) as result", [q]]]);
        },
        // The same rows by the plain query, its pattern and id range already worked out.
        floor: async () => {
          await sql.unsafe(
            `select d.* from public.deliveries d
             where d.company_id = $1 and (d.search_text like $2 or ($3::uuid is not null and d.id between $3 and $4))
             order by d.created_at desc, d.id desc limit 21`,
            [big.companyId, terms.pattern, terms.id_from, terms.id_to],
          );
        },
      });
    }
    console.log(
      `The list's q, first page: p50 / p95 over ${SAMPLES} requests each (after ${WARMUP} untimed); ` +
        "floor: the plain query, as the superuser",
    );
    const worstSearch = await measure(lines);
    console.log(`  worst HTTP p95: ${worstSearch.toFixed(1)} ms (target 50 ms)\n`);

    // Section: summary
    const [{ from_day: fromDay, to_day: toDay }] = await sql`
      select (now() at time zone 'America/Sao_Paulo')::date - 89 as from_day,
             (now() at time zone 'America/Sao_Paulo')::date as to_day`;
    const from = fromDay.toISOString().slice(0, 10);
    const to = toDay.toISOString().slice(0, 10);
    const aggregate = `
      select private.report_day(d.created_at) as day, count(*) as created,
        count(*) filter (where d.status = 'completed') as completed,
        count(*) filter (where d.status = 'cancelled') as cancelled,
        count(*) filter (where d.status = 'failed') as failed,
        sum(d.price) filter (where d.status = 'completed') as revenue,
        sum(round(d.price * d.driver_share, 2)) filter (where d.status = 'completed') as earnings,
        count(*) filter (where d.status = 'completed' and d.window_end is not null) as with_window,
        count(*) filter (where d.status = 'completed' and d.completed_at <= d.window_end) as on_time,
        sum(extract(epoch from d.completed_at - d.created_at)) filter (where d.status = 'completed') as seconds
      from public.deliveries d
      where d.company_id = $1 and d.created_at >= ($2::date::timestamp at time zone 'America/Sao_Paulo')
        and d.created_at < (($3::date + 1)::timestamp at time zone 'America/Sao_Paulo')
      group by 1`;
    const summaryLine = (what: string, floorSql: string): Line => ({
      what,
      http: async () => {
        const res = await fetch(`${stack.apiUrl}/api/v1/reports/summary?from=${from}&to=${to}`, {
          headers: { authorization: `Bearer ${owner.token}` },
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`summary: HTTP ${res.status}`);
      },
      direct: async () => {
        await pipelined(sql, [[claimsSql, claimsArgs], [
          "select public.report_summary(from_day => $1, to_day => $2) as result",
          [from, to],
        ]]);
      },
      floor: async () => {
        await sql.unsafe(floorSql, [big.companyId, from, to]);
      },
    });
    console.log(`The summary over 90 days (${from} to ${to}): HTTP and direct read the roll-up; floor as named`);
    const rollupFloor = `select sum(created), sum(completed), sum(revenue) from private.delivery_days
      where company_id = $1 and day between $2::date and $3::date`;
    let worstSummary = await measure([summaryLine("roll-up (floor: its plain read)", rollupFloor)]);
    const [{ rows }] = await sql.unsafe(
      `select count(*)::int as rows from public.deliveries where company_id = $1
       and created_at >= ($2::date::timestamp at time zone 'America/Sao_Paulo')`,
      [big.companyId, from],
    );
    console.log(`  (the 90 days hold ${Number(rows).toLocaleString("en")} deliveries of the company)`);
    worstSummary = Math.max(
      worstSummary,
      await measure([summaryLine("the aggregate over deliveries (floor)", aggregate)]),
    );
    await sql.unsafe(`create index bench_deliveries_report_idx on public.deliveries (company_id, created_at)
      include (status, price, driver_share, completed_at, window_end)`);
    await sql`vacuum analyze public.deliveries`;
    await measure([summaryLine("the same with a covering index (floor)", aggregate)]);
    await sql.unsafe(`drop index public.bench_deliveries_report_idx`);
    console.log(`  worst HTTP p95: ${worstSummary.toFixed(1)} ms (target 100 ms)\n`);

    // Section: export
    const [{ at }] = await sql`select created_at as at from public.deliveries where company_id = ${big.companyId}
      order by created_at desc, id desc offset ${EXPORT_ROWS - 1} limit 1`;
    const exportFrom = (at as Date).toISOString();
    console.log(
      `Export: GET /api/v1/deliveries/export?from=... (${EXPORT_ROWS.toLocaleString("en")} rows); the ` +
        "stack's RSS (its Deno process) before, at its peak while streaming, and after",
    );
    const [{ at: tenthAt }] =
      await sql`select created_at as at from public.deliveries where company_id = ${big.companyId}
      order by created_at desc, id desc offset ${Math.floor(EXPORT_ROWS / 10) - 1} limit 1`;
    for (const [label, since] of [["a tenth", (tenthAt as Date).toISOString()], ["all", exportFrom]] as const) {
      for (let run = 1; run <= 2; run++) {
        const e = await exportOnce(stack, owner, since);
        console.log(
          `  ${label.padEnd(7)} run ${run}: ${e.rows.toLocaleString("en")} rows, ` +
            `${(e.bytes / 1_048_576).toFixed(1)} MiB in ${(e.ms / 1000).toFixed(2)} s (first byte ${
              e.first.toFixed(0)
            } ms); ` +
            `RSS ${e.before.toFixed(0)} -> peak ${e.peak.toFixed(0)} -> ${e.after.toFixed(0)} MiB`,
        );
      }
    }
    const direct = await time(async () => {
      await sql.begin(async (tx) => {
        await tx.unsafe(claimsSql, claimsArgs);
        const [{ cursor }] = await tx.unsafe(`select public.export_deliveries(created_from => $1) as cursor`, [
          exportFrom,
        ]);
        for (;;) {
          const [{ n }] = await tx.unsafe(
            `select cardinality(public.fetch_deliveries($1, 1000)) as n`,
            [cursor],
          );
          if (n < 1000) break;
        }
      });
    });
    const floor = await time(async () => {
      await sql.begin(async (tx) => {
        const cursor = tx.unsafe(
          `select * from public.deliveries where company_id = $1 and created_at >= $2 order by created_at desc, id desc`,
          [big.companyId, exportFrom],
        ).cursor(1000);
        for await (const _ of cursor) { /* read */ }
      });
    });
    console.log(
      `  direct (export_deliveries + fetch_deliveries, no CSV): ${(direct / 1000).toFixed(2)} s; ` +
        `floor (the plain query through a cursor): ${(floor / 1000).toFixed(2)} s`,
    );
    console.log(`\nDone in ${seconds()} s.`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    await sql.end({ timeout: 1 });
    await stack.stop();
  }
}

Deno.exit(await main());

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API are read as `any`
// Routes through the API on a stack of its own (bench/README.md, `npm run bench:routes`): a day of BENCH_DELIVERIES
// (200) deliveries over BENCH_DRIVERS (20) drivers planned by POST /api/v1/routes/plan (the routing table call, the
// engine and the writes; the built-in planner, OPTIMIZATION_URL unset), its time and the plan's quality, every
// route checked by the independent validator against the problem rebuilt from the routing simulator's own table;
// then the routes published and the drivers online under dispatch mode `routes`, and BENCH_INSERTS (100) new
// deliveries created one at a time through POST /api/v1/deliveries, each timed until the API shows it accepted by a
// route's driver (and, from the database's own clocks, from its creation to its assignment). Each inserted
// delivery is cancelled before the next, so that every insertion meets 20 live routes of about 20 stops to come.
import postgres from "postgres";
import { checkPlan } from "../functions/_shared/plan-check.ts";
import { buildProblem, Places, type PlanDelivery, type PlannedVehicle } from "../functions/api/plan-problem.ts";
import { createRoutingSimulator, haversineMetres } from "../local/simulators/routing.ts";
import { percentile, positiveInt, type SignedIn, signIn, startStack } from "./stack.ts";

const DELIVERIES = positiveInt("BENCH_DELIVERIES", 200);
const DRIVERS = positiveInt("BENCH_DRIVERS", 20);
const INSERTS = positiveInt("BENCH_INSERTS", 100);
const PASSWORD = "bench-password";
const SE = { lat: -23.5505, lng: -46.6333 };

/** A repeatable pseudo-random sequence (mulberry32). */
function random(seed: number) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rng = random(7);
/** A point within `km` of Sé, uniformly over the square. */
const around = (km: number) => ({
  lat: SE.lat + ((rng() * 2 - 1) * km) / 111.195,
  lng: SE.lng + ((rng() * 2 - 1) * km) / 101.9,
});
/** Five shops the deliveries leave from. */
const SHOPS = Array.from({ length: 5 }, () => around(4));

const ms = (n: number) => n.toFixed(1);

// The routing service: the simulator's own numbers (local/simulators/routing.ts: the great-circle distance times 1.3,
// at 30 km/h, to a tenth), served by this process with one distance per cell rather than by the stack's
// /_sim/routing, whose table of 221 points took 1.3 s of the loaded machine (it computes each cell twice), in the
// API's own event loop. A real OSRM answers such a table in tens of milliseconds.
const simulator = createRoutingSimulator();
const routingServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
  const match = /\/table\/v1\/driving\/([^?]+)/.exec(new URL(req.url).pathname);
  if (!match) return simulator.fetch(req); // the route service (a delivery's quote): the simulator itself
  const points = decodeURIComponent(match[1]).split(";").map((pair) => pair.split(",").map(Number) as [number, number]);
  const durations: number[][] = [];
  const distances: number[][] = [];
  for (const a of points) {
    const d: number[] = [], m: number[] = [];
    for (const b of points) {
      const metres = Math.round(haversineMetres(a, b) * 1.3 * 10) / 10;
      m.push(metres);
      d.push(Math.round((metres / (30 / 3.6)) * 10) / 10);
    }
    durations.push(d);
    distances.push(m);
  }
  return Response.json({ code: "Ok", durations, distances });
});
const stack = await startStack({
  GOTRUE_RATE_LIMIT_EMAIL_SENT: "1000000000",
  ROUTING_URL: `http://127.0.0.1:${routingServer.addr.port}`,
});
const sql = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
try {
  const call = async (
    path: string,
    token: string,
    body?: unknown,
    method?: string,
  ) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method: method ?? (body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  // A company, its drivers (signed in), and the day's deliveries, all through the API.
  const ownerEmail = `owner-${crypto.randomUUID()}@bench.example`;
  const registered = await fetch(`${stack.apiUrl}/api/v1/companies/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      company_name: "Rotas",
      owner_name: "Owner",
      email: ownerEmail,
      password: PASSWORD,
    }),
  });
  if (registered.status !== 201) {
    throw new Error(
      `registration: ${registered.status} ${await registered.text()}`,
    );
  }
  const owner: SignedIn = await signIn(stack, ownerEmail);
  const drivers: {
    id: string;
    driver: SignedIn;
    start: { lat: number; lng: number };
  }[] = [];
  for (let i = 0; i < DRIVERS; i++) {
    const email = `driver-${i}-${crypto.randomUUID().slice(0, 8)}@bench.example`;
    const made = await call("/api/v1/drivers", owner.token, {
      name: `Driver ${i}`,
      email,
      password: PASSWORD,
    });
    if (made.status !== 201) {
      throw new Error(`driver: ${made.status} ${JSON.stringify(made.body)}`);
    }
    drivers.push({
      id: made.body.id,
      driver: await signIn(stack, email),
      start: around(6),
    });
  }
  const now = Date.now();
  const shiftStart = new Date(now).toISOString();
  const shiftEnd = new Date(now + 8 * 3600_000).toISOString();
  const created: PlanDelivery[] = [];
  const newDelivery = async (windowed: boolean) => {
    const origin = SHOPS[Math.floor(rng() * SHOPS.length)];
    const destination = around(8);
    const body: Record<string, unknown> = {
      origin_address: "Loja",
      origin,
      destination_address: "Destino",
      destination,
      payment_method: "invoice",
    };
    if (windowed) {
      const opens = now + (1 + Math.floor(rng() * 4)) * 3600_000;
      body.window_start = new Date(opens).toISOString();
      body.window_end = new Date(opens + 2 * 3600_000).toISOString();
    }
    const res = await call("/api/v1/deliveries", owner.token, body);
    if (res.status !== 201) {
      throw new Error(`delivery: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body;
  };
  for (let i = 0; i < DELIVERIES; i++) {
    const d = await newDelivery(i % 3 === 0);
    created.push({
      id: d.id,
      status: d.status,
      origin: d.origin,
      destination: d.destination,
      window_start: d.window_start,
      window_end: d.window_end,
      size: d.size,
      service_s: d.service_s,
    });
  }

  // The plan, at the default budget and at the most a request allows.
  console.log(
    `POST /api/v1/routes/plan: ${DELIVERIES} deliveries, ${DRIVERS} drivers (cars, capacity 20), ` +
      `a third with a 2-hour window, 8-hour shifts; the built-in planner`,
  );
  const published: { id: string }[] = [];
  for (const maxSeconds of [undefined]) {
    const body = {
      delivery_ids: created.map((d) => d.id),
      drivers: drivers.map((d) => ({
        driver_id: d.id,
        start: d.start,
        shift_start: shiftStart,
        shift_end: shiftEnd,
      })),
      ...(maxSeconds ? { max_seconds: maxSeconds } : {}),
    };
    const sent = performance.now();
    const res = await call("/api/v1/routes/plan", owner.token, body);
    const wall = performance.now() - sent;
    if (res.status !== 201) {
      throw new Error(`plan: ${res.status} ${JSON.stringify(res.body)}`);
    }
    // The validator, against the problem rebuilt from the simulator's own table.
    const vehicles: PlannedVehicle[] = drivers.map((d) => ({
      driver_id: d.id,
      start: d.start,
      end: null,
      shift_start: Date.parse(shiftStart),
      shift_end: Date.parse(shiftEnd),
      capacity: 20,
    }));
    const places = new Places();
    vehicles.forEach((v) => places.of(v.start));
    created.forEach((d) => {
      places.of(d.origin);
      places.of(d.destination);
    });
    const coordinates = places.points.map((p) => `${p.lng.toFixed(6)},${p.lat.toFixed(6)}`).join(";");
    const table = await (await createRoutingSimulator().fetch(
      new Request(
        `http://sim/table/v1/driving/${coordinates}?annotations=duration,distance`,
      ),
    )).json() as { durations: number[][]; distances: number[][] };
    const round = (m: number[][]) => m.map((row) => row.map((v) => Math.round(v)));
    const built = buildProblem(vehicles, created, places, {
      durations: round(table.durations),
      distances: round(table.distances),
    }, { exclude: false });
    const checked = checkPlan(built.problem, {
      routes: res.body.routes.map((r: any) => ({
        vehicle: r.driver_id,
        steps: r.stops.map((s: any) => ({
          type: s.kind === "pickup" ? "pickup" : "delivery",
          id: s.delivery_id,
        })),
      })),
      unassigned: res.body.unassigned.map((u: any) => ({ id: u.delivery_id })),
    });
    const km = res.body.routes.reduce((sum: number, r: any) => sum + r.distance_m, 0) / 1000;
    const hours = res.body.routes.reduce((sum: number, r: any) => sum + r.duration_s, 0) / 3600;
    const stops = res.body.routes.map((r: any) => r.stops.length);
    console.log(
      `  max_seconds ${maxSeconds ?? "default (1.5)"}: answered in ${
        ms(wall)
      } ms (computed_ms ${res.body.computed_ms}), ` +
        `engine ${res.body.engine}; ${res.body.routes.length} routes, ${res.body.unassigned.length} unassigned, ` +
        `${km.toFixed(1)} km, ${hours.toFixed(1)} h of driving, waiting and service; stops per route ` +
        `${Math.min(...stops)}-${Math.max(...stops)}; validator: ${
          checked.valid ? "valid" : `INVALID ${JSON.stringify(checked.violations.slice(0, 3))}`
        } (recomputed ${(checked.distance / 1000).toFixed(1)} km)`,
    );
    for (const r of res.body.routes) await call(`/api/v1/routes/${r.id}/cancel`, owner.token, {});
  }

  // 20 live routes of 20 stops: each driver's ten deliveries planned for it alone.
  for (const [i, d] of drivers.entries()) {
    const res = await call("/api/v1/routes/plan", owner.token, {
      delivery_ids: created.slice(i * 10, i * 10 + 10).map((x) => x.id),
      drivers: [{ driver_id: d.id, start: d.start, shift_start: shiftStart, shift_end: shiftEnd }],
    });
    if (res.status !== 201) throw new Error(`plan: ${res.status} ${JSON.stringify(res.body)}`);
    published.push(...res.body.routes);
  }

  // Live routes: publish every route, the drivers online, dispatch mode `routes`.
  for (const r of published) {
    const res = await call(`/api/v1/routes/${r.id}/publish`, owner.token, {});
    if (res.status !== 200) {
      throw new Error(`publish: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  const online = async () => {
    for (const d of drivers) {
      await sql`update public.driver_locations set updated_at = now() - interval '11 seconds' where driver_id = ${d.id}`;
      const res = await call(
        "/api/v1/locations/me",
        d.driver.token,
        d.start,
        "PUT",
      );
      if (res.status !== 200) {
        throw new Error(`location: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  };
  await online();
  const mode = await call("/api/v1/dispatch/settings", owner.token, {
    mode: "routes",
  }, "PUT");
  if (mode.status !== 200) {
    throw new Error(`settings: ${mode.status} ${JSON.stringify(mode.body)}`);
  }
  const toCome = await sql`select count(*)::int as n from public.route_stops s join public.routes r on r.id = s.route_id
    where r.company_id = (select company_id from public.routes where id = ${published[0].id}) and s.status = 'pending'
      and r.status in ('published', 'in_progress') group by r.id`;
  const counts = toCome.map((r) => r.n as number);
  console.log(
    `\nInsertion into live routes (dispatch mode routes): ${published.length} published routes, ` +
      `${Math.min(...counts)}-${Math.max(...counts)} stops to come each; ${INSERTS} deliveries, one at a time`,
  );

  const observed: number[] = [];
  const inDatabase: number[] = [];
  let unassigned = 0;
  let lastOnline = Date.now();
  for (let i = 0; i < INSERTS; i++) {
    if (Date.now() - lastOnline > 60_000) {
      await online();
      lastOnline = Date.now();
    }
    const sent = performance.now();
    const d = await newDelivery(false);
    let seen: any = d;
    for (;;) {
      seen = (await call(`/api/v1/deliveries/${d.id}`, owner.token)).body;
      if (seen.status === "accepted" || seen.dispatch_status === "unassigned") {
        break;
      }
      if (performance.now() - sent > 30_000) {
        throw new Error(`delivery ${d.id} was not dispatched in 30 s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (seen.status === "accepted") {
      observed.push(performance.now() - sent);
      const [row] = await sql`select extract(epoch from (accepted_at - created_at)) * 1000 as ms
        from public.deliveries where id = ${d.id}`;
      inDatabase.push(Number(row.ms));
    } else unassigned++;
    // Out again (its stops skipped), so that the routes keep their size.
    await call(`/api/v1/deliveries/${d.id}/cancel`, owner.token, {});
  }
  const show = (name: string, values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(
      `  ${name}: p50 ${ms(percentile(sorted, 50))}, p95 ${ms(percentile(sorted, 95))}, ` +
        `p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1) ?? NaN)} ms`,
    );
  };
  console.log(
    `  inserted ${observed.length} of ${INSERTS} (${unassigned} unassigned)`,
  );
  show(
    "POST /deliveries sent → GET shows it accepted (client, polling every 5 ms)",
    observed,
  );
  show(
    "created_at → accepted_at (the database's clocks: queue, wake-up, table call, insertion, write)",
    inDatabase,
  );
} finally {
  await sql.end();
  await stack.stop();
  await routingServer.shutdown();
}

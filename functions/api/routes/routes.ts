// Routes (docs/routes.md): several deliveries in one trip, planned by an optimizer, adjusted by the dispatcher,
// published to the driver. The database keeps and changes them (supabase/schemas/16_routes.sql); these handlers add
// what SQL cannot do: the routing table, the optimizer and the timing (../planning.ts), and plans that outlast a
// request (a job that goes on after its 202, EdgeRuntime.waitUntil on a hosted project).
import { z } from "zod";
import { asService, asUser, rpc } from "../../_shared/db.ts";
import { HttpError } from "../../_shared/errors.ts";
import type { Claims } from "../../_shared/jwt.ts";
import { detached } from "../../_shared/request-scope.ts";
import { defineRoute } from "../../_shared/route.ts";
import { dayOf, dayStart } from "../days.ts";
import {
  buildProblem,
  DEFAULT_PLAN_SECONDS,
  matrixOf,
  MAX_PLAN_SECONDS,
  Places,
  type PlanDelivery,
  type PlannedVehicle,
  reasonFor,
  routeRows,
  solve,
  SYNC_PLAN_SECONDS,
} from "../planning.ts";
import { IdParams, LatLng, pageOf, PageQuery, Timestamp } from "../schemas.ts";

// Section: schemas

const StopKind = z.enum(["pickup", "dropoff"]);

const RouteStop = z.object({
  seq: z.number().int().describe("1, 2, ... in the route's order."),
  delivery_id: z.uuid(),
  kind: StopKind.describe("`pickup` at the delivery's origin, `dropoff` at its destination (always after its pickup)."),
  lat: z.number(),
  lng: z.number(),
  address: z.string(),
  arrival_at: Timestamp.nullable().describe("When the route arrives, as timed when it was planned or last changed."),
  window_start: Timestamp.nullable(),
  window_end: Timestamp.nullable().describe(
    "The drop-off is due no later than this (waiting allowed before the start).",
  ),
  status: z.enum(["pending", "done", "failed", "skipped"]).describe(
    "`done`: the driver started (pickup) or completed (drop-off) the delivery; `failed`: the drop-off failed; " +
      "`skipped`: the delivery left the route (cancelled, or the route was cancelled).",
  ),
  recipient_name: z.string().nullable().describe("The recipient, on a drop-off."),
  size: z.number().int(),
  service_s: z.number().int().describe("Seconds at the drop-off."),
}).meta({ id: "RouteStop" });

const Violation = z.object({
  seq: z.number().int().describe("The stop where it shows."),
  kind: z.enum(["window", "capacity", "order", "shift"]),
  detail: z.string(),
}).meta({ id: "RouteViolation" });

export const Route = z.object({
  id: z.uuid(),
  company_id: z.uuid(),
  status: z.enum(["draft", "published", "in_progress", "completed", "cancelled"]),
  driver_id: z.uuid(),
  start: LatLng,
  end: LatLng.nullable().describe("Where the route must end; null for an open route (it ends at its last stop)."),
  starts_at: Timestamp.describe("When the route leaves (the shift's start)."),
  ends_at: Timestamp.describe("When its last stop is planned to be done."),
  shift_end: Timestamp,
  capacity: z.number().int().describe("Units the vehicle carries at most at any moment."),
  distance_m: z.number().int(),
  duration_s: z.number().int().describe("Travel, waiting and service, from the start to the last stop (or the end)."),
  engine: z.enum(["vroom", "builtin"]),
  violations: z.array(Violation).describe("What the route's order breaks, as last timed (empty for a planned one)."),
  stops: z.array(RouteStop),
  created_at: Timestamp,
  updated_at: Timestamp,
  published_at: Timestamp.nullable(),
}).meta({ id: "Route" });

const Reason = z.enum(["window", "capacity", "shift", "unreachable"]).nullable().describe(
  "`window`: no driver can arrive in time; `capacity`: bigger than every vehicle; `shift`: no driver's shift is " +
    "long enough; `unreachable`: the routing service finds no road; null: it did not fit with the rest.",
);

const PlanResult = z.object({
  routes: z.array(Route).describe('Draft routes (`status: "draft"`); their deliveries stay `pending` until publish.'),
  unassigned: z.array(z.object({ delivery_id: z.uuid(), reason: Reason })),
  engine: z.enum(["vroom", "builtin"]),
  engine_error: z.string().optional().describe("Why VROOM's plan was not used, when OPTIMIZATION_URL is set."),
  computed_ms: z.number().int().describe("Time spent planning, the routing table call included."),
}).meta({ id: "RoutePlanResult" });

const PlanJob = z.object({
  id: z.uuid(),
  status: z.enum(["running", "done", "failed"]),
  progress: z.number().describe("0 to 1."),
  result: PlanResult.nullable().describe("Once done: the answer a plan within the request gives."),
  error: z.string().nullable().describe("Once failed: why."),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: "RoutePlanJob" });

const DriverShift = z.object({
  driver_id: z.uuid(),
  start: LatLng.optional().describe("Where the route leaves from; default the driver's last position."),
  end: LatLng.nullish().describe("Where it must end; default none (an open route)."),
  shift_start: Timestamp.optional().describe("Default now (or the start of `date` when later)."),
  shift_end: Timestamp.optional().describe("Default the end of `date` (São Paulo)."),
  capacity: z.number().int().min(1).max(10_000).optional().describe("Default the driver's vehicle's."),
});

const PlanRequest = z.object({
  delivery_ids: z.array(z.uuid()).min(1).max(1000).optional().describe(
    "Default: every pending delivery of the company in no route whose window (if any) meets `date`.",
  ),
  date: z.iso.date().optional().describe("A São Paulo day; default today."),
  drivers: z.array(DriverShift).min(1).max(100),
  max_seconds: z.number().gt(0).max(MAX_PLAN_SECONDS).optional().describe(
    `The optimizer's time (default ${DEFAULT_PLAN_SECONDS}, at most ${MAX_PLAN_SECONDS}). Beyond ` +
      `${SYNC_PLAN_SECONDS} s the plan runs as a job: 202.`,
  ),
}).superRefine((body, ctx) => {
  const seen = new Set<string>();
  body.drivers.forEach((driver, i) => {
    if (seen.has(driver.driver_id)) {
      ctx.addIssue({
        code: "custom",
        path: ["drivers", i, "driver_id"],
        message: "listed twice",
        input: driver.driver_id,
      });
    }
    seen.add(driver.driver_id);
    if (driver.shift_start && driver.shift_end && Date.parse(driver.shift_start) >= Date.parse(driver.shift_end)) {
      ctx.addIssue({ code: "custom", path: ["drivers", i, "shift_end"], message: "must be after shift_start" });
    }
  });
  if (body.delivery_ids && new Set(body.delivery_ids).size !== body.delivery_ids.length) {
    ctx.addIssue({ code: "custom", path: ["delivery_ids"], message: "a delivery is listed twice" });
  }
});
type PlanBody = z.infer<typeof PlanRequest>;

const StopsBody = z.object({
  stops: z.array(z.object({ delivery_id: z.uuid(), kind: StopKind })).max(2000),
});

// Section: planning

interface PlanInput {
  deliveries: (PlanDelivery & { origin: { lat: number; lng: number } })[];
  drivers: { id: string; name: string; position: { lat: number; lng: number } | null; capacity: number }[];
}

/** The drivers' vehicles: the request's start, end, shift and capacity, else the defaults (422 without a start). */
function vehiclesOf(body: PlanBody, input: PlanInput): PlannedVehicle[] {
  const day = body.date ?? dayOf(new Date());
  const dayBegins = dayStart(day).getTime();
  const dayEnds = dayBegins + 24 * 3600_000;
  return body.drivers.map((asked) => {
    const driver = input.drivers.find((d) => d.id === asked.driver_id)!;
    const start = asked.start ?? driver.position;
    if (!start) {
      throw new HttpError(422, `driver ${asked.driver_id} has no known position: give its start`);
    }
    const shiftStart = asked.shift_start ? Date.parse(asked.shift_start) : Math.max(Date.now(), dayBegins);
    const shiftEnd = asked.shift_end ? Date.parse(asked.shift_end) : dayEnds;
    if (shiftEnd <= shiftStart) throw new HttpError(422, `the shift of driver ${asked.driver_id} has ended`);
    return {
      driver_id: asked.driver_id,
      start,
      end: asked.end ?? null,
      shift_start: shiftStart,
      shift_end: shiftEnd,
      capacity: asked.capacity ?? driver.capacity,
    };
  });
}

/** Plans and writes the draft routes; answers the 201 body. `budgetMs`: the optimizer's time. */
async function planRoutes(
  claims: Claims,
  body: PlanBody,
  budgetMs: number,
  onProgress?: (fraction: number) => void | Promise<void>,
): Promise<z.infer<typeof PlanResult>> {
  const started = Date.now();
  const input = await asUser(claims, (tx) =>
    rpc(tx, "route_plan_input", {
      driver_ids: body.drivers.map((d) => d.driver_id),
      delivery_ids: body.delivery_ids,
      day: body.date,
    })) as unknown as PlanInput;
  const vehicles = vehiclesOf(body, input);
  const places = new Places();
  vehicles.forEach((v) => {
    places.of(v.start);
    if (v.end) places.of(v.end);
  });
  input.deliveries.forEach((d) => {
    places.of(d.origin);
    places.of(d.destination);
  });
  const matrix = await matrixOf(places);
  const built = buildProblem(vehicles, input.deliveries, places, matrix);
  const left = budgetMs - (Date.now() - started);
  const solved: Awaited<ReturnType<typeof solve>> = built.problem.shipments.length === 0
    ? { steps: [], unassigned: [], engine: "builtin" }
    : await solve(built.problem, Math.max(left, 500), onProgress);
  const rows = routeRows(built, solved.steps);
  const routes = rows.length === 0
    ? []
    : await asUser(claims, (tx) => rpc(tx, "create_routes", { engine: solved.engine, routes: rows as never }));
  return {
    routes: routes as unknown as z.infer<typeof Route>[],
    unassigned: [...built.excluded, ...solved.unassigned].map((u) => ({
      delivery_id: u.delivery_id,
      reason: u.reason ?? reasonFor(built.problem, u.delivery_id),
    })),
    engine: solved.engine,
    ...(solved.engine_error ? { engine_error: solved.engine_error } : {}),
    computed_ms: Date.now() - started,
  };
}

declare const EdgeRuntime: { waitUntil(promise: Promise<unknown>): void } | undefined;

/** How often a running plan job tells the database it is alive, well within its 30 s lease. */
const PLAN_HEARTBEAT_MS = 10_000;

/** A plan as a job: progress and outcome recorded (plan_progress to the company), after the request answered. */
function runPlanJob(claims: Claims, id: string, body: PlanBody): Promise<void> {
  const record = (status: string, progress: number, result?: unknown, error?: string) =>
    asService((tx) =>
      rpc(tx, "record_route_plan", {
        plan_id: id,
        status,
        progress,
        result: result as never,
        error,
      })
    );
  let lastTold = 0;
  let lastFraction = 0;
  const work = detached(async () => {
    // The job's lease (private.route_plan_lease, 30 s) is extended by every word: progress at most once a second
    // while the search runs, and this heartbeat otherwise (the table call, VROOM). A worker that dies stops both, and
    // the job is failed with the reason once the lease runs out.
    const heartbeat = setInterval(() => {
      record("running", lastFraction).catch(() => {});
    }, PLAN_HEARTBEAT_MS);
    try {
      const result = await planRoutes(claims, body, (body.max_seconds ?? DEFAULT_PLAN_SECONDS) * 1000, (fraction) => {
        lastFraction = Math.min(fraction, 0.99);
        // At most once a second: each is a broadcast to the company.
        if (Date.now() - lastTold < 1000) return;
        lastTold = Date.now();
        record("running", lastFraction).catch(() => {});
      });
      clearInterval(heartbeat);
      await record("done", 1, result);
    } catch (error) {
      clearInterval(heartbeat);
      const detail = error instanceof HttpError ? String(error.detail) : (error as Error).message;
      console.error(JSON.stringify({ event: "route_plan_failed", plan_id: id, error: detail }));
      await record("failed", 1, undefined, detail).catch(() => {});
    }
  });
  if (typeof EdgeRuntime !== "undefined") EdgeRuntime.waitUntil(work);
  return work;
}

// Section: routes

export const planRoutesRoute = defineRoute({
  method: "post",
  path: "/api/v1/routes/plan",
  tag: "routes",
  summary: "Plan routes for the day",
  description: "Each delivery is a pickup at its origin and a drop-off at its destination, the pickup first, on one " +
    "route. Without `delivery_ids`, every `pending` delivery of the company that is in no route and whose window " +
    "(if any) meets `date`. Each driver's route leaves from `start` (default: its last position) at `shift_start` " +
    "(default now), ends at `end` (default: its last stop) by `shift_end` (default the end of the day), and " +
    "carries at most `capacity` units (default its vehicle's) at any moment. Every route keeps every window " +
    "(arrival at a drop-off no later than its `window_end`, waiting allowed before `window_start`), the capacity, " +
    "the pickup before its drop-off and the shift; what cannot be served is `unassigned`, with a reason where one " +
    "can be told. The matrix comes from one call to the routing service's table; the plan from VROOM when " +
    "OPTIMIZATION_URL is set (VROOM down, failing, answering an invalid plan or slower than the budget: the " +
    "built-in planner, with `engine_error`), else from the built-in planner, in `max_seconds`. The routes are " +
    `drafts: the deliveries stay pending until publish. Beyond ${SYNC_PLAN_SECONDS} s the plan runs as a job: 202 ` +
    "with `Location: /api/v1/route-plans/{id}`, followed there and by `plan_progress` on `company:{company_id}`.",
  auth: "bearer",
  roles: "route_managers",
  scope: "routes:write",
  body: PlanRequest,
  responses: {
    201: { description: "The draft routes", schema: PlanResult },
    202: {
      description: "Running as a job",
      schema: z.object({ id: z.uuid(), status: z.literal("running") }),
      headers: { Location: "/api/v1/route-plans/{id}" },
    },
    404: { description: "A driver or delivery of another company, or none" },
    409: { description: "A named delivery is already in a route (named), or was put in one while planning" },
    422: { description: "A named delivery is not pending, a driver is deactivated or has no position to start from" },
    502: { description: "The routing service gave no table" },
  },
  async handler({ body, claims, authorize }) {
    await authorize();
    const seconds = body.max_seconds ?? DEFAULT_PLAN_SECONDS;
    if (seconds > SYNC_PLAN_SECONDS) {
      const job = await asUser(claims, (tx) => rpc(tx, "start_route_plan", { request: body as never })) as unknown as {
        id: string;
      };
      runPlanJob(claims, job.id, body);
      return {
        status: 202,
        body: { id: job.id, status: "running" },
        headers: { Location: `/api/v1/route-plans/${job.id}` },
      };
    }
    return { status: 201, body: await planRoutes(claims, body, seconds * 1000) };
  },
});

export const getRoutePlan = defineRoute({
  method: "get",
  path: "/api/v1/route-plans/{id}",
  tag: "routes",
  summary: "A plan running as a job",
  description: "`running` with its `progress`, then `done` with `result` (the answer of a plan within the request) " +
    "or `failed` with `error`. A job whose worker stopped (no word from it for 30 s) is `failed` with that reason: " +
    "plan again.",
  auth: "bearer",
  roles: "route_managers",
  scope: "routes:write",
  params: IdParams,
  responses: { 200: { description: "The job", schema: PlanJob }, 404: { description: "No plan of the company" } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_route_plan", { plan_id: params.id })),
  }),
});

interface RouteShape {
  id: string;
  status: string;
  driver_id: string;
  start: { lat: number; lng: number };
  end: { lat: number; lng: number } | null;
  starts_at: string;
  shift_end: string;
  capacity: number;
  stops: StopRef[];
}

export const setRouteStops = defineRoute({
  method: "put",
  path: "/api/v1/routes/{id}/stops",
  tag: "routes",
  summary: "Put a route's stops in a new order",
  description: "The stops in the wanted order (each delivery's pickup and drop-off, the pickup first: otherwise " +
    "422). A stop may come from another draft route of the company (its delivery leaves that route, which is " +
    "then timed again in its order), or be a " +
    "`pending` delivery in no route. A draft or published route; in a published one a delivery that joins is " +
    "assigned to the driver at once, none may leave (422: cancel the route), and the driver gets `route_updated`. " +
    "The route is timed again from its start with one routing table call and answered with the `violations` the " +
    "new order has (`window`, `capacity`, `order`, `shift`): a route with violations may still be published.",
  auth: "bearer",
  roles: "route_managers",
  scope: "routes:write",
  params: IdParams,
  body: StopsBody,
  responses: {
    200: { description: "The route, timed, with its violations", schema: Route },
    404: { description: "No route of the company, or a delivery of another company" },
    409: { description: "A delivery is in a published route" },
    422: {
      description: "A pickup after its drop-off (named), a stop without its pair or twice, a delivery that is not " +
        "pending or would leave a published route, or a route that is no longer a draft or published",
    },
    502: { description: "The routing service gave no table" },
  },
  async handler({ params, body, asCaller }) {
    const [route, input, left] = await asCaller(async (tx) => {
      const route = await rpc(tx, "get_route", { route_id: params.id }) as unknown as RouteShape;
      const input = await rpc(tx, "route_stops_input", { route_id: params.id, stops: body.stops as never });
      // The drafts the deliveries that join come from: timed again once they have left (below).
      const joining = new Set(body.stops.map((s) => s.delivery_id));
      for (const s of route.stops) joining.delete(s.delivery_id);
      return [route, input, joining.size ? await draftsHolding(tx, joining, route.id) : []];
    }) as unknown as [RouteShape, PlanInput, string[]];
    const stops = await timedStops(route, input, body.stops);
    const answer = await asCaller((tx) => rpc(tx, "set_route_stops", { route_id: params.id, ...stops }));
    // A draft a stop left keeps its order, timed again from its start (its arrivals, distance and duration).
    for (const id of left) {
      const [draft, order, input] = await asCaller(async (tx) => {
        const draft = await rpc(tx, "get_route", { route_id: id }) as unknown as RouteShape;
        const order = draft.stops.map((s) => ({ delivery_id: s.delivery_id, kind: s.kind }));
        return [draft, order, await rpc(tx, "route_stops_input", { route_id: id, stops: order as never })];
      }) as unknown as [RouteShape, StopRef[], PlanInput];
      if (draft.status !== "draft" || order.length === 0) continue;
      const timed = await timedStops(draft, input, order);
      await asCaller(async (tx) => {
        // Changed meanwhile (another dispatcher's order): that change timed it.
        const now = await rpc(tx, "get_route", { route_id: id }) as unknown as RouteShape;
        const same = now.stops.map((s) => `${s.delivery_id}:${s.kind}`).join() ===
          order.map((s) => `${s.delivery_id}:${s.kind}`).join();
        if (same && now.status === "draft") await rpc(tx, "set_route_stops", { route_id: id, ...timed });
      });
    }
    return { body: answer };
  },
});

type StopRef = { delivery_id: string; kind: "pickup" | "dropoff" };

/** The company's drafts other than `except` holding any of `deliveries`. */
async function draftsHolding(tx: Parameters<typeof rpc>[0], deliveries: Set<string>, except: string) {
  const found = new Set<string>();
  let cursor: string | null = null;
  do {
    const page = await rpc(tx, "list_routes", { status: "draft", page_limit: 100, cursor } as never) as unknown as {
      items: RouteShape[];
      next_cursor: string | null;
    };
    for (const r of page.items) {
      if (r.id !== except && r.stops.some((s) => deliveries.has(s.delivery_id))) found.add(r.id);
    }
    cursor = page.next_cursor;
  } while (cursor);
  return [...found];
}

/** `order` of a route's stops timed from its start with one routing table call and the validator. */
async function timedStops(route: RouteShape, input: PlanInput, order: StopRef[]) {
  const vehicle: PlannedVehicle = {
    driver_id: route.driver_id,
    start: route.start,
    end: route.end,
    shift_start: Date.parse(route.starts_at),
    shift_end: Date.parse(route.shift_end),
    capacity: route.capacity,
  };
  const places = new Places();
  places.of(vehicle.start);
  if (vehicle.end) places.of(vehicle.end);
  input.deliveries.forEach((d) => {
    places.of(d.origin);
    places.of(d.destination);
  });
  // Every delivery is timed as the dispatcher ordered it, even one a plan would have left out.
  const built = buildProblem([vehicle], input.deliveries, places, await matrixOf(places), { exclude: false });
  const [row] = routeRows(built, [{
    vehicle: route.driver_id,
    steps: order.map((s) => ({ type: s.kind === "pickup" ? "pickup" : "delivery", id: s.delivery_id })),
  }]);
  return {
    stops: order.map((s, i) => ({ ...s, arrival_at: row.stops[i]?.arrival_at ?? null })) as never,
    distance_m: row.distance_m,
    duration_s: row.duration_s,
    ends_at: row.ends_at,
    violations: row.violations as never,
  };
}

function routeMove(move: "publish" | "cancel", summary: string, description: string, refusals: Record<number, string>) {
  return defineRoute({
    method: "post",
    path: `/api/v1/routes/{id}/${move}`,
    tag: "routes",
    summary,
    description,
    auth: "bearer",
    roles: "route_managers",
    scope: "routes:write",
    params: IdParams,
    responses: {
      200: { description: "The route", schema: Route },
      404: { description: "No route of the company" },
      ...Object.fromEntries(Object.entries(refusals).map(([status, text]) => [status, { description: text }])),
    },
    handler: async ({ params, asCaller }) => ({
      body: await asCaller((tx) => rpc(tx, `${move}_route`, { route_id: params.id })),
    }),
  });
}

export const publishRoute = routeMove(
  "publish",
  "Publish a draft route to its driver",
  "Every delivery of the route is assigned to its driver (`accepted`, as POST /deliveries/{id}/assign does), in " +
    "the route's order; a route is one unit of work, so `max_active_per_driver` does not limit it. The driver gets " +
    "`route_published` (the route) on `driver:{driver_id}`. From then on its stops follow the driver: `start` " +
    "marks a pickup done, `complete` or `fail` its drop-off; the route is `in_progress` from its first stop done " +
    "and `completed` when no stop is pending.",
  {
    409: "A delivery was taken, cancelled or moved meanwhile (named), or the driver already has a live route",
    422: "The route is not a draft, has no stops, or its driver is deactivated",
  },
);

export const cancelRoute = routeMove(
  "cancel",
  "Cancel a route",
  "A draft, published or in-progress route. Its deliveries not yet picked up (`accepted`) go back to `pending`, " +
    "nobody's, to be planned or dispatched again; those picked up stay with the driver. Its pending stops are " +
    "`skipped`; the driver gets `route_updated`.",
  { 422: "The route is completed or cancelled already" },
);

const RouteQuery = PageQuery.extend({
  date: z.iso.date().optional().describe("Routes that run on this São Paulo day."),
  status: Route.shape.status.optional(),
  driver_id: z.uuid().optional(),
});

export const listRoutes = defineRoute({
  method: "get",
  path: "/api/v1/routes",
  tag: "routes",
  summary: "List routes, newest first",
  description: "Owners and admins list the company's routes; a driver its own, once published.",
  auth: "bearer",
  roles: "route_readers",
  scope: "routes:read",
  query: RouteQuery,
  responses: { 200: { description: "One page", schema: pageOf(Route) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "list_routes", {
        day: query.date,
        status: query.status,
        driver_id: query.driver_id,
        page_limit: query.limit,
        cursor: query.cursor,
      })
    ),
  }),
});

export const getRoute = defineRoute({
  method: "get",
  path: "/api/v1/routes/{id}",
  tag: "routes",
  summary: "One route with its stops",
  description: "Owners and admins: any route of the company; a driver: its own, once published. Anything else 404.",
  auth: "bearer",
  roles: "route_readers",
  scope: "routes:read",
  params: IdParams,
  responses: { 200: { description: "The route", schema: Route }, 404: { description: "Not a route the caller sees" } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_route", { route_id: params.id })),
  }),
});

export default [planRoutesRoute, getRoutePlan, setRouteStops, publishRoute, cancelRoute, listRoutes, getRoute];

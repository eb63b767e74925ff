// Dispatch mode `routes` (docs/routes.md, Inserting into live routes): a delivery that becomes pending goes where it
// adds the least duration into a published or in-progress route of an online driver, keeping every window, the
// capacity at every moment and the stops already done (goods picked up are on board: jobs of the planner's
// problem). The live routes come from public.route_insertion_input, the matrix from one routing table call (the
// straight line at 30 km/h when the routing service fails: a dispatch never fails for it), the place from the
// planner's insertCheapest; public.complete_route_insertion writes it under the route's and the delivery's locks,
// or leaves the delivery unassigned.
import { asService, rpc } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { type Matrix, osrmMatrix, type Point } from "../_shared/osrm.ts";
import { insertCheapest } from "../_shared/planner/insert.ts";
import type { Job, Problem, Shipment } from "../_shared/planner/problem.ts";

/** Seconds at a pickup, as route plans count them (functions/api/planning.ts). */
const PICKUP_SERVICE_S = 60;
/** The insertion waits this long for the routing table before it falls back to the straight line. */
const TABLE_TIMEOUT_MS = 1_000;

interface LiveStop extends Point {
  delivery_id: string;
  kind: "pickup" | "dropoff";
  status: string;
  window_start: string | null;
  window_end: string | null;
  size: number;
  service_s: number;
}

interface LiveRoute {
  id: string;
  driver_id: string;
  capacity: number;
  shift_end: string;
  position: Point;
  end: Point | null;
  stops: LiveStop[];
}

interface Input {
  delivery: {
    id: string;
    origin: Point;
    destination: Point;
    window_start: string | null;
    window_end: string | null;
    size: number;
    service_s: number;
  };
  routes: LiveRoute[];
}

export interface Inserted {
  result: "assigned" | "unassigned" | "stale" | "skipped" | "changed";
  route_id: string | null;
}

/** Metres between two points on the earth, and the seconds they take at 30 km/h by road (1.3 times longer). */
function straightLine(points: Point[]): Matrix {
  const rad = (deg: number) => (deg * Math.PI) / 180;
  const metres = (a: Point, b: Point) => {
    const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 +
      Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2;
    return 2 * 6_371_000 * Math.asin(Math.sqrt(h)) * 1.3;
  };
  const distances = points.map((a) => points.map((b) => Math.round(metres(a, b))));
  return { distances, durations: distances.map((row) => row.map((m) => Math.round(m / (30 / 3.6)))) };
}

/** The planner's problem of the live routes and the new delivery, in seconds from now. */
export function insertionProblem(input: Input, matrix: Matrix, points: Point[], now: number) {
  const index = new Map(points.map((p, i) => [`${p.lat},${p.lng}`, i]));
  const at = (p: Point) => index.get(`${p.lat},${p.lng}`)!;
  const window = (start: string | null, end: string | null): [number, number] | undefined =>
    start || end
      ? [
        start ? Math.max(0, Math.round((Date.parse(start) - now) / 1000)) : 0,
        end ? Math.round((Date.parse(end) - now) / 1000) : 10_000_000,
      ]
      : undefined;
  const shipments: Shipment[] = [];
  const jobs: Job[] = [];
  const routes = input.routes.map((route) => {
    const steps: { type: "pickup" | "delivery" | "job"; id: string }[] = [];
    for (const stop of route.stops) {
      const pickupPending = route.stops.some((s) =>
        s.delivery_id === stop.delivery_id && s.kind === "pickup" && s.status === "pending"
      );
      if (stop.kind === "pickup") {
        if (stop.status !== "pending") continue;
        const drop = route.stops.find((s) => s.delivery_id === stop.delivery_id && s.kind === "dropoff")!;
        shipments.push({
          id: stop.delivery_id,
          amount: stop.size,
          pickup: { location: at(stop), service: PICKUP_SERVICE_S },
          delivery: { location: at(drop), service: drop.service_s, window: window(drop.window_start, drop.window_end) },
        });
        steps.push({ type: "pickup", id: stop.delivery_id });
      } else if (pickupPending) {
        steps.push({ type: "delivery", id: stop.delivery_id });
      } else {
        // Picked up already: on board from the route's start.
        jobs.push({
          id: stop.delivery_id,
          amount: stop.size,
          stop: { location: at(stop), service: stop.service_s, window: window(stop.window_start, stop.window_end) },
        });
        steps.push({ type: "job", id: stop.delivery_id });
      }
    }
    return { vehicle: route.id, steps };
  });
  const d = input.delivery;
  shipments.push({
    id: d.id,
    amount: d.size,
    pickup: { location: at(d.origin), service: PICKUP_SERVICE_S },
    delivery: { location: at(d.destination), service: d.service_s, window: window(d.window_start, d.window_end) },
  });
  const problem: Problem = {
    durations: matrix.durations,
    distances: matrix.distances,
    vehicles: input.routes.map((route) => ({
      id: route.id,
      start: at(route.position),
      end: route.end ? at(route.end) : null,
      capacity: route.capacity,
      shift: [0, Math.max(0, Math.round((Date.parse(route.shift_end) - now) / 1000))],
    })),
    shipments,
    jobs,
  };
  return { problem, routes };
}

/** One round of a delivery under `routes`: its place in a live route, or unassigned. */
export async function insertIntoRoutes(job: { delivery_id: string; claim: string }): Promise<Inserted> {
  const input = await asService((tx) =>
    rpc(tx, "route_insertion_input", { delivery_id: job.delivery_id })
  ) as unknown as Input;
  const complete = (args: { route_id?: string; stops?: unknown; added_s?: number }) =>
    asService((tx) =>
      rpc(tx, "complete_route_insertion", {
        delivery_id: job.delivery_id,
        claim: job.claim,
        route_id: args.route_id,
        stops: args.stops as never,
        added_s: args.added_s,
      })
    ) as unknown as Promise<Inserted>;
  if (!input.delivery?.id || input.routes.length === 0) return await complete({});

  const points: Point[] = [];
  const seen = new Set<string>();
  const add = (p: Point) => {
    const key = `${p.lat},${p.lng}`;
    if (!seen.has(key)) {
      seen.add(key);
      points.push({ lat: p.lat, lng: p.lng });
    }
  };
  for (const route of input.routes) {
    add(route.position);
    if (route.end) add(route.end);
    route.stops.forEach(add);
  }
  add(input.delivery.origin);
  add(input.delivery.destination);
  const got = await osrmMatrix(env().ROUTING_URL, points, TABLE_TIMEOUT_MS);
  const matrix = "matrix" in got ? got.matrix : straightLine(points);
  const now = Date.now();
  const { problem, routes } = insertionProblem(input, matrix, points, now);
  const best = insertCheapest(problem, routes, input.delivery.id);
  if (!best) return await complete({});
  const stops = best.steps.filter((s) => s.type === "pickup" || s.type === "delivery" || s.type === "job").map((s) => ({
    delivery_id: s.id,
    kind: s.type === "pickup" ? "pickup" : "dropoff",
    arrival_at: new Date(now + s.arrival * 1000).toISOString(),
  }));
  return await complete({ route_id: best.vehicle, stops, added_s: Math.round(best.added_duration) });
}

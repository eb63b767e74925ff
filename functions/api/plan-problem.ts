// A route plan's problem (docs/routes.md), built from what the database handed over: a vehicle per driver, a
// shipment per delivery (a pickup, then its drop-off), times in seconds from the earliest shift start, and the
// matrix of the plan's distinct places. Pure (no I/O, no configuration), so that the API, the tests and the bench
// build the same problem; functions/api/planning.ts asks the routing service and the engine around it.
import { type Matrix, type Point, UNREACHABLE } from "../_shared/osrm.ts";
import type { Problem, Shipment, UnassignedReason } from "../_shared/planner/problem.ts";

/** Seconds spent at a pickup (a delivery's `service_s` is its drop-off's). */
export const PICKUP_SERVICE_S = 60;
/**
 * `max_seconds` when the request says nothing: within a hosted Edge Function's 2 s of CPU per request, with room for
 * the rest of the request (docs/routes.md).
 */
export const DEFAULT_PLAN_SECONDS = 1.5;
/** The most `max_seconds` a plan answered within the request may have; beyond, it runs as a job (202). */
export const SYNC_PLAN_SECONDS = 5;
/** The most `max_seconds` a plan may have at all (a job's). */
export const MAX_PLAN_SECONDS = 60;
/** How long the one routing table call may take. */
export const TABLE_TIMEOUT_MS = 3_000;

export interface PlanDelivery {
  id: string;
  status: string;
  origin: Point;
  destination: Point;
  window_start: string | null;
  window_end: string | null;
  size: number;
  service_s: number;
}

/** One driver's vehicle as planned: where it leaves from and ends, its shift (epoch ms) and capacity. */
export interface PlannedVehicle {
  driver_id: string;
  start: Point;
  end: Point | null;
  shift_start: number;
  shift_end: number;
  capacity: number;
}

export type Reason = UnassignedReason | null;

export interface Violation {
  seq: number;
  kind: "window" | "capacity" | "order" | "shift";
  detail: string;
}

/** A route as public.create_routes takes it. */
export interface RouteRow {
  driver_id: string;
  start: Point;
  end: Point | null;
  starts_at: string;
  ends_at: string;
  shift_end: string;
  capacity: number;
  distance_m: number;
  duration_s: number;
  violations: Violation[];
  stops: { delivery_id: string; kind: "pickup" | "dropoff"; arrival_at: string }[];
}

export interface Planned {
  routes: RouteRow[];
  unassigned: { delivery_id: string; reason: Reason }[];
  engine: "vroom" | "builtin";
  engine_error?: string;
}

export type Steps = { vehicle: string; steps: { type: "pickup" | "delivery"; id: string }[] }[];

/** The distinct places of a plan, each once: the matrix's rows (stops at one place cost no travel between them). */
export class Places {
  readonly points: Point[] = [];
  #index = new Map<string, number>();
  of(point: Point): number {
    const key = `${point.lat.toFixed(6)},${point.lng.toFixed(6)}`;
    let index = this.#index.get(key);
    if (index === undefined) {
      index = this.points.push(point) - 1;
      this.#index.set(key, index);
    }
    return index;
  }
}

export const seconds = (ms: number) => Math.round(ms / 1000);

/** The window of a drop-off in seconds from `origin` (ms), or undefined when it has none. */
function windowOf(delivery: PlanDelivery, origin: number, horizon: number): [number, number] | undefined {
  if (!delivery.window_start && !delivery.window_end) return undefined;
  const start = delivery.window_start ? Math.max(0, seconds(Date.parse(delivery.window_start) - origin)) : 0;
  const end = delivery.window_end ? seconds(Date.parse(delivery.window_end) - origin) : horizon;
  return [Math.min(start, end), end];
}

export interface Built {
  problem: Problem;
  /** Epoch ms of the problem's time 0: the earliest shift start. */
  origin: number;
  vehicles: PlannedVehicle[];
  /** Deliveries the engine is not asked about: their reason is known already. */
  excluded: { delivery_id: string; reason: Reason }[];
}

/**
 * The planner's problem: a vehicle per driver (its shift in seconds from the earliest shift start), a shipment per
 * delivery (the pickup at its origin, PICKUP_SERVICE_S; the drop-off at its destination with its window and
 * `service_s`). Deliveries bigger than every vehicle, or whose window closed before any shift starts, are left out
 * with their reason (unless `exclude` is false: a dispatcher's order is timed as it is).
 */
export function buildProblem(
  vehicles: PlannedVehicle[],
  deliveries: PlanDelivery[],
  places: Places,
  matrix: Matrix,
  { exclude = true }: { exclude?: boolean } = {},
): Built {
  const origin = Math.min(...vehicles.map((v) => v.shift_start));
  const horizon = Math.max(...vehicles.map((v) => seconds(v.shift_end - origin)));
  const biggest = Math.max(...vehicles.map((v) => v.capacity));
  const excluded: Built["excluded"] = [];
  const shipments: Shipment[] = [];
  for (const delivery of deliveries) {
    const window = windowOf(delivery, origin, horizon);
    if (exclude && delivery.size > biggest) excluded.push({ delivery_id: delivery.id, reason: "capacity" });
    else if (exclude && window && window[1] < 0) excluded.push({ delivery_id: delivery.id, reason: "window" });
    else {
      shipments.push({
        id: delivery.id,
        amount: delivery.size,
        pickup: { location: places.of(delivery.origin), service: PICKUP_SERVICE_S },
        delivery: { location: places.of(delivery.destination), service: delivery.service_s, window },
      });
    }
  }
  return {
    origin,
    vehicles,
    excluded,
    problem: {
      durations: matrix.durations,
      distances: matrix.distances,
      vehicles: vehicles.map((v) => ({
        id: v.driver_id,
        start: places.of(v.start),
        end: v.end ? places.of(v.end) : null,
        capacity: v.capacity,
        shift: [seconds(v.shift_start - origin), seconds(v.shift_end - origin)],
      })),
      shipments,
    },
  };
}

/** Why a shipment the engine left out could not be served, where one can be told. */
export function reasonFor(problem: Problem, id: string): Reason {
  const shipment = problem.shipments.find((s) => s.id === id);
  if (!shipment) return null;
  const fitting = problem.vehicles.filter((v) => v.capacity >= shipment.amount);
  if (fitting.length === 0) return "capacity";
  const d = problem.durations;
  const { pickup, delivery } = shipment;
  const reachable = fitting.filter((v) =>
    d[v.start][pickup.location] < UNREACHABLE && d[pickup.location][delivery.location] < UNREACHABLE
  );
  if (reachable.length === 0) return "unreachable";
  // The earliest each vehicle could be done with it alone.
  const alone = reachable.map((v) => {
    const arrival = v.shift[0] + d[v.start][pickup.location] + pickup.service + d[pickup.location][delivery.location];
    const begin = Math.max(arrival, delivery.window?.[0] ?? 0);
    return { v, arrival, done: begin + delivery.service };
  });
  if (delivery.window && alone.every((a) => a.arrival > delivery.window![1])) return "window";
  if (alone.every((a) => a.done > a.v.shift[1])) return "shift";
  return null;
}

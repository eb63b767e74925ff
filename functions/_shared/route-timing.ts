// Timing a live route's stops still to come from the driver's position (docs/routes.md, The recipient): each stop's
// arrival in the route's order, from "now" at the driver, travel from one routing table call, waiting for a drop-off's
// window to open, and each stop's service (a pickup's PICKUP_SERVICE_S, a drop-off's `service_s`). Pure: the ETA
// refresh (functions/api/eta.ts) reads the route and the matrix around it, and the tests call it directly.
import { type Matrix, type Point, UNREACHABLE } from "./osrm.ts";

/** Seconds at a pickup, as route plans count them (functions/api/plan-problem.ts). */
export const PICKUP_SERVICE_S = 60;

/** A stop of a live route as public.route_timing_input answers it (a pickup done whose drop-off is to come too). */
export interface StopToCome extends Point {
  delivery_id: string;
  kind: "pickup" | "dropoff";
  status: string;
  window_start: string | null;
  window_end: string | null;
  service_s: number;
}

export interface TimedStop {
  delivery_id: string;
  kind: "pickup" | "dropoff";
  arrival_at: string;
}

/** The places to ask the routing table about: the driver's position first, then each place once. */
export function timingPoints(
  from: Point,
  stops: StopToCome[],
): { points: Point[]; at: (p: Point) => number } {
  const points: Point[] = [];
  const index = new Map<string, number>();
  const at = (p: Point) => {
    const key = `${p.lat.toFixed(6)},${p.lng.toFixed(6)}`;
    let i = index.get(key);
    if (i === undefined) {
      i = points.push({ lat: p.lat, lng: p.lng }) - 1;
      index.set(key, i);
    }
    return i;
  };
  at(from);
  for (const stop of stops) if (stop.status === "pending") at(stop);
  return { points, at };
}

/**
 * The arrival at each pending stop, in order, leaving `from` at `now` (epoch ms), and when the last one is done; null
 * when the matrix has no road on the way (the last timing then stands).
 */
export function timeStops(
  from: Point,
  stops: StopToCome[],
  matrix: Matrix,
  now: number,
): { stops: TimedStop[]; ends_at: string } | null {
  const { at } = timingPoints(from, stops);
  let position = at(from);
  let clock = 0;
  const timed: TimedStop[] = [];
  for (const stop of stops) {
    if (stop.status !== "pending") continue;
    const here = at(stop);
    const travel = matrix.durations[position]?.[here];
    if (
      typeof travel !== "number" || !Number.isFinite(travel) ||
      travel >= UNREACHABLE
    ) return null;
    const arrival = clock + travel;
    const opens = stop.kind === "dropoff" && stop.window_start ? (Date.parse(stop.window_start) - now) / 1000 : 0;
    const begin = Math.max(arrival, opens);
    timed.push({
      delivery_id: stop.delivery_id,
      kind: stop.kind,
      arrival_at: new Date(now + Math.round(arrival) * 1000).toISOString(),
    });
    clock = begin +
      (stop.kind === "pickup" ? PICKUP_SERVICE_S : stop.service_s);
    position = here;
  }
  return {
    stops: timed,
    ends_at: new Date(now + Math.round(clock) * 1000).toISOString(),
  };
}

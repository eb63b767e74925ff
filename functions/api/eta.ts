// The live ETA of deliveries in progress (docs/contract.md, Tracking): after a
// driver's accepted position, the deliveries the database says are due (30 s
// since the last request and the driver moved more than 100 m, a claim made in
// Postgres so it holds across instances) are measured again by the routing
// service from the driver's position to the destination. A failing or slow
// routing service leaves the last ETA in place; it never reaches the location
// update, which has answered already. A driver's live route is timed again at
// the same cadence (docs/routes.md): its stops still to come, from the
// driver's position, with one routing table call.
import { asService, rpc } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { osrmMatrix } from "../_shared/osrm.ts";
import { type StopToCome, timeStops, timingPoints } from "../_shared/route-timing.ts";
import { type Point, routeBetween } from "./routing.ts";

/** Shorter than a quote's: a late ETA is worth little, and the next claim comes in 30 s. */
export const ETA_ROUTING_TIMEOUT_MS = 2_000;

/** One refresh the position's statement claimed (public.update_my_location_with_eta's `eta_due`). */
export type DueRefresh = { delivery_id: string; from: Point; destination: Point } | { route_id: string; from: Point };

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

/**
 * Measures the refreshes the position's own statement claimed, without
 * holding up the answer (nothing here is awaited). Failures are logged, never
 * thrown: the location update has its answer already.
 */
export function refreshEtas(due: DueRefresh[]): void {
  if (due.length > 0) keepAlive(measure(due));
}

/** Measures each claimed refresh and records it; failures are logged, never thrown. */
async function measure(due: DueRefresh[]): Promise<void> {
  await Promise.all(due.map(async (refresh) => {
    if ("route_id" in refresh) return await retime(refresh.route_id, refresh.from);
    try {
      const route = await routeBetween(env().ROUTING_URL, refresh.from, refresh.destination, ETA_ROUTING_TIMEOUT_MS);
      await asService((tx) =>
        rpc(tx, "record_eta", {
          delivery_id: refresh.delivery_id,
          from_lat: refresh.from.lat,
          from_lng: refresh.from.lng,
          remaining_m: route.distance_m,
          duration_s: route.duration_s,
        })
      );
    } catch (error) {
      // The ETA stays at its last known value; the next claim may try again in 30 s.
      log("eta_refresh_failed", { delivery_id: refresh.delivery_id, error: (error as Error).message });
    }
  }));
}

/**
 * Times a live route's stops still to come from the driver's position (one routing table call) and records it: the
 * driver gets route_updated, each recipient whose arrival changed tracking_updated. A failing routing service, or a
 * stop it finds no road to, leaves the last timing in place.
 */
async function retime(routeId: string, from: Point): Promise<void> {
  try {
    const route = await asService((tx) => rpc(tx, "route_timing_input", { route_id: routeId })) as unknown as
      | { stops: StopToCome[] }
      | null;
    if (!route || !route.stops.some((s) => s.status === "pending")) return;
    const { points } = timingPoints(from, route.stops);
    const got = await osrmMatrix(env().ROUTING_URL, points, ETA_ROUTING_TIMEOUT_MS);
    if ("error" in got) throw new Error(got.error);
    const timed = timeStops(from, route.stops, got.matrix, Date.now());
    if (!timed) throw new Error("the routing service finds no road to a stop");
    await asService((tx) =>
      rpc(tx, "record_route_timing", {
        route_id: routeId,
        from_lat: from.lat,
        from_lng: from.lng,
        stops: timed.stops as never,
        ends_at: timed.ends_at,
      })
    );
  } catch (error) {
    log("route_timing_failed", { route_id: routeId, error: (error as Error).message });
  }
}

declare const EdgeRuntime: { waitUntil(promise: Promise<unknown>): void } | undefined;

/**
 * Work after the response: the Edge Runtime keeps the worker alive for a
 * promise given to waitUntil; a plain Deno server keeps running it anyway.
 */
function keepAlive(work: Promise<unknown>): void {
  if (typeof EdgeRuntime !== "undefined") EdgeRuntime.waitUntil(work);
}

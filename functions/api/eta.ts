// The live ETA of deliveries in progress (docs/contract.md, Tracking): after a
// driver's accepted position, the deliveries the database says are due (30 s
// since the last request and the driver moved more than 100 m, a claim made in
// Postgres so it holds across instances) are measured again by the routing
// service from the driver's position to the destination. A failing or slow
// routing service leaves the last ETA in place; it never reaches the location
// update, which has answered already.
import { asService, rpc } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { type Point, routeBetween } from "./routing.ts";

/** Shorter than a quote's: a late ETA is worth little, and the next claim comes in 30 s. */
export const ETA_ROUTING_TIMEOUT_MS = 2_000;

/** One refresh the position's statement claimed (public.update_my_location_with_eta's `eta_due`). */
export interface DueRefresh {
  delivery_id: string;
  from: Point;
  destination: Point;
}

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

declare const EdgeRuntime: { waitUntil(promise: Promise<unknown>): void } | undefined;

/**
 * Work after the response: the Edge Runtime keeps the worker alive for a
 * promise given to waitUntil; a plain Deno server keeps running it anyway.
 */
function keepAlive(work: Promise<unknown>): void {
  if (typeof EdgeRuntime !== "undefined") EdgeRuntime.waitUntil(work);
}

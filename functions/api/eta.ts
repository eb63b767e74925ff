// The live ETA of deliveries in progress (docs/contract.md, Tracking): after a
// driver's accepted position, the deliveries the database says are due (30 s
// since the last request and the driver moved more than 100 m, a claim made in
// Postgres so it holds across instances) are measured again by the routing
// service from the driver's position to the destination. A failing or slow
// routing service leaves the last ETA in place; it never reaches the location
// update, which has answered already.
import { asService, type FollowUp, rpc, rpcStatement } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { inlined } from "../_shared/sql-text.ts";
import { type Point, routeBetween } from "./routing.ts";

/** Shorter than a quote's: a late ETA is worth little, and the next claim comes in 30 s. */
export const ETA_ROUTING_TIMEOUT_MS = 2_000;

interface DueRefresh {
  delivery_id: string;
  from: Point;
  destination: Point;
}

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

/**
 * The driver's due refreshes, claimed as a follow-up of the position's own
 * transaction (functions/_shared/db.ts, FollowUp): the claim is queued with
 * that transaction's commit, and the deliveries it claims are measured after
 * the answer. Failures are logged, never thrown: the location update has its
 * answer already.
 */
export function etaRefreshes(): FollowUp<{ driver_id: string }> {
  let driverId: string | undefined;
  return {
    statements(location) {
      driverId = location.driver_id;
      // Its value inline (sql-text.ts): the whole claim leaves in the write of the position's commit.
      return [inlined(rpcStatement("claim_eta_refreshes", { driver_id: driverId }))];
    },
    settled(outcome) {
      const work = outcome.then(
        ([rows]) => measure(rows[0].result as DueRefresh[]),
        (error) => log("eta_refresh_failed", { driver_id: driverId, error: (error as Error).message }),
      );
      keepAlive(work);
    },
  };
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

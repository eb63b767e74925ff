// One run of the dispatcher: claim the rounds that are due (public.claim_dispatches: skip locked, under a
// 10-second claim, each with its candidates found in SQL), ask the routing service for each one's road
// durations (one table call per delivery, all of a batch at once), and hand them back
// (public.complete_dispatch: ranked, offered or assigned, recorded), until nothing is due or the run's time
// is up. Any number of runs may go at once, on any number of instances: the claim gives each round to one.
import { asService, rpc } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { insertIntoRoutes } from "./insert.ts";
import { type Point, tableDurations } from "./table.ts";

interface Claimed {
  delivery_id: string;
  claim: string;
  /** The company's mode when claimed: `routes` inserts into a live route (insert.ts) instead of ranking. */
  mode: string;
  origin: Point;
  candidates: (Point & { driver_id: string })[];
}

interface Completed {
  result: "offered" | "assigned" | "unassigned" | "stale" | "skipped" | "waiting" | "released";
  round: number | null;
  drivers: string[];
}

export interface RunSummary {
  rounds: number;
  offered: number;
  assigned: number;
  unassigned: number;
  /** Rounds that changed nothing: stale claims, deliveries taken meanwhile, windows that moved, a mode changed. */
  passed: number;
}

/**
 * Claims per round trip; the routing calls of a batch go at once. Small: a claim finds each round's candidates
 * (a few milliseconds each), and a run that claims more than it completes within the claim's 10 s leaves the rest
 * to be claimed, and ranked, again by another.
 */
const BATCH = 5;
/** A run stops claiming after this long, well inside pg_net's 30 s and the Edge Runtime's limits. */
const RUN_BUDGET_MS = 20_000;

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

async function complete(job: Claimed): Promise<Completed> {
  const routed = job.candidates.length === 0
    ? { durations: [], error: null }
    : await tableDurations(env().ROUTING_URL, job.origin, job.candidates);
  if (routed.error) log("dispatch_routing_failed", { delivery_id: job.delivery_id, error: routed.error });
  return await asService((tx) =>
    rpc(tx, "complete_dispatch", {
      delivery_id: job.delivery_id,
      claim: job.claim,
      durations: routed.durations,
      routing_error: routed.error,
    })
  ) as unknown as Completed;
}

/** Runs every round that is due; answers what came of them. */
export async function dispatchDue(): Promise<RunSummary> {
  const summary: RunSummary = { rounds: 0, offered: 0, assigned: 0, unassigned: 0, passed: 0 };
  const stopAt = Date.now() + RUN_BUDGET_MS;
  while (Date.now() < stopAt) {
    const batch = await asService((tx) => rpc(tx, "claim_dispatches", { batch: BATCH })) as unknown as Claimed[];
    if (batch.length === 0) break;
    await Promise.all(batch.map(async (job) => {
      try {
        const done: { result: string; round?: number | null; drivers?: string[]; route_id?: string | null } =
          job.mode === "routes" ? await insertIntoRoutes(job) : await complete(job);
        summary.rounds++;
        if (done.result === "offered" || done.result === "assigned" || done.result === "unassigned") {
          summary[done.result]++;
          log(`dispatch_${done.result}`, {
            delivery_id: job.delivery_id,
            round: done.round,
            drivers: done.drivers,
            route_id: done.route_id,
          });
        } else {
          summary.passed++;
        }
      } catch (error) {
        // Not completed (the database failed us): the claim runs out and the round is claimed again.
        log("dispatch_not_completed", { delivery_id: job.delivery_id, error: (error as Error).message });
      }
    }));
  }
  return summary;
}

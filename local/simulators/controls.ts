// What every simulator lets its user set (tests/support/fake-server.ts, the
// simulators page): a delay before each answer, and a count of the requests.
import type { MiddlewareHandler } from "hono";

export interface Controlled {
  /** Milliseconds to wait before answering. */
  delayMs: number;
  /** Requests seen, for simulators that count them. */
  requests?: number;
}

/** Counts each request and holds it `delayMs` before the simulator's routes answer it. */
export function controlled(sim: Controlled): MiddlewareHandler {
  return async (_c, next) => {
    if (sim.requests !== undefined) sim.requests++;
    if (sim.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, sim.delayMs));
    await next();
  };
}

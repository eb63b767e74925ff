// What one request carries down to every call it makes, without each function
// passing it along: its deadline (one budget per request: every outgoing call
// and every transaction ends in time for the answer to leave within
// REQUEST_BUDGET_MS, however slow the gateway, the routing or the geocoding
// service is) and, for a request with an Idempotency-Key, the key its
// transactions report their writes to (idempotency.ts, db.ts). Node's
// AsyncLocalStorage, which Deno and the Edge Runtime provide: the scope follows
// every await of the request, and nothing outside it.
import { AsyncLocalStorage } from "node:async_hooks";

/** Every /api/v1 request answers within this, whatever is slow (docs/contract.md, Time budget). */
export const REQUEST_BUDGET_MS = 10_000;
/**
 * Held back from outgoing calls for what follows the last of them: the transaction that records its outcome
 * (a withdrawal in doubt, a delivery with its charge) and the answer itself.
 */
export const AFTER_CALLS_MS = 1_500;
/** Held back from the last transaction for the answer to leave. */
const ANSWER_MS = 200;

interface Scope {
  /** When the answer must leave (epoch ms). */
  deadline: number;
  /** The idempotency key claimed for this request (its row's id), whose transactions note their writes. */
  idempotentRequestId?: string;
}

const storage = new AsyncLocalStorage<Scope>();

/** Runs `work` as one request with REQUEST_BUDGET_MS from now. */
export function withinBudget<T>(work: () => Promise<T>): Promise<T> {
  return storage.run({ deadline: Date.now() + REQUEST_BUDGET_MS }, work);
}

/**
 * Runs `work` outside any request: no deadline, no idempotency key. For work that goes on after the answer (a
 * route plan run as a job), whose calls and transactions keep their own limits.
 */
export function detached<T>(work: () => Promise<T>): Promise<T> {
  return storage.run({ deadline: Infinity }, work);
}

/** Runs `work` in the current request, its transactions noting their writes under the idempotency key `id`. */
export function underIdempotencyKey<T>(id: string | undefined, work: () => Promise<T>): Promise<T> {
  const scope = storage.getStore();
  return storage.run({ deadline: scope?.deadline ?? Infinity, idempotentRequestId: id }, work);
}

/** Runs `work` in the current request with no idempotency key: for writes that are no effect of the request. */
export function outsideIdempotencyKey<T>(work: () => Promise<T>): Promise<T> {
  return underIdempotencyKey(undefined, work);
}

/** The idempotency key the current request's transactions note their writes under, if any. */
export function idempotentRequestId(): string | undefined {
  return storage.getStore()?.idempotentRequestId;
}

/** How long an outgoing call may take: `ms`, or less when the request's budget says so (0: no time left). */
export function callTimeout(ms: number): number {
  const deadline = storage.getStore()?.deadline;
  if (deadline === undefined) return ms;
  return Math.max(0, Math.min(ms, deadline - AFTER_CALLS_MS - Date.now()));
}

/** When a transaction starting now must be over: `ms` from now, or sooner when the request's budget says so. */
export function transactionDeadline(ms: number): number {
  const deadline = storage.getStore()?.deadline ?? Infinity;
  return Math.min(Date.now() + ms, deadline - ANSWER_MS);
}

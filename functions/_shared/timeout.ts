// Deadlines. Of an outgoing HTTP exchange (the gateway, the routing service,
// the identity provider): a signal for fetch that aborts with a TimeoutError,
// as AbortSignal.timeout's does, and `clear` to disarm it once the answer is
// read. AbortSignal.timeout cannot be disarmed: its timer stays armed for the
// whole time after every exchange, and raises its DOMException then; on the
// webhook path that was one live timer per event for 10 s. Of work already
// under way (a transaction, a webhook): byDeadline.
import { callTimeout } from "./request-scope.ts";

export interface Timeout {
  signal: AbortSignal;
  /** Disarms the timer; call it once the exchange is over, whatever its outcome. */
  clear(): void;
}

/**
 * A deadline of `ms` for an outgoing exchange, shortened to what the current
 * request's budget leaves for it (request-scope.ts); with none left, the
 * signal is aborted already and the exchange fails at once as timed out.
 */
export function timeoutSignal(ms: number): Timeout {
  const controller = new AbortController();
  const abort = () => controller.abort(new DOMException("Signal timed out.", "TimeoutError"));
  const allowed = callTimeout(ms);
  if (allowed <= 0) {
    abort();
    return { signal: controller.signal, clear: () => {} };
  }
  const timer = setTimeout(abort, allowed);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Whether an exchange failed because its timeoutSignal fired. */
export function isTimeout(error: unknown): boolean {
  return (error as Error | null)?.name === "TimeoutError";
}

/**
 * `work`'s outcome, or what `expired` returns (or throws) once `ms` have passed
 * first. The timer is disarmed either way; work that settles after the
 * deadline is left to settle, its outcome no longer anyone's.
 */
export async function byDeadline<T>(work: Promise<T>, ms: number, expired: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(expired());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  work.catch(() => {});
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

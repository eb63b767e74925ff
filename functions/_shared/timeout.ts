// The deadline of an outgoing HTTP exchange (the gateway, the routing service,
// the identity provider): a signal for fetch that aborts with a TimeoutError,
// as AbortSignal.timeout's does, and `clear` to disarm it once the answer is
// read. AbortSignal.timeout cannot be disarmed: its timer stays armed for the
// whole time after every exchange, and raises its DOMException then; on the
// webhook path that was one live timer per event for 10 s.

export interface Timeout {
  signal: AbortSignal;
  /** Disarms the timer; call it once the exchange is over, whatever its outcome. */
  clear(): void;
}

export function timeoutSignal(ms: number): Timeout {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("Signal timed out.", "TimeoutError")), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Whether an exchange failed because its timeoutSignal fired. */
export function isTimeout(error: unknown): boolean {
  return (error as Error | null)?.name === "TimeoutError";
}

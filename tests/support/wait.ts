// Waiting for what a test cannot await: a NOTIFY reaching a stand-in, the
// scheduler's next run, a message leaving the outbox. (Realtime's listeners
// wait with `until` of ./realtime.ts, which leaves the verdict to the
// assertion that follows.)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` every `intervalMs` until it answers something truthy, and answers that; throws, naming `what`, once
 * `timeoutMs` have passed.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 6_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Runs `check` (assertions) until it passes; once `timeoutMs` have passed, its failure is the test's. */
export async function eventually(check: () => Promise<void> | void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

// The time as a screen shows it: read again every `everyMs` while `running`, so that a countdown, or a driver who
// stopped sending positions, changes on screen without anything else happening.
import { useEffect, useState } from "react";

/** The time now, moved on every `everyMs` (a second by default) while `running`. */
export function useClock(everyMs = 1_000, running = true): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs, running]);
  return now;
}

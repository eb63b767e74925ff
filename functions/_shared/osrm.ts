// The routing service as the functions call it (docs/contract.md, External services), speaking the OSRM HTTP API:
// the points of a request and one exchange within a deadline. The api function asks its route service
// (functions/api/routing.ts: a quote, an ETA), the dispatch function its table service (functions/dispatch/table.ts);
// each reads its own answer. Runtime-neutral (fetch only, no Deno globals), so vitest exercises it too.
import { isTimeout, timeoutSignal } from "./timeout.ts";

export interface Point {
  lat: number;
  lng: number;
}

/** Fixed notation: OSRM does not read exponents such as 1e-7. Six decimals are about 10 cm. */
const coordinate = (value: number) => value.toFixed(6);

/** `{base}/{service}/v1/driving/{lng},{lat};...?{query}`. */
export function osrmUrl(baseUrl: string, service: "route" | "table", points: Point[], query: string): string {
  const path = points.map((p) => `${coordinate(p.lng)},${coordinate(p.lat)}`).join(";");
  return `${baseUrl.replace(/\/+$/, "")}/${service}/v1/driving/${path}?${query}`;
}

/**
 * One GET within `timeoutMs`, the body included: the JSON answer whatever its status (OSRM says what went wrong in
 * its `code`), or why there is none (`timed out`, `unreachable`, `HTTP 503 without a JSON body`).
 */
export async function fetchOsrm(url: string, timeoutMs: number): Promise<{ answer: unknown } | { error: string }> {
  const timeout = timeoutSignal(timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(url, { signal: timeout.signal, headers: { accept: "application/json" } });
    } catch (error) {
      return { error: isTimeout(error) ? "timed out" : "unreachable" };
    }
    try {
      return { answer: await res.json() };
    } catch (error) {
      return { error: isTimeout(error) ? "timed out" : `HTTP ${res.status} without a JSON body` };
    }
  } finally {
    timeout.clear();
  }
}

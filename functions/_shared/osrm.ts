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

/** Seconds (and metres) standing for a pair of points the routing service found no route between. */
export const UNREACHABLE = 10_000_000;

/** Every point to every point, in seconds and metres, rounded to whole units. */
export interface Matrix {
  durations: number[][];
  distances: number[][];
}

const cell = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : UNREACHABLE;

/**
 * The table service with both annotations, every point to every point, in one call (the route planner's matrix):
 * `GET {base}/table/v1/driving/{points}?annotations=duration,distance` → `{"code": "Ok", "durations", "distances"}`.
 * A pair it gives no number for is UNREACHABLE; a service that answers no distances has them taken as the
 * durations. The matrix, or why there is none.
 */
export async function osrmMatrix(
  baseUrl: string,
  points: Point[],
  timeoutMs: number,
): Promise<{ matrix: Matrix } | { error: string }> {
  if (points.length < 2) return { matrix: { durations: points.map(() => [0]), distances: points.map(() => [0]) } };
  const got = await fetchOsrm(osrmUrl(baseUrl, "table", points, "annotations=duration,distance"), timeoutMs);
  if ("error" in got) return got;
  const body = got.answer as { code?: unknown; durations?: unknown; distances?: unknown } | null;
  if (body?.code !== "Ok") {
    return { error: typeof body?.code === "string" ? `answered ${body.code}` : "answered without a code" };
  }
  const square = (rows: unknown) =>
    Array.isArray(rows) && rows.length === points.length &&
    rows.every((row) => Array.isArray(row) && row.length === points.length);
  if (!square(body.durations)) return { error: "answered without a duration for every pair of points" };
  const durations = (body.durations as unknown[][]).map((row) => row.map(cell));
  const distances = square(body.distances) ? (body.distances as unknown[][]).map((row) => row.map(cell)) : durations;
  return { matrix: { durations, distances } };
}

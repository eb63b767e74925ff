// The routing service's table call (docs/contract.md, External services; OSRM HTTP API):
// GET {base}/table/v1/driving/{lng},{lat};{lng},{lat};...?sources=0 → {"code": "Ok", "durations": [[0, s1, s2, ...]]}:
// the road seconds between the first point (the pickup) and each of the others (the candidates). Dispatch
// never fails for it: down, slower than ROUTING_TABLE_TIMEOUT_MS, or any answer but `"code": "Ok"` with one
// row of numbers (or nulls, for a point it cannot reach) per point is a reason, and straight-line distance
// ranks instead. Runtime-neutral (fetch only, through _shared/osrm.ts), so vitest exercises it too.
import { fetchOsrm, osrmUrl, type Point } from "../_shared/osrm.ts";

export type { Point };

/**
 * Dispatch waits this long for the routing service: an offer is due within a second of a delivery becoming
 * pending, so a slow service costs at most this before straight-line distance ranks instead.
 */
export const ROUTING_TABLE_TIMEOUT_MS = 1_000;

/** Each candidate's road seconds, in the order given (null where the service found no route), or why not. */
export type TableResult = { durations: (number | null)[]; error: null } | { durations: null; error: string };

export function osrmTableUrl(baseUrl: string, origin: Point, candidates: Point[]): string {
  return osrmUrl(baseUrl, "table", [origin, ...candidates], "sources=0");
}

/** The durations of an OSRM table answer for `count` candidates, or why it is not one. */
export function durationsFromOsrm(answer: unknown, count: number): TableResult {
  const body = answer as { code?: unknown; durations?: unknown } | null;
  if (body?.code !== "Ok") {
    return {
      durations: null,
      error: typeof body?.code === "string" ? `answered ${body.code}` : "answered without a code",
    };
  }
  const row = Array.isArray(body.durations) ? body.durations[0] : undefined;
  if (!Array.isArray(row) || row.length !== count + 1) {
    return { durations: null, error: "answered without a row of durations for every point" };
  }
  const durations = row.slice(1).map((value) =>
    typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null
  );
  return { durations, error: null };
}

/** Road seconds from the pickup to each candidate, or the reason the routing service gave none. */
export async function tableDurations(
  baseUrl: string,
  origin: Point,
  candidates: Point[],
  timeoutMs = ROUTING_TABLE_TIMEOUT_MS,
): Promise<TableResult> {
  const got = await fetchOsrm(osrmTableUrl(baseUrl, origin, candidates), timeoutMs);
  if ("error" in got) return { durations: null, error: got.error };
  return durationsFromOsrm(got.answer, candidates.length);
}

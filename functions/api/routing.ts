// The routing service client (docs/contract.md, External services), speaking the OSRM HTTP API:
// GET {base}/route/v1/driving/{lng},{lat};{lng},{lat}?overview=false. Down,
// slower than 5 s, or any answer but `"code": "Ok"` with a route: 502.
// Runtime-neutral (fetch only, no Deno globals), so vitest exercises it too.
import { HttpError } from "../_shared/errors.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";

export const ROUTING_TIMEOUT_MS = 5_000;

export interface Point {
  lat: number;
  lng: number;
}

/** The route as OSRM measured it: metres and seconds, not rounded. */
export type MeasuredRoute = {
  distance_m: number;
  duration_s: number;
};

export class RoutingUnavailable extends HttpError {
  constructor(reason: string) {
    super(502, `Routing service unavailable: ${reason}`);
  }
}

const isMeasure = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0;

/** The first route of an OSRM answer; anything else is the routing service failing. */
export function routeFromOsrm(answer: unknown): MeasuredRoute {
  const body = answer as { code?: unknown; routes?: { distance?: unknown; duration?: unknown }[] } | null;
  if (body?.code !== "Ok") {
    throw new RoutingUnavailable(typeof body?.code === "string" ? `answered ${body.code}` : "answered without a code");
  }
  const route = Array.isArray(body.routes) ? body.routes[0] : undefined;
  if (!route || !isMeasure(route.distance) || !isMeasure(route.duration)) {
    throw new RoutingUnavailable("answered without a route");
  }
  return { distance_m: route.distance, duration_s: route.duration };
}

/** Fixed notation: OSRM does not read exponents such as 1e-7. Six decimals are about 10 cm. */
const coordinate = (value: number) => value.toFixed(6);

export function osrmRouteUrl(baseUrl: string, origin: Point, destination: Point): string {
  const points = [origin, destination].map((p) => `${coordinate(p.lng)},${coordinate(p.lat)}`).join(";");
  return `${baseUrl.replace(/\/+$/, "")}/route/v1/driving/${points}?overview=false`;
}

/** Drives from origin to destination, or throws RoutingUnavailable (502). */
export async function routeBetween(
  baseUrl: string,
  origin: Point,
  destination: Point,
  timeoutMs = ROUTING_TIMEOUT_MS,
): Promise<MeasuredRoute> {
  // One deadline for the whole exchange, the body included.
  const timeout = timeoutSignal(timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(osrmRouteUrl(baseUrl, origin, destination), {
        signal: timeout.signal,
        headers: { accept: "application/json" },
      });
    } catch (error) {
      throw new RoutingUnavailable(isTimeout(error) ? "timed out" : "unreachable");
    }
    let answer: unknown = null;
    try {
      answer = await res.json();
    } catch (error) {
      if (isTimeout(error)) throw new RoutingUnavailable("timed out");
      throw new RoutingUnavailable(`HTTP ${res.status} without a JSON body`);
    }
    return routeFromOsrm(answer);
  } finally {
    timeout.clear();
  }
}

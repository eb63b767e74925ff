// The routing service's route call (docs/contract.md, External services; OSRM HTTP API, through _shared/osrm.ts):
// GET {base}/route/v1/driving/{lng},{lat};{lng},{lat}?overview=false. Down,
// slower than 5 s, or any answer but `"code": "Ok"` with a route: 502.
// Runtime-neutral (fetch only, no Deno globals), so vitest exercises it too.
import { HttpError } from "../_shared/errors.ts";
import { fetchOsrm, osrmUrl, type Point } from "../_shared/osrm.ts";

export type { Point };

export const ROUTING_TIMEOUT_MS = 5_000;

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

export function osrmRouteUrl(baseUrl: string, origin: Point, destination: Point): string {
  return osrmUrl(baseUrl, "route", [origin, destination], "overview=false");
}

/** Drives from origin to destination, or throws RoutingUnavailable (502). */
export async function routeBetween(
  baseUrl: string,
  origin: Point,
  destination: Point,
  timeoutMs = ROUTING_TIMEOUT_MS,
): Promise<MeasuredRoute> {
  const got = await fetchOsrm(osrmRouteUrl(baseUrl, origin, destination), timeoutMs);
  if ("error" in got) throw new RoutingUnavailable(got.error);
  return routeFromOsrm(got.answer);
}

// An OSRM-compatible routing simulator (docs/contract.md, External services): great-circle distance
// times a road factor, at 30 km/h. Routed with Hono and runtime-neutral (a fetch
// handler), so the local stack serves it and the test suite wraps it in its
// loopback fake.
import { Hono } from "hono";
import { controlled } from "./controls.ts";

export interface RoutingSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok", or "error" to answer every route with `{"code":"NoRoute"}`. */
  mode: "ok" | "error";
  /** Milliseconds to wait before answering. */
  delayMs: number;
  requests: number;
}

const EARTH_RADIUS_M = 6_371_000;
const ROAD_FACTOR = 1.3;
const SPEED_M_PER_S = 30 / 3.6;

export function haversineMetres(a: [number, number], b: [number, number]): number {
  const [lng1, lat1, lng2, lat2] = [a[0], a[1], b[0], b[1]].map((deg) => (deg * Math.PI) / 180);
  const h = Math.sin((lat2 - lat1) / 2) ** 2 + Math.cos(lat1) * Math.cos(lat2) * Math.sin((lng2 - lng1) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(h));
}

export function createRoutingSimulator(): RoutingSimulator {
  const app = new Hono();
  const sim: RoutingSimulator = { mode: "ok", delayMs: 0, requests: 0, fetch: async (req) => await app.fetch(req) };
  const malformed = () => Response.json({ code: "InvalidUrl", message: "URL string malformed" }, { status: 400 });
  app.use("*", controlled(sim));
  app.all("/route/v1/driving/:coordinates", (c) => {
    const match = /^([-\d.]+),([-\d.]+);([-\d.]+),([-\d.]+)$/.exec(c.req.param("coordinates"));
    if (!match) return malformed();
    if (sim.mode === "error") return Response.json({ code: "NoRoute", message: "Impossible route" });
    const [lng1, lat1, lng2, lat2] = match.slice(1).map(Number);
    const distance = Math.round(haversineMetres([lng1, lat1], [lng2, lat2]) * ROAD_FACTOR * 10) / 10;
    const duration = Math.round((distance / SPEED_M_PER_S) * 10) / 10;
    return Response.json({ code: "Ok", routes: [{ distance, duration, weight: duration, legs: [] }], waypoints: [] });
  });
  app.notFound(malformed);
  return sim;
}

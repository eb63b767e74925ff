// An OSRM-compatible routing simulator (docs/contract.md, External services): great-circle distance
// times a road factor, at 30 km/h, for the route service (`/route/v1/driving/{a};{b}`) and the table service
// (`/table/v1/driving/{p0};{p1};...?sources=...&destinations=...`, as dispatch asks it). Routed with Hono and
// runtime-neutral (a fetch handler), so the local stack serves it and the test suite wraps it in its loopback fake.
import { Hono } from "hono";
import { controlled } from "./controls.ts";

export interface RoutingSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok", or "error" to answer every route with `{"code":"NoRoute"}` and every table with `{"code":"NoTable"}`. */
  mode: "ok" | "error";
  /** Milliseconds to wait before answering. */
  delayMs: number;
  /** Requests of any kind. */
  requests: number;
  /** Table requests, and the number of points of each (the pickup included). */
  tables: number[];
}

const EARTH_RADIUS_M = 6_371_000;
const ROAD_FACTOR = 1.3;
const SPEED_M_PER_S = 30 / 3.6;

export function haversineMetres(a: [number, number], b: [number, number]): number {
  const [lng1, lat1, lng2, lat2] = [a[0], a[1], b[0], b[1]].map((deg) => (deg * Math.PI) / 180);
  const h = Math.sin((lat2 - lat1) / 2) ** 2 + Math.cos(lat1) * Math.cos(lat2) * Math.sin((lng2 - lng1) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(h));
}

/** Metres and seconds by road between two [lng, lat] points, to a tenth, as OSRM rounds them. */
function drive(a: [number, number], b: [number, number]): { distance: number; duration: number } {
  const distance = Math.round(haversineMetres(a, b) * ROAD_FACTOR * 10) / 10;
  return { distance, duration: Math.round((distance / SPEED_M_PER_S) * 10) / 10 };
}

const badRequest = (code: string, message: string) => Response.json({ code, message }, { status: 400 });
const malformed = () => badRequest("InvalidUrl", "URL string malformed");

/** `sources` / `destinations` of a table request: the indices listed (`0;2`), or every point (`all`, absent). */
function indices(value: string | undefined, count: number): number[] | null {
  if (value === undefined || value === "all") return [...Array(count).keys()];
  const list = value.split(";").map(Number);
  return list.every((i) => Number.isInteger(i) && i >= 0 && i < count) ? list : null;
}

export function createRoutingSimulator(): RoutingSimulator {
  const app = new Hono();
  const sim: RoutingSimulator = {
    mode: "ok",
    delayMs: 0,
    requests: 0,
    tables: [],
    fetch: async (req) => await app.fetch(req),
  };
  app.use("*", controlled(sim));
  app.all("/route/v1/driving/:coordinates", (c) => {
    const match = /^([-\d.]+),([-\d.]+);([-\d.]+),([-\d.]+)$/.exec(c.req.param("coordinates"));
    if (!match) return malformed();
    if (sim.mode === "error") return Response.json({ code: "NoRoute", message: "Impossible route" });
    const [lng1, lat1, lng2, lat2] = match.slice(1).map(Number);
    const { distance, duration } = drive([lng1, lat1], [lng2, lat2]);
    return Response.json({ code: "Ok", routes: [{ distance, duration, weight: duration, legs: [] }], waypoints: [] });
  });
  app.all("/table/v1/driving/:coordinates", (c) => {
    const points = c.req.param("coordinates").split(";").map((pair) => pair.split(",").map(Number));
    sim.tables.push(points.length);
    if (points.length < 2 || points.some((p) => p.length !== 2 || p.some((n) => !Number.isFinite(n)))) {
      return malformed();
    }
    const sources = indices(c.req.query("sources"), points.length);
    const destinations = indices(c.req.query("destinations"), points.length);
    if (!sources || !destinations) return badRequest("InvalidOptions", "Index out of bounds");
    if (sim.mode === "error") return Response.json({ code: "NoTable", message: "No route found" });
    const at = (i: number) => points[i] as [number, number];
    const waypoint = (i: number) => ({ location: at(i), name: "", distance: 0 });
    // `annotations=duration,distance` (the route planner's matrix) adds the metres; OSRM's default is durations.
    const distances = (c.req.query("annotations") ?? "").split(",").includes("distance")
      ? { distances: sources.map((s) => destinations.map((d) => drive(at(s), at(d)).distance)) }
      : {};
    return Response.json({
      code: "Ok",
      durations: sources.map((s) => destinations.map((d) => drive(at(s), at(d)).duration)),
      ...distances,
      sources: sources.map(waypoint),
      destinations: destinations.map(waypoint),
    });
  });
  app.notFound(malformed);
  return sim;
}

// An OSRM-compatible routing simulator (docs/contract.md, External services): great-circle distance
// times a road factor, at 30 km/h, for the route service (`/route/v1/driving/{a};{b}`) and the table service
// (`/table/v1/driving/{p0};{p1};...?sources=...&destinations=...`, as dispatch asks it). Runtime-neutral (a
// fetch handler), so the local stack serves it and the test suite wraps it in its loopback fake.
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

/** `sources` / `destinations` of a table request: the indices listed (`0;2`), or every point (`all`, absent). */
function indices(value: string | null, count: number): number[] | null {
  if (value === null || value === "all") return [...Array(count).keys()];
  const list = value.split(";").map(Number);
  return list.every((i) => Number.isInteger(i) && i >= 0 && i < count) ? list : null;
}

function table(url: URL, coordinates: string, mode: "ok" | "error"): Response {
  const points = coordinates.split(";").map((pair) => pair.split(",").map(Number));
  if (points.length < 2 || points.some((p) => p.length !== 2 || p.some((n) => !Number.isFinite(n)))) {
    return badRequest("InvalidUrl", "URL string malformed");
  }
  const sources = indices(url.searchParams.get("sources"), points.length);
  const destinations = indices(url.searchParams.get("destinations"), points.length);
  if (!sources || !destinations) return badRequest("InvalidOptions", "Index out of bounds");
  if (mode === "error") return Response.json({ code: "NoTable", message: "No route found" });
  const at = (i: number) => points[i] as [number, number];
  const waypoint = (i: number) => ({ location: at(i), name: "", distance: 0 });
  return Response.json({
    code: "Ok",
    durations: sources.map((s) => destinations.map((d) => drive(at(s), at(d)).duration)),
    sources: sources.map(waypoint),
    destinations: destinations.map(waypoint),
  });
}

export function createRoutingSimulator(): RoutingSimulator {
  const sim: RoutingSimulator = {
    mode: "ok",
    delayMs: 0,
    requests: 0,
    tables: [],
    async fetch(req: Request): Promise<Response> {
      sim.requests++;
      if (sim.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, sim.delayMs));
      const url = new URL(req.url);
      const tableMatch = /\/table\/v1\/driving\/([^/]+)$/.exec(url.pathname);
      if (tableMatch) {
        sim.tables.push(tableMatch[1].split(";").length);
        return table(url, decodeURIComponent(tableMatch[1]), sim.mode);
      }
      const match = /\/route\/v1\/driving\/([-\d.]+),([-\d.]+);([-\d.]+),([-\d.]+)$/.exec(url.pathname);
      if (!match) return badRequest("InvalidUrl", "URL string malformed");
      if (sim.mode === "error") return Response.json({ code: "NoRoute", message: "Impossible route" });
      const [lng1, lat1, lng2, lat2] = match.slice(1).map(Number);
      const { distance, duration } = drive([lng1, lat1], [lng2, lat2]);
      return Response.json({ code: "Ok", routes: [{ distance, duration, weight: duration, legs: [] }], waypoints: [] });
    },
  };
  return sim;
}

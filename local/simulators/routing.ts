// An OSRM-compatible routing simulator (docs/contract.md, External services): great-circle distance
// times a road factor, at 30 km/h. Runtime-neutral (a fetch handler), so the
// local stack serves it and the test suite wraps it in its loopback fake.
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
  const sim: RoutingSimulator = {
    mode: "ok",
    delayMs: 0,
    requests: 0,
    async fetch(req: Request): Promise<Response> {
      sim.requests++;
      if (sim.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, sim.delayMs));
      const match = /\/route\/v1\/driving\/([-\d.]+),([-\d.]+);([-\d.]+),([-\d.]+)$/.exec(new URL(req.url).pathname);
      if (!match) return Response.json({ code: "InvalidUrl", message: "URL string malformed" }, { status: 400 });
      if (sim.mode === "error") return Response.json({ code: "NoRoute", message: "Impossible route" });
      const [lng1, lat1, lng2, lat2] = match.slice(1).map(Number);
      const distance = Math.round(haversineMetres([lng1, lat1], [lng2, lat2]) * ROAD_FACTOR * 10) / 10;
      const duration = Math.round((distance / SPEED_M_PER_S) * 10) / 10;
      return Response.json({ code: "Ok", routes: [{ distance, duration, weight: duration, legs: [] }], waypoints: [] });
    },
  };
  return sim;
}

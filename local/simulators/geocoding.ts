// A Nominatim-compatible geocoding simulator (docs/contract.md, External services): GET /search?q=...&format=jsonv2
// &countrycodes=br&limit=5[&addressdetails=1] answers the places of the São Paulo gazetteer that match the text, as
// Nominatim's search does (lat and lon as strings, `display_name`, and `address` with addressdetails=1), and `[]`
// when nothing matches. Routed with Hono and runtime-neutral (a fetch handler), so the local stack serves it and the
// test suite wraps it in its loopback fake.
import { Hono } from "hono";
import { controlled } from "./controls.ts";
import { CITY, search, STATE_NAME } from "./gazetteer.ts";

export interface GeocodingSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok", or "error" to answer every request 500. */
  mode: "ok" | "error";
  /** Milliseconds to wait before answering. */
  delayMs: number;
  requests: number;
  /** The `q` of every search, in order. */
  queries: string[];
}

/** The administrative levels Nominatim names between a São Paulo street and the country. */
const ABOVE_CITY = {
  municipality: "Região Imediata de São Paulo",
  county: "Região Metropolitana de São Paulo",
  state_district: "Região Geográfica Intermediária de São Paulo",
  state: STATE_NAME,
  "ISO3166-2-lvl4": "BR-SP",
  region: "Região Sudeste",
};

export function createGeocodingSimulator(): GeocodingSimulator {
  const app = new Hono();
  const sim: GeocodingSimulator = {
    mode: "ok",
    delayMs: 0,
    requests: 0,
    queries: [],
    fetch: async (req) => await app.fetch(req),
  };
  app.use("*", controlled(sim));
  app.use("*", async (c, next) => {
    if (sim.mode === "error") return c.text("Internal Server Error", 500);
    await next();
  });
  app.all("/search", (c) => {
    const url = new URL(c.req.url);
    const q = url.searchParams.get("q")?.trim() ?? "";
    if (!q) return Response.json({ error: { code: 400, message: "Nothing to search for." } }, { status: 400 });
    sim.queries.push(q);
    const countries = url.searchParams.get("countrycodes")?.toLowerCase().split(",") ?? ["br"];
    if (!countries.includes("br")) return Response.json([]);
    const limit = Math.min(Math.max(Number(url.searchParams.get("limit") ?? 10) || 10, 1), 40);
    const details = url.searchParams.get("addressdetails") === "1";
    return Response.json(
      search(q, limit).map(({ place, houseNumber }, i) => {
        const number = houseNumber === null ? [] : [String(houseNumber)];
        const names = [...number, place.street, place.neighborhood, CITY, ...Object.values(ABOVE_CITY)]
          .filter((name) => !name.startsWith("BR-"));
        return {
          place_id: 100_000 + i,
          licence: "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
          osm_type: "way",
          osm_id: 4_000_000 + i,
          lat: place.lat.toFixed(7),
          lon: place.lng.toFixed(7),
          category: houseNumber === null ? "highway" : "place",
          type: houseNumber === null ? "residential" : "house",
          place_rank: houseNumber === null ? 26 : 30,
          importance: 0.1,
          addresstype: houseNumber === null ? "road" : "place",
          name: houseNumber === null ? place.street : "",
          display_name: [...names, place.cep, "Brasil"].join(", "),
          ...(details
            ? {
              address: {
                ...(houseNumber === null ? {} : { house_number: String(houseNumber) }),
                road: place.street,
                suburb: place.neighborhood,
                city: CITY,
                ...ABOVE_CITY,
                postcode: place.cep,
                country: "Brasil",
                country_code: "br",
              },
            }
            : {}),
          boundingbox: [place.lat - 0.001, place.lat + 0.001, place.lng - 0.001, place.lng + 0.001]
            .map((value) => value.toFixed(7)),
        };
      }),
    );
  });
  app.notFound(() => new Response("Not Found", { status: 404 }));
  return sim;
}

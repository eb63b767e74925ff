// Driver locations: a driver's own position (rate-limited in the database) and
// the managers' live view of every driver's last position.
import { z } from "zod";
import { rpc, rpcStatement } from "../../_shared/db.ts";
import { defineRoute, rateLimited } from "../../_shared/route.ts";
import { IdParams, LatLng, Timestamp } from "../schemas.ts";
import { inlined } from "../../_shared/sql-text.ts";
import { type DueRefresh, refreshEtas } from "../eta.ts";

const Position = {
  lat: z.number(),
  lng: z.number(),
  heading: z.number().nullable(),
  speed: z.number().nullable(),
  accuracy: z.number().nullable(),
};

const DriverLocation = z.object({ driver_id: z.uuid(), ...Position, updated_at: Timestamp }).meta({
  id: "DriverLocation",
});

const DriverLocationItem = z.object({
  driver_id: z.uuid(),
  name: z.string(),
  lat: Position.lat.nullable(),
  lng: Position.lng.nullable(),
  heading: Position.heading,
  speed: Position.speed,
  accuracy: Position.accuracy,
  updated_at: Timestamp.nullable(),
}).meta({ id: "DriverLocationItem" });

const LocationUpdate = LatLng.extend({
  heading: z.number().min(0).lt(360).nullish().describe("Degrees clockwise from north, 0 ≤ heading < 360"),
  speed: z.number().min(0).nullish().describe("Metres per second"),
  accuracy: z.number().min(0).nullish().describe("Metres"),
});

export const updateMyLocation = defineRoute({
  method: "put",
  path: "/api/v1/locations/me",
  tag: "locations",
  summary: "Update the calling driver's position",
  description: "At most one accepted update per 10 seconds per driver, counted from the last accepted one and " +
    "enforced in the database (it holds across every instance of the service). An update inside the window " +
    "changes nothing and answers 429 with a `Retry-After` header in whole seconds. `heading`, `speed` and " +
    "`accuracy` may be omitted or null (unknown); an omitted one is stored as null, not kept from the last " +
    "update. An accepted position is broadcast as `driver_location` on the private Realtime topic " +
    "`company:{company_id}` with the same object as the response (and the message's `id`, which Realtime adds), " +
    "and to the tracking topic of the driver's " +
    "delivery in progress. It may also refresh that delivery's ETA (see GET /api/v1/track/{token}), after the " +
    "answer: a slow or failing routing service never delays or fails this call.",
  auth: "bearer",
  roles: "drivers",
  body: LocationUpdate,
  responses: {
    200: { description: "The stored position", schema: DriverLocation },
    429: rateLimited("Less than 10 seconds since the driver's last accepted update", 10),
  },
  async handler({ body, asCallerAtOnce }) {
    // One statement (the position, and the claim of the driver's deliveries due a new ETA) with its values
    // inline, sent with the transaction's begin and commit in one write. Inside the window it raises PT429
    // with the wait, which errors.ts answers as 429 with Retry-After.
    const [[row]] = await asCallerAtOnce([inlined(rpcStatement("update_my_location_with_eta", {
      lat: body.lat,
      lng: body.lng,
      heading: body.heading,
      speed: body.speed,
      accuracy: body.accuracy,
    }))]);
    const { location, eta_due } = row.result as { location: z.infer<typeof DriverLocation>; eta_due: DueRefresh[] };
    refreshEtas(eta_due);
    return { body: location };
  },
});

export const listDriverLocations = defineRoute({
  method: "get",
  path: "/api/v1/drivers/locations",
  tag: "locations",
  summary: "Every active driver of the company with its last position",
  description: "All active drivers of the company in one answer, by name (a map needs every one at once, so " +
    "there are no pages). A driver that has not sent a position yet is listed with null position fields; a " +
    "deactivated driver is not listed. Live updates arrive as `driver_location` on the private Realtime topic " +
    "`company:{company_id}`.",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "drivers:read",
  responses: {
    200: { description: "The drivers and their positions", schema: z.object({ items: z.array(DriverLocationItem) }) },
  },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "list_driver_locations")) }),
});

const DeliveryTrail = z.object({
  delivery_id: z.uuid(),
  points: z.array(z.object({ lat: z.number(), lng: z.number(), recorded_at: Timestamp })),
}).meta({ id: "DeliveryTrail" });

export const getDeliveryTrail = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/{id}/trail",
  tag: "locations",
  summary: "The path the driver took while the delivery was in progress",
  description: "The driver's accepted positions while this delivery was in progress, oldest first, at most the " +
    "newest 500 (at one update per 10 seconds, the last 83 minutes or more). Empty for a delivery that was " +
    "never in progress. The points stay after the delivery completes. Newer points arrive live as " +
    "`driver_location` broadcasts.",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: { 200: { description: "The trail", schema: DeliveryTrail } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_delivery_trail", { delivery_id: params.id })),
  }),
});

export default [updateMyLocation, listDriverLocations, getDeliveryTrail];

// Dispatch (docs/dispatch.md): how the company dispatches its deliveries, a driver declining an offer, and
// every decision dispatch took for a delivery. Ranking, offers and assignment happen in the database and the
// dispatch function (supabase/schemas/14_dispatch.sql, functions/dispatch/).
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { IdParams, Timestamp } from "../schemas.ts";
import { Delivery } from "./deliveries.ts";

const DispatchMode = z.enum(["broadcast", "offer", "auto", "routes"]).describe(
  "`broadcast` (the default): a pending delivery is shown to every driver of the company at once " +
    "(`delivery_available`), and the first to accept takes it. `offer`: the best `offer_batch` eligible drivers get " +
    "an offer (`delivery_offered` on `driver:{driver_id}`), which only they see and may accept, for " +
    "`offer_timeout_s`; a decline or the deadline passes it to the next batch; once no eligible driver is left (an " +
    "attempt is offered to the 20 nearest eligible drivers at most), it is shown to every driver as in broadcast " +
    'and flagged `dispatch_status: "unassigned"`. `auto`: the best eligible driver still below its limit is ' +
    "assigned at once (as POST /deliveries/{id}/assign; `delivery_updated` to the driver); nobody: unassigned, as " +
    "above. `routes`: the delivery is inserted where it adds the least duration into a published or in-progress " +
    "route of an online driver, keeping every window, capacity and stop already done; it is then that driver's " +
    "(`accepted`), who gets `route_updated` (the route); where no route can take it, unassigned as above.",
);

const DispatchSettings = z.object({
  mode: DispatchMode,
  offer_timeout_s: z.number().int().min(10).max(600).describe("How long an offer stays open, in seconds (10 to 600)."),
  offer_batch: z.number().int().min(1).max(20).describe("How many drivers are offered a delivery at once (1 to 20)."),
  max_active_per_driver: z.number().int().min(1).max(20).describe(
    "A driver with this many accepted or in-progress deliveries is not eligible (1 to 20).",
  ),
  max_distance_km: z.number().min(0.5).max(200).describe(
    "Eligible drivers are at most this far from the pickup in a straight line, in km (0.5 to 200).",
  ),
}).meta({ id: "DispatchSettings" });

const ELIGIBILITY = "A driver is eligible when active, online (a position sent in the last 2 minutes), below " +
  "`max_active_per_driver` accepted or in-progress deliveries, and within `max_distance_km` of the pickup in a " +
  "straight line. The nearest eligible drivers (at most 20) are ranked by road duration to the pickup from one " +
  "call to the routing service's table, then by fewer deliveries completed today (São Paulo's day); when the " +
  "routing service fails (down, 1 s without an answer, not `Ok`), by straight-line distance instead: a dispatch " +
  "never fails for it. A delivery whose window opens more than an hour from now is dispatched an hour before it.";

export const getDispatchSettings = defineRoute({
  method: "get",
  path: "/api/v1/dispatch/settings",
  tag: "dispatch",
  summary: "How the company dispatches its deliveries",
  description: `Until the company chooses: broadcast, 60 s, 1, 1, 20 km. ${ELIGIBILITY}`,
  auth: "bearer",
  roles: "company_managers",
  responses: { 200: { description: "The settings", schema: DispatchSettings } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_dispatch_settings")) }),
});

export const putDispatchSettings = defineRoute({
  method: "put",
  path: "/api/v1/dispatch/settings",
  tag: "dispatch",
  summary: "Choose how the company dispatches its deliveries",
  description: "A field left out keeps its value. A delivery is dispatched under the settings in force when its " +
    "round runs. Back to `broadcast`, the deliveries dispatch still holds (queued or offered) are shown to every " +
    "driver at once and their offers withdrawn; from `broadcast`, deliveries already pending stay open to every " +
    `driver. ${ELIGIBILITY}`,
  auth: "bearer",
  roles: "company_managers",
  body: DispatchSettings.partial(),
  responses: { 200: { description: "The settings now", schema: DispatchSettings } },
  handler: async ({ body, asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "set_dispatch_settings", body)) }),
});

export const declineDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/decline",
  tag: "dispatch",
  summary: "Decline an offer",
  description: "The calling driver declines its live offer of the delivery, which then goes to the next batch of " +
    "drivers (once no other offer of this batch is live). The delivery is answered as it stands; the driver no " +
    "longer sees it.",
  auth: "bearer",
  roles: "drivers",
  params: IdParams,
  responses: {
    200: { description: "The delivery", schema: Delivery },
    404: { description: "The driver was never offered this delivery (and cannot see it)" },
    422: {
      description: "Nothing to decline: the delivery is open to every driver or already the driver's, or the offer " +
        "expired, was withdrawn, accepted or already declined (the message says which)",
    },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "decline_delivery", { delivery_id: params.id })),
  }),
});

const LeftOut = z.enum(["inactive", "offline", "at_limit", "out_of_radius", "offered_before"]).nullable().describe(
  "Why the driver was left out: `inactive`, `offline` (no position in the last 2 minutes), `at_limit` (its " +
    "accepted and in-progress deliveries reach `max_active_per_driver`; under `auto`, also a ranked driver that " +
    "reached it before the assignment), `out_of_radius` (the nearest 5 beyond `max_distance_km` are listed), " +
    "`offered_before` (offered this attempt already); null for an eligible one.",
);

const DispatchCandidate = z.object({
  driver_id: z.uuid(),
  name: z.string(),
  rank: z.number().int().nullable().describe("1 = best, among the eligible; null for one left out."),
  distance_m: z.number().int().describe("Straight-line metres to the pickup."),
  duration_s: z.number().int().nullable().describe(
    "Road seconds between the pickup and the driver, from the routing service; null when it gave none.",
  ),
  completed_today: z.number().int().nullable().describe("Deliveries it completed today (eligible ones only)."),
  active_deliveries: z.number().int().nullable().describe("Its accepted and in-progress deliveries, when counted."),
  left_out: LeftOut,
  lat: z.number().describe("The driver's position when ranked."),
  lng: z.number(),
}).meta({ id: "DispatchCandidate" });

const DispatchRound = z.object({
  round: z.number().int().describe("1, 2, ... within an attempt."),
  attempt: z.number().int().describe("The delivery's attempt (see `attempts`): a reopened delivery starts again."),
  mode: z.enum(["offer", "auto", "routes"]),
  ranked_at: Timestamp,
  ranked_by: z.enum(["road_duration", "straight_line"]).nullable().describe(
    "`road_duration`: the routing service answered; `straight_line`: it failed (`routing_error` says how); null: " +
      "nobody was eligible.",
  ),
  routing_error: z.string().nullable(),
  outcome: z.enum(["offered", "assigned", "unassigned"]),
  driver_id: z.uuid().nullable().describe("The driver `auto` assigned."),
  candidates: z.array(DispatchCandidate).describe(
    "The eligible, best first, then those left out, nearest first (at most 20 eligible and 25 left out).",
  ),
}).meta({ id: "DispatchRound" });

const DispatchOffer = z.object({
  id: z.uuid(),
  driver_id: z.uuid(),
  name: z.string(),
  attempt: z.number().int(),
  round: z.number().int(),
  offered_at: Timestamp,
  expires_at: Timestamp,
  outcome: z.enum(["accepted", "declined", "expired", "withdrawn"]).nullable().describe(
    "null while live. `withdrawn`: the delivery went another way before the driver answered (another driver of " +
      "the batch took it, a manager assigned or cancelled it, the company went back to broadcast), or the driver " +
      "reached its limit or was deactivated.",
  ),
  decided_at: Timestamp.nullable().describe("When it was answered or withdrawn; for an expired one, its deadline."),
}).meta({ id: "DispatchOffer" });

export const getDeliveryDispatch = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/{id}/dispatch",
  tag: "dispatch",
  summary: "Every decision dispatch took for a delivery",
  description: "Each round (oldest first): the drivers considered, ranked or left out with the reason, their " +
    "distance and road duration, and the outcome; and each offer with its driver, times and outcome. Empty for a " +
    "delivery never dispatched (broadcast).",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: {
    200: {
      description: "The dispatch record",
      schema: z.object({
        delivery_id: z.uuid(),
        dispatch_status: Delivery.shape.dispatch_status,
        rounds: z.array(DispatchRound),
        offers: z.array(DispatchOffer),
      }).meta({ id: "DeliveryDispatch" }),
    },
    404: { description: "No delivery of the company has this id" },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_delivery_dispatch", { delivery_id: params.id })),
  }),
});

export default [getDispatchSettings, putDispatchSettings, declineDelivery, getDeliveryDispatch];

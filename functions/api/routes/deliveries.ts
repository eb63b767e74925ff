// Deliveries and route quotes (docs/state-machines.md; docs/contract.md). Every move is a PL/pgSQL
// function (supabase/schemas/05_deliveries.sql); these handlers
// only add what SQL cannot do: ask the geocoding service, the routing service and the gateway.
import { z } from "zod";
import { asService, rpc, type Tx } from "../../_shared/db.ts";
import type { Database } from "../../_shared/database.types.ts";
import { Document } from "../brazil.ts";
import { createPixCharge, logOrphanCharge, type PixPayment } from "../pix-charge.ts";
import { env } from "../../_shared/env.ts";
import { ErrorBody, HttpError, ValidationErrorBody } from "../../_shared/errors.ts";
import { companyGateway } from "../../_shared/gateway.ts";
import { defineRoute } from "../../_shared/route.ts";
import { placesFor } from "../address-lookups.ts";
import type { Place } from "../geocoding.ts";
import { checkProofImages } from "../proof-images.ts";
import { type MeasuredRoute, type Point, routeBetween } from "../routing.ts";
import { dayBounds, DayOrTime } from "../days.ts";
import {
  Email,
  IdParams,
  LatLng,
  Money,
  pageOf,
  PageQuery,
  Phone,
  PositiveMoney,
  Text,
  Timestamp,
} from "../schemas.ts";

export const FailureReason = z.enum(["recipient_absent", "address_not_found", "refused", "damaged", "other"]);

export const DeliveryStatus = z.enum([
  "awaiting_payment",
  "pending",
  "accepted",
  "in_progress",
  "completed",
  "cancelled",
  "failed",
  "returning",
  "returned",
]);
export const CollectMethod = z.enum(["cash", "card"]).describe("cash, or card on the driver's card machine.");

/** What a delivery collects at the door (POST /api/v1/deliveries, the import). */
export const Collect = z.object({
  amount: PositiveMoney,
  method: CollectMethod,
  change_for: PositiveMoney.nullish().describe(
    "Cash only: the note the recipient will pay with (e.g. 100.00): the driver brings change_for − amount.",
  ),
}).superRefine((collect, ctx) => {
  if (collect.change_for == null) return;
  if (collect.method !== "cash") {
    ctx.addIssue({ code: "custom", path: ["change_for"], message: "only cash has change", input: collect.change_for });
  } else if (collect.change_for < collect.amount) {
    ctx.addIssue({
      code: "custom",
      path: ["change_for"],
      message: "must be at least amount",
      input: collect.change_for,
    });
  }
}).describe(
  "Money at the door, with any payment method: what the driver collects from the recipient (the goods, the fee), " +
    "in cash or by card. The driver sees it, and the change to bring, before accepting.",
);

export const PaymentStatus = z.enum(["pending", "received", "confirmed", "refunded", "overdue", "invoiced"]);

export const Delivery = z.object({
  id: z.uuid(),
  company_id: z.uuid(),
  status: DeliveryStatus,
  payment_status: PaymentStatus,
  payment_method: z.enum(["pix", "invoice"]),
  origin_address: z.string(),
  origin: LatLng,
  destination_address: z.string(),
  destination: LatLng,
  distance_m: z.number().int().describe("Metres by road, as the routing service measured them."),
  duration_s: z.number().int().describe("Seconds of driving, as the routing service estimated them."),
  price: Money,
  driver_id: z.uuid().nullable(),
  recipient_name: z.string().nullable(),
  recipient_phone: z.string().nullable(),
  notes: z.string().nullable(),
  payment: z.object({
    gateway_payment_id: z.string(),
    pix_copy_paste: z.string().describe("The Pix copy-paste code (the QR code's payload)."),
    pix_qr_code_image: z.string().describe("The QR code as a base64 PNG."),
    due_date: z.iso.date(),
  }).nullable().describe("The Pix charge; null for invoice deliveries."),
  cancel_reason: z.string().nullable(),
  refund_due: z.boolean().describe(
    "True for a cancelled delivery whose payment was received (paid after it went overdue, or cancelled after it " +
      "was paid): refund it at the gateway; the gateway's PAYMENT_REFUNDED then clears it.",
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
  accepted_at: Timestamp.nullable(),
  started_at: Timestamp.nullable(),
  completed_at: Timestamp.nullable(),
  cancelled_at: Timestamp.nullable(),
  remaining_m: z.number().int().nullable().describe(
    "While in progress: metres by road from the driver's position to the destination, as last measured.",
  ),
  eta_at: Timestamp.nullable().describe(
    "While in progress: the expected arrival, refreshed from the routing service as the driver moves (at most " +
      "once per 30 s, after more than 100 m); the last value stays when the routing service fails.",
  ),
  eta_refreshed_at: Timestamp.nullable().describe("When remaining_m and eta_at were measured."),
  proof: z.object({
    photo_path: z.string().nullable(),
    signature_path: z.string().nullable(),
    note: z.string().nullable(),
  }).nullable().describe(
    "Proof of delivery, once completed: the names of the photo and the signature in the private Storage bucket " +
      "`delivery-proofs` (the company's managers read them with supabase-js, e.g. `createSignedUrl`), and the note.",
  ),
  tracking_token: z.string().nullable().describe(
    "The recipient's tracking token (GET /api/v1/track/{token}); shown to the company's managers only (null for " +
      "drivers).",
  ),
  tracking_url: z.string().nullable().describe(
    "The path of the recipient's tracking page in the web app (`/track/{token}`); managers only (null for drivers).",
  ),
  recipient_email: z.string().nullable().describe("Where the recipient's e-mail notifications go."),
  window_start: Timestamp.nullable().describe(
    "When the recipient's window opens, if given. Until an hour before it, drivers are not offered the delivery " +
      "(they neither see it nor get `delivery_available`); managers may still assign it.",
  ),
  window_end: Timestamp.nullable().describe("When the recipient's window closes, if given."),
  late: z.boolean().describe(
    "True once window_end has passed and the delivery is neither completed nor cancelled (computed when read).",
  ),
  external_id: z.string().nullable().describe("The company's own reference; unique within the company."),
  attempts: z.number().int().describe("The attempt under way: 1 at creation, one more each time it is reopened."),
  failed_at: Timestamp.nullable().describe("When the last attempt failed, if one did."),
  failure_reason: FailureReason.nullable().describe("Why the last attempt failed, as the driver reported it."),
  failure_note: z.string().nullable().describe("The driver's note on the last failed attempt."),
  failure_photo_path: z.string().nullable().describe(
    "The photo of the last failed attempt, if the driver took one: its name in the private Storage bucket " +
      "`delivery-proofs` (`{company_id}/{id}/failed-{attempt}.{ext}`; the company's managers read it with " +
      "supabase-js, e.g. `createSignedUrl`). Stays, with the reason and the note, when the delivery is reopened; " +
      "null when the last failed attempt had no photo.",
  ),
  dispatch_status: z.enum(["queued", "offered", "unassigned", "assigned"]).nullable().describe(
    "Where dispatch has it (GET/PUT /api/v1/dispatch/settings). null: not under dispatch (the company broadcasts, " +
      "the delivery was created for a driver, or it awaits payment). `queued`: pending, waiting for its next round " +
      "of ranking (within a second, or until an hour before its window opens); `offered`: a batch of drivers holds " +
      "offers; `unassigned`: nobody eligible was left, so every driver of the company may take it, as in broadcast " +
      "(the dispatcher's attention); `assigned`: dispatch ended with a driver (auto-assigned, or taken while under " +
      "dispatch), kept afterwards. A cancelled delivery leaves dispatch (null).",
  ),
  offer_expires_at: Timestamp.nullable().describe(
    "For a driver holding a live offer of this delivery: when the offer expires (accept or decline before). Null " +
      "for everyone else.",
  ),
  size: z.number().int().describe("Units it takes in a vehicle (routes: a vehicle's capacity is in units)."),
  service_s: z.number().int().describe("Seconds spent at the drop-off (routes time it; a pickup takes 60)."),
  collect: z.object({
    amount: Money.describe("What the driver collects from the recipient."),
    method: CollectMethod,
    change_for: Money.nullable().describe("Cash only: the note the recipient pays with (the driver brings change)."),
    change_due: Money.nullable().describe(
      "change_for − amount: the change the driver brings; null without change_for.",
    ),
  }).nullable().describe(
    "Money at the door: what the driver collects from the recipient (cash or card), shown to drivers before they " +
      "accept (in lists and offers) and at the door; completion then requires `collected`. Null: nothing to collect.",
  ),
  collected: z.object({ amount: Money, method: CollectMethod }).nullable().describe(
    "What the driver reported collecting on completion, as reported (cash is then owed by the driver to the company: " +
      "GET /api/v1/drivers/{id}/cash; card moves no cash).",
  ),
  collect_mismatch: z.boolean().describe(
    "True when the amount collected differs from the amount to collect: the company's attention.",
  ),
  recall_reason: z.string().nullable().describe(
    "Why the company recalled it (POST /api/v1/deliveries/{id}/recall), if it did.",
  ),
  returned_at: Timestamp.nullable().describe("When the driver brought a recalled delivery back (`returned`)."),
  refund_status: z.enum(["requested", "refunded"]).nullable().describe(
    "The refund of its Pix payment: `requested` once the gateway accepted POST /api/v1/deliveries/{id}/refund and " +
      "until it reports the refund done; `refunded` once the payment is refunded (payment_status `refunded`); null " +
      "when none was asked for.",
  ),
}).meta({ id: "Delivery" });

const Route = z.object({ origin: LatLng, destination: LatLng });

const LOCATED = "Omitted (or null): the address is geocoded, its first place taken.";
export const CreateDelivery = z.object({
  origin: LatLng.nullish().describe(`The pick-up's coordinates. ${LOCATED}`),
  destination: LatLng.nullish().describe(`The drop-off's coordinates. ${LOCATED}`),
  origin_address: Text(500),
  destination_address: Text(500),
  payment_method: z.enum(["pix", "invoice"]).default("pix"),
  // Optional fields may also be null, as the API returns them.
  customer: z.object({ name: Text(200), document: Document, email: Email.nullish() }).nullish()
    .describe("The client who pays the Pix charge; required for payment_method pix."),
  recipient_name: Text(200).nullish(),
  recipient_phone: Phone.nullish(),
  notes: Text(2000).nullish(),
  recipient_email: Email.nullish(),
  driver_id: z.uuid().nullish(),
  window_start: Timestamp.nullish().describe("ISO 8601 with an offset; before window_end."),
  window_end: Timestamp.nullish().describe("ISO 8601 with an offset; in the future."),
  external_id: Text(100).nullish().describe(
    "The company's own reference (an order number): a second delivery with it is 409, naming the first.",
  ),
  size: z.number().int().min(1).max(10_000).nullish().describe("Units it takes in a vehicle; default 1."),
  service_s: z.number().int().min(0).max(14_400).nullish().describe("Seconds at the drop-off; default 120."),
  collect: Collect.nullish(),
}).superRefine((body, ctx) => {
  if (body.payment_method === "pix" && !body.customer) {
    ctx.addIssue({ code: "invalid_type", expected: "object", path: ["customer"], message: "Field required" });
  }
  const end = body.window_end ? Date.parse(body.window_end) : null;
  if (end !== null && end <= Date.now()) {
    ctx.addIssue({ code: "custom", path: ["window_end"], message: "must be in the future", input: body.window_end });
  }
  if (body.window_start && end !== null && Date.parse(body.window_start) >= end) {
    ctx.addIssue({
      code: "custom",
      path: ["window_start"],
      message: "must be before window_end",
      input: body.window_start,
    });
  }
});
export type NewDelivery = z.infer<typeof CreateDelivery>;

/** The list's filters, shared by the export (csv.ts): what private.company_deliveries takes. */
export const DeliveryFilters = z.object({
  status: DeliveryStatus.optional(),
  driver_id: z.uuid().optional(),
  payment_status: PaymentStatus.optional(),
  q: z.string().trim().min(3).max(100).optional().describe(
    "Searches the addresses, the recipient's name and phone, the external id and the id's first characters, " +
      "ignoring accents and case (`jose` finds José); a phone may be typed any way (its digits are compared). " +
      "At least 3 characters.",
  ),
  from: DayOrTime.optional().describe(
    "Created at or after: an instant (ISO 8601 with an offset), or a day (YYYY-MM-DD) in São Paulo, from its start.",
  ),
  to: DayOrTime.optional().describe(
    "Created before: an instant (excluded), or a day (YYYY-MM-DD) in São Paulo, that whole day included.",
  ),
  late: z.enum(["true", "false"]).transform((value) => value === "true").optional().describe(
    "true: only late deliveries (see `late`); false: only those that are not.",
  ),
});

/** The filters as the SQL functions name them. */
export function filterArgs(query: z.infer<typeof DeliveryFilters>) {
  return {
    status: query.status,
    driver_id: query.driver_id,
    payment_status: query.payment_status,
    q: query.q,
    created_from: query.from ? dayBounds(query.from).start : undefined,
    created_to: query.to ? dayBounds(query.to).end : undefined,
    late: query.late,
  };
}

const DeliveryQuery = PageQuery.extend(DeliveryFilters.shape);

const Quote = z.object({
  distance_m: z.number().int(),
  duration_s: z.number().int(),
  price: Money,
}).meta({ id: "RouteQuote" });

const PRICE_RULE = "price = max(minimum_fee, base_fee + per_km * km) from the company's prices (GET /api/v1/prices), " +
  "rounded to cents, over the distance in whole metres.";

/** The route of a new delivery, as POST /api/v1/deliveries and the import measure it. */
export const measure = (body: z.infer<typeof Route>): Promise<MeasuredRoute> =>
  routeBetween(env().ROUTING_URL, body.origin, body.destination);

type End = "origin" | "destination";

/**
 * Each end's coordinates as sent, or else the geocoding service's first place for its address: 422 naming every
 * address it found nothing for, 502 (GeocodingUnavailable) when it failed. POST /api/v1/deliveries and the
 * import (csv.ts) locate their ends with it.
 */
export async function locateEnds(
  body: Pick<NewDelivery, End | "origin_address" | "destination_address">,
  geocode: (address: string) => Promise<Place[]> = placesFor,
): Promise<z.infer<typeof Route>> {
  const ends: End[] = ["origin", "destination"];
  const found = await Promise.allSettled(ends.map(async (end) => {
    const sent = body[end];
    if (sent) return sent;
    const [first] = await geocode(body[`${end}_address`]);
    return first ? { lat: first.lat, lng: first.lng } : null;
  }));
  const failed = found.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  const points = found.map((result) => (result as PromiseFulfilledResult<Point | null>).value);
  const unknown = ends.filter((_, i) => points[i] === null);
  if (unknown.length > 0) {
    throw new HttpError(
      422,
      unknown.map((end) => ({
        type: "address_not_found",
        loc: ["body", `${end}_address`],
        msg: "No place was found for this address: correct it, or send its coordinates",
        input: body[`${end}_address`],
      })),
    );
  }
  return { origin: points[0]!, destination: points[1]! };
}

type NewDeliveryRow = Database["public"]["CompositeTypes"]["new_delivery"];
/** Its fields but the Pix charge's, which only a Pix delivery has, after the gateway answered. */
type ChargeField = "charged_price" | "gateway_payment_id" | "pix_copy_paste" | "pix_qr_code_image" | "payment_due_date";

/**
 * A body, located and measured, as the fields of public.new_delivery (the SQL type that names them once), the
 * Pix charge aside: what POST /api/v1/deliveries passes to public.create_delivery and the import passes as each
 * row to public.import_deliveries.
 */
export function newDeliveryFields(
  body: NewDelivery,
  ends: z.infer<typeof Route>,
  route: MeasuredRoute,
): { [K in Exclude<keyof NewDeliveryRow, ChargeField>]: NewDeliveryRow[K] | undefined } {
  return {
    payment_method: body.payment_method,
    origin_address: body.origin_address,
    origin_lat: ends.origin.lat,
    origin_lng: ends.origin.lng,
    destination_address: body.destination_address,
    destination_lat: ends.destination.lat,
    destination_lng: ends.destination.lng,
    distance_m: route.distance_m,
    duration_s: route.duration_s,
    recipient_name: body.recipient_name,
    recipient_phone: body.recipient_phone,
    recipient_email: body.recipient_email,
    notes: body.notes,
    driver_id: body.driver_id,
    window_start: body.window_start,
    window_end: body.window_end,
    external_id: body.external_id,
    collect_amount: body.collect?.amount,
    collect_method: body.collect?.method,
    collect_change_for: body.collect?.change_for ?? undefined,
  };
}

export const quoteRoute = defineRoute({
  method: "post",
  path: "/api/v1/routes/quote",
  tag: "deliveries",
  summary: "Price a route",
  description:
    `The routing service measures the route (distance and duration, rounded to whole metres and seconds); ${PRICE_RULE} ` +
    "A delivery created for the same route costs exactly this price.",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "deliveries:write",
  body: Route,
  responses: {
    200: { description: "The quote", schema: Quote },
    502: { description: "The routing service is down, slower than 5 s, or found no route" },
  },
  async handler({ body, asCaller, authorize }) {
    // Refuse the caller before asking the routing service anything.
    await authorize();
    const route = await measure(body);
    return { body: await asCaller((tx) => rpc(tx, "quote_route", route)) };
  },
});

export const createDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries",
  tag: "deliveries",
  summary: "Create a delivery",
  description: "Each end is given by its coordinates (`origin`, `destination`), or by its address alone: an end " +
    "sent without coordinates is geocoded (the first place the geocoding service finds for its address); an " +
    "address it finds nothing for is 422 naming it (`origin_address`, `destination_address`, or both). " +
    "The route is measured by the routing service and priced as POST /api/v1/routes/quote does. " +
    "`pix` (the default): the client named in `customer` is charged by Pix at the company's gateway (the gateway " +
    "customer is made once per document and reused); the delivery answers `awaiting_payment` with `payment` " +
    "(copy-paste code, QR image, due date = tomorrow in Brasília time) and is offered to the drivers when the " +
    "payment is received. `invoice`: billed outside the platform; the delivery is `pending` at once with " +
    "payment_status `invoiced`. `driver_id` gives the delivery to that active driver of the company: an invoice " +
    "delivery is `accepted` by it at once; a Pix delivery becomes `accepted` by it when paid (if the driver was " +
    "deactivated meanwhile, it is offered to every driver instead). No delivery is created when the geocoding " +
    "service, the routing service or the gateway fails (502); a charge created before a later failure is never " +
    "linked to a delivery. " +
    "`window_start`/`window_end` give the recipient's window: a delivery is offered to drivers from an hour before " +
    "it opens, and is `late` once it closes undelivered. `external_id` is checked before anything is geocoded, " +
    "routed or charged: a second delivery with it is 409, and the detail names the first one's id. " +
    "This operation is only available here, not as a database RPC: it needs the routing service and the gateway.",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "deliveries:write",
  body: CreateDelivery,
  responses: {
    201: { description: "Created", schema: Delivery },
    404: { description: "driver_id is not a driver of the company" },
    409: {
      description: "external_id is already used by a delivery of the company (the detail names its id), or the " +
        "company's prices changed while the delivery was being created (try again)",
    },
    422: {
      description: "The payment gateway is not configured, refused the charge, or the driver is deactivated; or " +
        "no place was found for an address sent without coordinates (a validation body naming it, type " +
        "`address_not_found`)",
      schema: z.union([ValidationErrorBody, ErrorBody]),
    },
    502: {
      description: "The geocoding service, the routing service or the payment gateway failed (down, or slower " +
        "than 5 s); nothing was created",
    },
  },
  async handler({ body, claims, asCaller }) {
    const companyId = await asCaller((tx) =>
      rpc(tx, "authorize_new_delivery", { driver_id: body.driver_id, external_id: body.external_id })
    );
    const gateway = body.payment_method === "pix" ? await companyGateway(companyId) : null;
    if (body.payment_method === "pix" && !gateway) throw new HttpError(422, "payment gateway not configured");

    const ends = await locateEnds(body);
    const route = await measure(ends);
    // Our id first, so the charge can carry it as externalReference before the row exists.
    const id = crypto.randomUUID();
    let charged: { price: number; payment: PixPayment } | undefined;
    if (gateway) {
      const { price } = await asCaller((tx) => rpc(tx, "quote_route", route) as Promise<z.infer<typeof Quote>>);
      charged = { price, payment: await createPixCharge(gateway, companyId, id, price, body.customer!) };
    }
    try {
      const delivery = await asService(async (tx) => {
        const created = await rpc(tx, "create_delivery", {
          id,
          company_id: companyId,
          created_by: claims.sub,
          ...newDeliveryFields(body, ends, route),
          charged_price: charged?.price,
          gateway_payment_id: charged?.payment.gateway_payment_id,
          pix_copy_paste: charged?.payment.pix_copy_paste,
          pix_qr_code_image: charged?.payment.pix_qr_code_image,
          payment_due_date: charged?.payment.due_date,
        });
        // Its size and drop-off time (routes), in the same transaction.
        if (body.size == null && body.service_s == null) return created;
        return await rpc(tx, "set_delivery_load", { delivery_id: id, size: body.size, service_s: body.service_s });
      });
      return { status: 201, body: delivery };
    } catch (error) {
      if (charged) logOrphanCharge(companyId, id, charged.payment.gateway_payment_id, error);
      throw error;
    }
  },
});

export const listDeliveries = defineRoute({
  method: "get",
  path: "/api/v1/deliveries",
  tag: "deliveries",
  summary: "List deliveries, newest first",
  description: "Owners, admins and legacy admins list every delivery of the company. A driver lists the pending " +
    "deliveries of its company open to every driver, those dispatch offers it now (while the offer is live, with " +
    "`offer_expires_at`), and those it has taken, whatever their state now; never another driver's, never one " +
    "still awaiting payment, never one whose window opens more than an hour from now, never one dispatch offers " +
    "to other drivers. " +
    "`status`, `driver_id`, `payment_status`, `q`, `from`, `to` and `late` narrow the list further (together: all " +
    "of them). " +
    "Pages are stable while deliveries are created: a cursor continues after the last item it saw.",
  auth: "bearer",
  roles: "members",
  scope: "deliveries:read",
  query: DeliveryQuery,
  responses: { 200: { description: "One page", schema: pageOf(Delivery) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "list_deliveries", { ...filterArgs(query), page_limit: query.limit, cursor: query.cursor })
    ),
  }),
});

export const getDelivery = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/{id}",
  tag: "deliveries",
  summary: "One delivery",
  description: "Within the caller's scope, as for the list; anything else is 404.",
  auth: "bearer",
  roles: "members",
  scope: "deliveries:read",
  params: IdParams,
  responses: { 200: { description: "The delivery", schema: Delivery } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_delivery", { delivery_id: params.id })),
  }),
});

const REFUSED = { description: "The delivery's state does not allow this move (the message names both states)" };

export const cancelDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/cancel",
  tag: "deliveries",
  summary: "Cancel a delivery",
  description: "From awaiting_payment, pending, accepted or failed; a delivery in progress or finished cannot be " +
    "cancelled (422). The body is optional. An unpaid Pix charge is removed at the gateway right after, so that the " +
    "client can no longer pay for a cancelled delivery; if the gateway cannot be reached then, the delivery stays " +
    "cancelled and the charge is logged (`pix_charge_not_removed`) for the company to remove. Cancelling does not " +
    "refund a Pix payment already received: refund it at the gateway, whose PAYMENT_REFUNDED event then marks the " +
    "payment refunded.",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "deliveries:write",
  params: IdParams,
  body: z.object({ reason: Text(500).nullish() }).nullish(),
  responses: { 200: { description: "The cancelled delivery", schema: Delivery }, 422: REFUSED },
  async handler({ params, body, asCaller }) {
    const cancelled = await asCaller((tx) =>
      rpc(tx, "cancel_delivery", { delivery_id: params.id, reason: body?.reason }) as Promise<z.infer<typeof Delivery>>
    );
    if (cancelled.payment_method === "pix" && cancelled.payment_status === "pending" && cancelled.payment) {
      await removeUnpaidCharge(cancelled.company_id, cancelled.id, cancelled.payment.gateway_payment_id);
    }
    return { body: cancelled };
  },
});

/** Best effort: the cancellation stands whatever the gateway answers. */
async function removeUnpaidCharge(companyId: string, deliveryId: string, paymentId: string): Promise<void> {
  try {
    const gateway = await companyGateway(companyId);
    if (!gateway) throw new Error("the gateway is no longer configured");
    await gateway.client.deletePayment(paymentId);
  } catch (error) {
    console.error(JSON.stringify({
      event: "pix_charge_not_removed",
      company_id: companyId,
      delivery_id: deliveryId,
      gateway_payment_id: paymentId,
      error: error instanceof Error ? error.message : String(error),
    }));
  }
}

export const assignDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/assign",
  tag: "deliveries",
  summary: "Give a pending delivery to a driver",
  description: "pending → accepted, linked to the driver, as if it had accepted. The driver must be an active " +
    "driver of the company (404 otherwise, 422 when deactivated).",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({ driver_id: z.uuid() }),
  responses: { 200: { description: "The accepted delivery", schema: Delivery }, 422: REFUSED },
  handler: async ({ params, body, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "assign_delivery", { delivery_id: params.id, driver_id: body.driver_id })),
  }),
});

function driverMove(move: "accept" | "start", summary: string, description: string) {
  return defineRoute({
    method: "post",
    path: `/api/v1/deliveries/{id}/${move}`,
    tag: "deliveries",
    summary,
    description,
    auth: "bearer",
    roles: "drivers",
    params: IdParams,
    responses: { 200: { description: "The delivery", schema: Delivery }, 422: REFUSED },
    handler: async ({ params, asCaller }) => ({
      body: await asCaller((tx) => rpc(tx, `${move}_delivery`, { delivery_id: params.id })),
    }),
  });
}

export const acceptDelivery = driverMove(
  "accept",
  "Take a pending delivery",
  "pending → accepted, linked to the calling driver. Of drivers accepting the same delivery at once, exactly " +
    "one wins; the others get 422 (the delivery is locked while it moves). Under dispatch (`dispatch_status` " +
    "`queued` or `offered`), only a driver holding a live offer may take it: 404 for a driver never offered it (it " +
    "cannot see it), 422 naming what became of an offer that is no longer live (expired, declined, withdrawn). " +
    "Reaching `max_active_per_driver` withdraws the driver's other live offers.",
);
export const startDelivery = driverMove(
  "start",
  "Set off with an accepted delivery",
  "accepted → in_progress, by the driver who took it; another driver's delivery is 404.",
);
const Collected = z.object({ amount: Money, method: CollectMethod }).describe(
  "What the driver collected at the door: required when the delivery has `collect` (422 without it). A different " +
    "amount is recorded as reported and flagged (`collect_mismatch`). Cash collected is owed by the driver to the " +
    "company (GET /api/v1/drivers/{id}/cash); card moves no cash.",
);

/** The driver's answer at the door: 422 for a wrong code (the attempt counted), 423 once 5 wrong ones locked it. */
async function tryHandoverCode(asCaller: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>, id: string, code: string) {
  // Its own transaction: a wrong attempt is committed even though the request fails.
  const result = await asCaller((tx) => rpc(tx, "try_handover_code", { delivery_id: id, code })) as string;
  if (result === "wrong") throw new HttpError(422, "wrong handover code");
  if (result === "locked") throw new HttpError(423, HANDOVER_LOCKED);
}
const HANDOVER_LOCKED = "too many wrong handover codes: the company must complete this delivery (complete-override)";

export const completeDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/complete",
  tag: "deliveries",
  summary: "Complete a delivery in progress",
  description: "in_progress → completed, by the driver who took it. The driver's wallet is credited " +
    "price * driver_share (the share in force when the delivery was created), rounded to cents, as one ledger " +
    "entry. Proof of delivery: before completing, the driver uploads a photo and/or the recipient's signature " +
    "with supabase-js Storage to the private bucket `delivery-proofs`, as `{company_id}/{delivery_id}/photo.{ext}` " +
    "and `{company_id}/{delivery_id}/signature.{ext}` (images only: JPEG, PNG or WebP, at most 5 MB; each once); " +
    "completion attaches them, with the optional `note`. When the company requires a proof " +
    "(PUT /api/v1/companies/me/proof-requirements) and it is missing: 422 naming it. The name's extension must " +
    "be the uploaded type's (`.jpg` or `.jpeg` for image/jpeg, `.png`, `.webp`), and the ids written as UUIDs are " +
    "(lower case, 8-4-4-4-12). Completion reads the first bytes of each uploaded proof: one that is not the image " +
    "its name says is removed and the completion refused (422 naming it), so that the driver can upload it again. " +
    "Money at the door: a delivery with `collect` requires `collected` (422 without it); cash collected is written " +
    "to the driver's cash ledger. Handover code: when the company requires one (`handover_code` in the proof " +
    "requirements), the recipient's 4-digit `code` is required: without it or wrong, 422 (a wrong one is counted " +
    "even so); after 5 wrong codes every completion is 423 until a manager completes the delivery with " +
    "POST /api/v1/deliveries/{id}/complete-override.",
  auth: "bearer",
  roles: "drivers",
  params: IdParams,
  body: z.object({
    note: Text(1000).nullish(),
    collected: Collected.nullish(),
    code: z.string().trim().regex(/^[0-9]{4}$/, "must be the 4 digits the recipient has").nullish().describe(
      "The recipient's handover code, when the company requires one.",
    ),
  }).nullish(),
  responses: {
    200: { description: "The delivery", schema: Delivery },
    422: {
      description: "The delivery's state does not allow this move, a required proof is missing (named), an " +
        "uploaded proof is not the image its name says (named, and removed), `collected` is missing, or the " +
        "handover code is missing or wrong",
    },
    423: { description: "5 wrong handover codes were tried: only a manager's complete-override completes it now" },
    502: { description: "Storage could not be asked for the uploaded proof" },
  },
  async handler({ params, body, claims, asCaller }) {
    if (body?.code) await tryHandoverCode(asCaller, params.id, body.code);
    await checkProofImages(claims.sub!, params.id, "complete");
    return {
      body: await asCaller((tx) =>
        rpc(tx, "complete_delivery", {
          delivery_id: params.id,
          note: body?.note ?? undefined,
          collected_amount: body?.collected?.amount,
          collected_method: body?.collected?.method,
        })
      ),
    };
  },
});

export const completeDeliveryOverride = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/complete-override",
  tag: "deliveries",
  summary: "Complete a delivery whose handover code could not be given",
  description: "in_progress → completed by a manager, with a reason, for a delivery that waits for the recipient's " +
    "handover code (after 5 wrong codes it is locked: 423 to its driver). The driver is credited as on completion; " +
    "a delivery with `collect` requires `collected` as completion does. A delivery waiting for no code: 422.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({ reason: Text(500), collected: Collected.nullish() }),
  responses: {
    200: { description: "The completed delivery", schema: Delivery },
    404: { description: "No such delivery in the company" },
    422: { description: "Not in progress, waiting for no handover code, or `collected` missing" },
  },
  handler: async ({ params, body, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "complete_delivery_override", {
        delivery_id: params.id,
        reason: body.reason,
        collected_amount: body.collected?.amount,
        collected_method: body.collected?.method,
      })
    ),
  }),
});

export const failDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/fail",
  tag: "deliveries",
  summary: "Report that a delivery in progress could not be delivered",
  description: "in_progress → failed, by the driver who has it, with the reason and an optional note. Nobody is " +
    "credited. The company then reopens it (a new attempt) or cancels it. An optional photo of the attempt: before " +
    "failing, the driver uploads it with supabase-js Storage to the private bucket `delivery-proofs` as " +
    "`{company_id}/{delivery_id}/failed-{attempt}.{ext}`, `attempt` being the delivery's `attempts` (1 for the " +
    "first; each attempt has its own photo), under the rules of proof of delivery (JPEG, PNG or WebP, at most 5 MB, " +
    "the extension the uploaded type's, ids in canonical text; the driver may replace it until the delivery leaves " +
    "in_progress). Failing reads its first bytes: one that is not the image its name says is removed and the " +
    "failure refused (422, nothing written), so that the driver can upload it again; otherwise its name is the " +
    "delivery's `failure_photo_path`, with the reason and the note.",
  auth: "bearer",
  roles: "drivers",
  params: IdParams,
  body: z.object({ reason: FailureReason, note: Text(1000).nullish() }),
  responses: {
    200: { description: "The failed delivery", schema: Delivery },
    422: {
      description: "The delivery's state does not allow this move, or the uploaded photo is not the image its name " +
        "says (removed)",
    },
    502: { description: "Storage could not be asked for the uploaded photo" },
  },
  async handler({ params, body, claims, asCaller }) {
    await checkProofImages(claims.sub!, params.id, "fail");
    return {
      body: await asCaller((tx) =>
        rpc(tx, "fail_delivery", { delivery_id: params.id, reason: body.reason, note: body.note })
      ),
    };
  },
});

export const reopenDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/reopen",
  tag: "deliveries",
  summary: "Try a failed delivery again",
  description: "failed → pending: a new attempt (`attempts` + 1), nobody's, offered to the drivers again as a new " +
    "pending delivery is (subject to its window). The last failure's reason, note and photo stay readable.",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: { 200: { description: "The reopened delivery", schema: Delivery }, 422: REFUSED },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "reopen_delivery", { delivery_id: params.id })),
  }),
});

export default [
  quoteRoute,
  createDelivery,
  listDeliveries,
  getDelivery,
  cancelDelivery,
  assignDelivery,
  acceptDelivery,
  startDelivery,
  completeDelivery,
  completeDeliveryOverride,
  failDelivery,
  reopenDelivery,
];

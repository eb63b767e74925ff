// The rest of a delivery's life as operations need it (docs/state-machines.md; docs/contract.md): the company
// recalls a delivery, the driver returns it, and a paid, cancelled Pix delivery is refunded through the gateway.
// The moves are PL/pgSQL (supabase/schemas/11_lifecycle.sql); the refund asks the gateway first.
import { z } from "zod";
import { asService, rpc } from "../../_shared/db.ts";
import { HttpError } from "../../_shared/errors.ts";
import { companyGateway, type GatewayObject, GatewayRejected } from "../../_shared/gateway.ts";
import { defineRoute } from "../../_shared/route.ts";
import { logOrphanCharge, pixDueDate } from "../pix-charge.ts";
import { Email, IdParams, LatLng, Phone, Text, Timestamp } from "../schemas.ts";
import { Collect, Delivery, locateEnds, measure } from "./deliveries.ts";

type DeliveryRow = z.infer<typeof Delivery>;

export const recallDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/recall",
  tag: "deliveries",
  summary: "Call a delivery back",
  description: "The company takes a delivery back from its driver, with the reason. `accepted` (not picked up " +
    "yet): `then` `redispatch` (the default) puts it back to `pending`, nobody's, dispatched again as a new pending " +
    "delivery is (offered to the drivers, or to dispatch's next round); `cancel` cancels it (`cancel_reason` the " +
    "reason; a Pix delivery, paid before it was accepted, then shows `refund_due`: POST /refund). " +
    "`in_progress` (picked up): `returning`, the driver brings the goods back to the origin whatever `then` says, " +
    "then POST /api/v1/deliveries/{id}/return. The driver who had it gets `delivery_recalled` on " +
    "`driver:{driver_id}` (the delivery as drivers read it, with `recall_reason`). Any other state: 422.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({
    reason: Text(500),
    then: z.enum(["redispatch", "cancel"]).default("redispatch").describe(
      "For an accepted delivery: dispatch it again (default) or cancel it. Ignored once picked up.",
    ),
  }),
  responses: {
    200: {
      description: "The recalled delivery (pending, cancelled or returning)",
      schema: Delivery,
    },
    422: {
      description: "Only an accepted or in_progress delivery can be recalled (the message names its state)",
    },
  },
  handler: async ({ params, body, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "recall_delivery", {
        delivery_id: params.id,
        reason: body.reason,
        then_do: body.then,
      })
    ),
  }),
});

export const returnDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/return",
  tag: "deliveries",
  summary: "Bring a recalled delivery back",
  description: "returning → returned, by the driver who has it, once the goods are back at the origin: terminal, " +
    "and the driver is credited as for a completion (price * driver_share, one ledger entry, once). Another " +
    "driver's delivery is 404; any other state 422.",
  auth: "bearer",
  roles: "drivers",
  params: IdParams,
  responses: {
    200: { description: "The returned delivery", schema: Delivery },
    422: {
      description: "The delivery's state does not allow this move (the message names both states)",
    },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "return_delivery", { delivery_id: params.id })),
  }),
});

/** What the gateway says of a payment whose refund it took (done, or on its way). */
const REFUNDING = new Set([
  "REFUNDED",
  "REFUND_REQUESTED",
  "REFUND_IN_PROGRESS",
]);

export const refundDelivery = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/refund",
  tag: "deliveries",
  summary: "Refund the Pix payment of a cancelled delivery",
  description: "For a cancelled Pix delivery whose payment was received (`refund_due`): the gateway is asked to " +
    "refund the whole payment (`POST /v3/payments/{id}/refund`). It answers with the payment: `REFUNDED` " +
    "(`refund_status` `refunded`, payment_status `refunded`, `refund_due` false at once) or a refund on its way " +
    "(`refund_status` `requested`; the gateway's PAYMENT_REFUNDED then sets `refunded` and clears `refund_due`). " +
    "Retrying is safe, with its `Idempotency-Key` or without: a refund the gateway already took (its answer lost, " +
    "or asked before) is read back from the gateway instead of being asked twice, so a payment is refunded once. " +
    "When the gateway fails (502), nothing is recorded. Already refunded: 200 with the delivery, the gateway not " +
    "asked.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({
    reason: Text(200).nullish().describe(
      "Sent to the gateway as the refund's description.",
    ),
  })
    .nullish(),
  responses: {
    200: {
      description: "The delivery, refund_status requested or refunded",
      schema: Delivery,
    },
    422: {
      description: "Not a cancelled Pix delivery with its payment received, the gateway is not configured, or the " +
        "gateway refused the refund (its description)",
    },
    502: {
      description: "The gateway failed or did not answer in time; nothing was recorded",
    },
  },
  async handler({ params, body, claims, asCaller }) {
    const delivery = await asCaller((tx) =>
      rpc(tx, "refundable_delivery", { delivery_id: params.id }) as Promise<
        DeliveryRow
      >
    );
    if (delivery.refund_status === "refunded") return { body: delivery };
    const gateway = await companyGateway(delivery.company_id);
    if (!gateway) throw new HttpError(422, "payment gateway not configured");
    const paymentId = delivery.payment!.gateway_payment_id;
    let answer: GatewayObject;
    try {
      answer = await gateway.client.refundPayment(
        paymentId,
        body?.reason ?? `Delivery ${delivery.id} cancelled`,
      );
    } catch (error) {
      if (!(error instanceof GatewayRejected)) throw error;
      // Refused because it is refunded or being refunded already (an earlier try whose answer was lost)?
      const payment = await gateway.client.getPayment(paymentId);
      if (!REFUNDING.has(payment.status)) throw error;
      answer = payment;
    }
    return {
      body: await asService((tx) =>
        rpc(tx, "record_refund", {
          delivery_id: delivery.id,
          actor_id: claims.sub,
          refunded: answer.status === "REFUNDED",
        })
      ),
    };
  },
});

const CONTACT_FIELDS = [
  "recipient_name",
  "recipient_phone",
  "recipient_email",
  "notes",
  "window_start",
  "window_end",
  "external_id",
] as const;
const END_FIELDS = [
  "origin_address",
  "origin",
  "destination_address",
  "destination",
] as const;

const UpdateDelivery = z.strictObject({
  recipient_name: Text(200).nullish(),
  recipient_phone: Phone.nullish(),
  recipient_email: Email.nullish(),
  notes: Text(2000).nullish(),
  window_start: Timestamp.nullish().describe(
    "ISO 8601 with an offset; before window_end. null clears it.",
  ),
  window_end: Timestamp.nullish().describe(
    "ISO 8601 with an offset; in the future. null clears it.",
  ),
  external_id: Text(100).nullish().describe(
    "Unique within the company (409 naming the delivery that has it).",
  ),
  origin_address: Text(500).optional(),
  origin: LatLng.nullish().describe(
    "The pick-up's coordinates; omitted with a new origin_address: geocoded.",
  ),
  destination_address: Text(500).optional(),
  destination: LatLng.nullish().describe(
    "The drop-off's coordinates; omitted with a new destination_address: geocoded.",
  ),
  collect: Collect.nullable().optional().describe(
    "What the driver collects at the door, checked as on create; null removes it. Until the delivery is picked up.",
  ),
}).meta({ id: "DeliveryChanges" });

export const updateDelivery = defineRoute({
  method: "patch",
  path: "/api/v1/deliveries/{id}",
  tag: "deliveries",
  summary: "Change a delivery",
  description: "Only the fields sent change (`null` clears an optional one). `recipient_name`, `recipient_phone`, " +
    "`recipient_email`, `notes`, `window_start`, `window_end`, `external_id` until the delivery is completed " +
    "(a completed, cancelled or returned delivery is 422). `origin_address`/`destination_address` and their " +
    "coordinates until it is picked up (`in_progress` or later: 422): an address sent without coordinates is " +
    "geocoded as on create, the road distance and duration are measured again, and the price is quoted again for " +
    "an invoice delivery and kept for a paid Pix one. `collect` (or `null` to remove it) until it is picked up " +
    "(`in_progress` or later: 422), checked as on create. Moving an unpaid Pix delivery's ends to a route of " +
    "another price replaces its charge: a new Pix charge of the new price (`payment` gives its code), the old one " +
    "removed at the gateway so that it can no longer be paid; a charge paid meanwhile is 409 and the gateway " +
    "failing 502, with nothing changed; the same change sent again makes no other charge (the route's price is " +
    "then the charge's). Every change is one " +
    "`update` row of the delivery's history with each changed field's old and new value; the company and the " +
    "driver who has the delivery get `delivery_updated`. `size` is not accepted yet (400).",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: UpdateDelivery,
  responses: {
    200: { description: "The changed delivery", schema: Delivery },
    409: {
      description: "external_id is used by another delivery of the company (named), or the unpaid Pix charge to " +
        "replace was paid meanwhile",
    },
    422: {
      description: "The delivery's state does not allow the change (the message says why)",
    },
    502: {
      description: "The geocoding or the routing service, or the payment gateway, failed; nothing changed",
    },
  },
  async handler({ params, body, claims, asCaller }) {
    const movesEnds = END_FIELDS.some((field) => field in body);
    const current = await asCaller((tx) =>
      rpc(tx, "editable_delivery", {
        delivery_id: params.id,
        moves_ends: movesEnds,
      }) as Promise<DeliveryRow>
    );
    const changes: Record<string, unknown> = {};
    for (const field of CONTACT_FIELDS) {
      if (field in body) changes[field] = body[field] ?? null;
    }
    if ("collect" in body) {
      changes.collect = body.collect
        ? {
          amount: body.collect.amount,
          method: body.collect.method,
          change_for: body.collect.change_for ?? null,
        }
        : null;
    }
    if (movesEnds) {
      const originAddress = body.origin_address ?? current.origin_address;
      const destinationAddress = body.destination_address ??
        current.destination_address;
      // A new address without coordinates is geocoded; an end whose address stays keeps its coordinates.
      const ends = await locateEnds({
        origin_address: originAddress,
        destination_address: destinationAddress,
        origin: body.origin ??
          (body.origin_address === undefined ? current.origin : null),
        destination: body.destination ??
          (body.destination_address === undefined ? current.destination : null),
      });
      const route = await measure(ends);
      Object.assign(changes, {
        origin_address: originAddress,
        origin_lat: ends.origin.lat,
        origin_lng: ends.origin.lng,
        destination_address: destinationAddress,
        destination_lat: ends.destination.lat,
        destination_lng: ends.destination.lng,
        distance_m: route.distance_m,
        duration_s: route.duration_s,
      });
      if (current.payment_method === "pix" && current.payment_status === "pending" && current.payment) {
        const quote = await asCaller((tx) =>
          rpc(tx, "quote_route", { distance_m: route.distance_m, duration_s: route.duration_s })
        ) as unknown as { price: number };
        if (quote.price !== current.price) {
          changes.charge = await replaceCharge(current, quote.price);
        }
      }
    }
    if (Object.keys(changes).length === 0) return { body: current };
    try {
      return {
        body: await asService((tx) =>
          rpc(tx, "update_delivery", {
            delivery_id: params.id,
            actor_id: claims.sub,
            changes: changes as never,
          })
        ),
      };
    } catch (error) {
      const charge = changes.charge as { gateway_payment_id: string } | undefined;
      if (charge) logOrphanCharge(current.company_id, current.id, charge.gateway_payment_id, error);
      throw error;
    }
  },
});

/**
 * A new Pix charge for an unpaid delivery whose price changed (its ends moved), the old one removed at the gateway
 * so that it can no longer be paid: what public.update_delivery takes as `charge`. The new charge is made first, for
 * the same gateway customer; then the old is removed (already removed, by an earlier try whose answer was lost:
 * fine). If the old one cannot be removed (paid meanwhile: 409; the gateway failing: 502), the new one is removed
 * again and nothing changes. A charge made but never recorded (the database failing after) is logged as
 * `pix_charge_without_delivery`; its events find no delivery.
 */
async function replaceCharge(current: DeliveryRow, price: number): Promise<Record<string, unknown>> {
  const gateway = await companyGateway(current.company_id);
  if (!gateway) throw new HttpError(422, "payment gateway not configured");
  const oldId = current.payment!.gateway_payment_id;
  const old = await gateway.client.getPayment(oldId);
  if (old.status !== "PENDING" && old.status !== "OVERDUE" && old.status !== "DELETED") {
    throw new HttpError(409, `the delivery's Pix charge is ${old.status} at the gateway; nothing changed`);
  }
  const dueDate = pixDueDate();
  const charge = await gateway.client.createPixCharge({
    customer: old.customer as string,
    value: price,
    dueDate,
    description: `Delivery ${current.id}`,
    externalReference: current.id,
  });
  try {
    const qr = await gateway.client.pixQrCode(charge.id);
    if (old.status !== "DELETED") await gateway.client.deletePayment(oldId);
    return {
      replaces: oldId,
      price,
      gateway_payment_id: charge.id,
      pix_copy_paste: qr.payload,
      pix_qr_code_image: qr.encodedImage,
      payment_due_date: dueDate,
    };
  } catch (error) {
    await gateway.client.deletePayment(charge.id).catch(() =>
      logOrphanCharge(current.company_id, current.id, charge.id, error)
    );
    if (error instanceof GatewayRejected) {
      throw new HttpError(409, `the delivery's Pix charge could not be replaced (${error.message}); nothing changed`);
    }
    throw error;
  }
}

export default [recallDelivery, returnDelivery, refundDelivery, updateDelivery];

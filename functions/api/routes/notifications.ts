// Notifications to recipients (docs/notifications.md): which events a company's
// recipients are told of, on which channels; the messages of a delivery; and
// erasing a recipient's personal data (LGPD). The messages are queued by the
// database with the change that causes them and sent by the notifications
// function (supabase/schemas/13_notifications.sql).
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { NOTIFICATION_CHANNELS, NOTIFICATION_EVENTS } from "../../_shared/notifications.ts";
import { IdParams, Timestamp } from "../schemas.ts";
import { Delivery } from "./deliveries.ts";

const NotificationEvent = z.enum(NOTIFICATION_EVENTS).describe(
  "`created`: the delivery is offered to drivers (an invoice delivery when created, a Pix one when paid); " +
    "`started`: its driver sets off (`in_progress`); `nearby`: while in progress, its ETA comes to 5 minutes or less; " +
    "`completed`; `failed`.",
);
const NotificationChannel = z.enum(NOTIFICATION_CHANNELS).describe(
  "`whatsapp` to `recipient_phone`, `email` to `recipient_email`.",
);

const NotificationSettings = z.object({
  events: z.array(NotificationEvent).max(20),
  channels: z.array(NotificationChannel).max(10),
}).meta({ id: "NotificationSettings" });

const SETTINGS_RULES = "Each message is queued in the transaction of the change that causes it, at most once per " +
  "delivery, event and channel (an event that happens again, as a reopened delivery starting again, sends nothing " +
  "more), on each chosen channel the recipient has an address for, and carries the delivery's tracking link. The " +
  "default, until the company chooses: `started`, `nearby`, `completed` and `failed` on both channels.";

export const getNotificationSettings = defineRoute({
  method: "get",
  path: "/api/v1/notifications/settings",
  tag: "notifications",
  summary: "Which events the company's recipients are told of, on which channels",
  description: SETTINGS_RULES,
  auth: "bearer",
  roles: "company_managers",
  responses: { 200: { description: "The settings", schema: NotificationSettings } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_notification_settings")) }),
});

export const putNotificationSettings = defineRoute({
  method: "put",
  path: "/api/v1/notifications/settings",
  tag: "notifications",
  summary: "Choose which events the company's recipients are told of, on which channels",
  description: `${SETTINGS_RULES} Empty lists send nothing. Applies to messages queued from now on.`,
  auth: "bearer",
  roles: "company_managers",
  body: NotificationSettings,
  responses: { 200: { description: "The settings, each event and channel once", schema: NotificationSettings } },
  handler: async ({ body, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "set_notification_settings", body)),
  }),
});

const DeliveryNotification = z.object({
  event: NotificationEvent,
  channel: NotificationChannel,
  to: z.string().nullable().describe(
    "The destination, masked (`*****7777`, `a***@example.com`); null once the recipient was erased.",
  ),
  status: z.enum(["queued", "sent", "failed"]).describe(
    "`queued` until sent; retried with backoff (30 s, doubling, at most an hour) while the provider fails, for 24 " +
      "hours; `failed` when the provider refuses the destination for good (a number not on WhatsApp, an address " +
      "the mail server rejects), after 24 hours of failures, when the recipient was erased, or when the message " +
      "was outdated before it could go (`started` or `nearby` once the delivery is no longer in progress).",
  ),
  attempts: z.number().int(),
  sent_at: Timestamp.nullable(),
  error: z.string().nullable().describe("Why it failed, or why the last attempt failed while it is retried."),
}).meta({ id: "DeliveryNotification" });

export const listDeliveryNotifications = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/{id}/notifications",
  tag: "notifications",
  summary: "The messages to a delivery's recipient",
  description: "In the order they were queued. Destinations are masked here and in every log.",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: {
    200: { description: "The messages", schema: z.object({ items: z.array(DeliveryNotification) }) },
    404: { description: "No delivery of the company has this id" },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "list_delivery_notifications", { delivery_id: params.id })),
  }),
});

export const eraseRecipient = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/{id}/erase-recipient",
  tag: "notifications",
  summary: "Erase the recipient's personal data from a delivery (LGPD)",
  description: "`recipient_name`, `recipient_phone` and `recipient_email` become null, in any state of the " +
    "delivery, at once and for good; messages not yet sent are not sent (`failed`). The delivery's history keeps " +
    "every move and records who erased the recipient, and when. The Pix payer's document is never stored with the " +
    "delivery (only the gateway holds it). Erasing again changes nothing more. Also: a tracking link stops " +
    "answering (404, as a wrong one) 30 days after its delivery was completed, cancelled or failed, and the " +
    "delivery's trail is deleted 90 days after.",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: {
    200: { description: "The delivery, without its recipient's data", schema: Delivery },
    404: { description: "No delivery of the company has this id" },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "erase_delivery_recipient", { delivery_id: params.id })),
  }),
});

export default [getNotificationSettings, putNotificationSettings, listDeliveryNotifications, eraseRecipient];

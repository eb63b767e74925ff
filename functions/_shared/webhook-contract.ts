// The contract of the gateway's webhooks (docs/contract.md, Webhooks): paths,
// bodies and answers, declared once. The gateway-webhook function serves them;
// the api function documents them in its OpenAPI document and, when a hosted
// project routes such a path to it, answers 404 naming the function that serves it.
import { z } from "zod";
import { rateLimited, type RouteDeclaration } from "./route.ts";

const Acknowledgement = z.object({ received: z.literal(true) }).meta({ id: "WebhookAcknowledgement" });
const GatewayObjectBody = z.object({
  id: z.string(),
  status: z.string().optional().describe("For example DONE, FAILED, RECEIVED"),
  value: z.number().optional(),
  description: z.string().optional(),
  externalReference: z.string().optional().describe("Our withdrawal or delivery id"),
  dateCreated: z.string().optional(),
  confirmedDate: z.string().optional(),
  failReason: z.string().optional(),
}).passthrough();
const WebhookEventBody = z.object({
  event: z.string().describe(
    "PAYMENT_RECEIVED, PAYMENT_CONFIRMED, PAYMENT_REFUNDED, PAYMENT_OVERDUE, TRANSFER_DONE, " +
      "TRANSFER_APPROVED, TRANSFER_FAILED, TRANSFER_CANCELLED; any other is acknowledged and ignored",
  ),
  transfer: GatewayObjectBody.optional(),
  payment: GatewayObjectBody.optional(),
}).passthrough().meta({ id: "GatewayWebhookBody" });
const EVENT_DESCRIPTION =
  "Body: `{event, transfer | payment: {id, status, value, description, externalReference, ...}}` (docs/spec.md " +
  "§6), verified over its raw bytes: `gateway-signature` is the lowercase hex HMAC-SHA256 of the body. An event is " +
  "a claim, never applied as such: the transfer or payment it names (by `id`, our `externalReference`, or the " +
  "description we gave it) is fetched from the gateway with the owning company's key (`GET /v3/transfers/{id}`, " +
  "`GET /v3/payments/{id}`) and the status the gateway reports is applied: DONE completes the withdrawal with one " +
  "debit (also one recorded failed), FAILED / CANCELLED fail it (error_message = the event name) unless it is " +
  "completed; RECEIVED, CONFIRMED, REFUNDED, OVERDUE move the delivery (a payment received for a cancelled " +
  "delivery is recorded and the delivery shows `refund_due: true`; a payment first heard of as CONFIRMED or " +
  "RECEIVED_IN_CASH counts as received, then confirmed: a delivery awaiting it becomes pending, confirmed). A " +
  "transfer id we do not know is looked up at the " +
  "gateway and matched by its externalReference. When the gateway cannot be asked, the answer is 503 and the gateway " +
  "delivers the event again. Copies of an event change nothing more than the first; other events are acknowledged " +
  "and ignored. Every request is one row of the audit log (GET /api/v1/webhook-events). The answer comes within 5 s; " +
  "a body over 1 MiB is 413.";
const RESPONSES = {
  200: { description: "Applied, a duplicate, or ignored", schema: Acknowledgement },
  400: { description: "The body is not a JSON object with an `event`" },
  401: { description: "Missing or invalid signature" },
  413: { description: "The body is larger than 1 MiB" },
  503: {
    description:
      "Not applied in time, the gateway could not be asked, or the database is unavailable; the gateway retries",
    headers: { "Retry-After": "Whole seconds to wait before delivering the event again" },
  },
};

export const companyWebhook: RouteDeclaration = {
  method: "post",
  path: "/api/v1/webhooks/gateway/{company_id}",
  tag: "webhooks",
  summary: "The gateway's events for one company",
  description: `${EVENT_DESCRIPTION}\n\nThe signature is checked with the company's webhook_secret; only a company ` +
    "that has none (no gateway configuration) falls back to the platform secret, and then, owning no charge or " +
    "transfer at the gateway, answers 200 and logs the event `ignored`. The company's settings are read for every " +
    "request, so a new secret applies at once. Only this company's withdrawals and deliveries are touched. An " +
    "unknown company (or one that is not a UUID) is 404.",
  auth: "signature",
  rawBody: WebhookEventBody,
  params: z.object({ company_id: z.string() }),
  responses: { ...RESPONSES, 404: { description: "Unknown company" } },
};

export const platformWebhook: RouteDeclaration = {
  method: "post",
  path: "/api/v1/webhooks/gateway",
  tag: "webhooks",
  summary: "The gateway's events for the platform account",
  description: `${EVENT_DESCRIPTION}\n\nA signed request is checked with the platform secret. An unsigned one is ` +
    "accepted as a claim like any other (the gateway is asked before anything moves), but may make us ask the " +
    "gateway about one object at most once a minute (429 otherwise). With GATEWAY_WEBHOOK_REQUIRE_SIGNATURE=true an " +
    "unsigned request is 401. Without a company in the path, an id we do not know can only be matched through the " +
    "externalReference or description the event carries.",
  auth: "signature",
  rawBody: WebhookEventBody,
  // Signed, or unsigned (a claim checked with the gateway, like every other).
  security: [{ gatewaySignature: [] }, {}],
  responses: {
    ...RESPONSES,
    429: rateLimited("Unsigned, and the object was checked with the gateway less than a minute ago", 60),
  },
};

/** Where a hosted project serves each webhook path (the function sees its own name first). */
export const WEBHOOK_FUNCTION_PATHS: Record<string, string> = {
  [companyWebhook.path]: "/functions/v1/gateway-webhook/{company_id}",
  [platformWebhook.path]: "/functions/v1/gateway-webhook",
};

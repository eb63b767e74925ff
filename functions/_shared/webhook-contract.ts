// The contract of the gateway's webhooks (docs/contract.md, Webhooks): paths,
// bodies and answers, declared once. The gateway-webhook function serves them;
// the api function documents them in its OpenAPI document and, when a hosted
// project routes such a path to it, answers 404 naming the function that serves it.
import { z } from "zod";
import type { RouteDeclaration } from "./route.ts";

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
}).passthrough().meta({ id: "WebhookEvent" });
const EVENT_DESCRIPTION =
  "Body: `{event, transfer | payment: {id, status, value, externalReference, ...}}` (docs/spec.md §6), " +
  "verified over its raw bytes: `gateway-signature` is the lowercase hex HMAC-SHA256 of the body. TRANSFER_DONE / " +
  "TRANSFER_APPROVED complete the withdrawal found by `transfer.id` (or `payment.id`), falling back to " +
  "`externalReference` (our withdrawal id), and debit the wallet once; TRANSFER_FAILED / TRANSFER_CANCELLED fail it " +
  "with the event name as error_message. PAYMENT_* events move the delivery. A settled withdrawal ignores later " +
  "events, but for one that we failed because the gateway did not answer our transfer request (timeout, 5xx): a " +
  "TRANSFER_DONE / TRANSFER_APPROVED for it is proof that the money left, so it completes and is debited once " +
  "(possibly below a zero balance); copies of an event change nothing more than the first; any other event is " +
  "acknowledged and ignored. " +
  "Every request is one row of the audit log (GET /api/v1/webhook-events). The answer comes within 5 s: 503 when " +
  "the event could not be applied in time (the gateway delivers it again), never 200 for an event not applied.";
const RESPONSES = {
  200: { description: "Applied, a duplicate, or ignored", schema: Acknowledgement },
  400: { description: "The body is not a JSON object with an `event`" },
  401: { description: "Missing or invalid signature" },
  503: { description: "Not applied in time or the database is unavailable; the gateway retries" },
};

export const companyWebhook: RouteDeclaration = {
  method: "post",
  path: "/api/v1/webhooks/gateway/{company_id}",
  tag: "webhooks",
  summary: "The gateway's events for one company",
  description: `${EVENT_DESCRIPTION}\n\nThe signature is checked with the company's webhook_secret; only a company ` +
    "that has none (no gateway configuration) falls back to the platform secret. Only this company's withdrawals " +
    "and deliveries are touched. An unknown company (or one that is not a UUID) is 404.",
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
  description: `${EVENT_DESCRIPTION}\n\nA signed request is checked with the platform secret. An unsigned one is a ` +
    "hint, not a fact: the named transfer or payment is fetched back from the gateway with its company's key and " +
    "the status the gateway reports is applied (DONE, FAILED, CANCELLED; RECEIVED, CONFIRMED, REFUNDED, OVERDUE), " +
    "never the claim; if it cannot be fetched the answer is 502 or 503. With GATEWAY_WEBHOOK_REQUIRE_SIGNATURE=true " +
    "an unsigned request is 401.",
  auth: "signature",
  rawBody: WebhookEventBody,
  // Signed, or unsigned (then verified with the gateway).
  security: [{ gatewaySignature: [] }, {}],
  responses: { ...RESPONSES, 502: { description: "Unsigned, and the gateway could not confirm it" } },
};

/** Where a hosted project serves each webhook path (the function sees its own name first). */
export const WEBHOOK_FUNCTION_PATHS: Record<string, string> = {
  [companyWebhook.path]: "/functions/v1/gateway-webhook/{company_id}",
  [platformWebhook.path]: "/functions/v1/gateway-webhook",
};

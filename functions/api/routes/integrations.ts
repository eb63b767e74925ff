// Integrations (docs/integrations.md): API keys, made here and stored by their
// hash, and webhook endpoints, whose URL is checked against SSRF here and
// whose secret is made here, shown once and stored encrypted. The database
// queues the events (supabase/schemas/18_integrations.sql); the webhooks-out
// function sends them.
import { z } from "zod";
import { API_KEY_SCOPES, apiKeyHash, apiKeyPrefix, newApiKey } from "../../_shared/api-keys.ts";
import { encryptSecret } from "../../_shared/crypto.ts";
import { rpc } from "../../_shared/db.ts";
import { env } from "../../_shared/env.ts";
import { HttpError } from "../../_shared/errors.ts";
import { defineRoute } from "../../_shared/route.ts";
import { allowedHosts, checkWebhookUrl, WebhookUrlError } from "../../_shared/webhook-url.ts";
import { ClearableText, IdParams, pageOf, PageQuery, Text, Timestamp } from "../schemas.ts";

// Section: API keys

const Scope = z.enum(API_KEY_SCOPES).describe(
  "`deliveries:read`: list and read deliveries; `deliveries:write`: quote, create and cancel them; " +
    "`drivers:read`: list and read drivers and their positions; `routes:write`: plan, change and publish routes " +
    "(reading them too); `webhooks:manage`: the webhook endpoints, their attempts, resends and test events. No " +
    "scope reaches money (wallets, withdrawals, gateway configuration, billing) or API keys.",
).meta({ id: "ApiKeyScope" });

const ApiKey = z.object({
  id: z.uuid(),
  name: z.string(),
  scopes: z.array(Scope),
  prefix: z.string().describe("The key's first characters, to tell keys apart"),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable().describe("Updated at most once a minute"),
}).meta({ id: "ApiKey" });

const KEY_RULES = "A key is sent as `Authorization: Bearer <key>` on /api/v1 and acts for the company within its " +
  "scopes (403 outside them). Every company's keys share one rate limit: 20 requests a second sustained, bursts of " +
  "40 (a token bucket kept in the database, shared by every instance), with `RateLimit-Limit`, " +
  "`RateLimit-Remaining` and `RateLimit-Reset` (seconds until the bucket is full) on every answer, and beyond it " +
  "429 with `Retry-After`.";

export const createApiKey = defineRoute({
  method: "post",
  path: "/api/v1/api-keys",
  tag: "integrations",
  summary: "Create an API key",
  description: `${KEY_RULES} The key is in this answer only: it is stored as its SHA-256 and cannot be shown again. ` +
    "So the answer is never kept for an Idempotency-Key: a retry makes another key (revoke the one you did not get).",
  auth: "bearer",
  roles: "company_managers",
  answerHoldsSecret: true,
  body: z.object({ name: Text(100), scopes: z.array(Scope).min(1).max(API_KEY_SCOPES.length) }),
  responses: {
    201: {
      description: "Created; `key` is shown this once",
      schema: ApiKey.omit({ last_used_at: true }).extend({ key: z.string().describe("`dp_live_` and 43 characters") })
        .meta({ id: "NewApiKey" }),
    },
    409: { description: "The company has 50 keys already" },
  },
  async handler({ body, asCaller }) {
    const key = newApiKey();
    const saved = await asCaller((tx) =>
      rpc(tx, "create_api_key", {
        name: body.name,
        scopes: body.scopes,
        key_hash: apiKeyHash(key),
        prefix: apiKeyPrefix(key),
      })
    );
    const { last_used_at: _unused, ...shown } = saved as unknown as Record<string, unknown>;
    return { status: 201, body: { ...shown, key } };
  },
});

export const listApiKeys = defineRoute({
  method: "get",
  path: "/api/v1/api-keys",
  tag: "integrations",
  summary: "The company's API keys",
  description: `Newest first, revoked keys left out; never the keys themselves. ${KEY_RULES}`,
  auth: "bearer",
  roles: "company_managers",
  responses: { 200: { description: "The keys", schema: z.object({ items: z.array(ApiKey) }) } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "list_api_keys")) }),
});

export const revokeApiKey = defineRoute({
  method: "delete",
  path: "/api/v1/api-keys/{id}",
  tag: "integrations",
  summary: "Revoke an API key",
  description: "From the next request on, the key is 401.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  responses: {
    204: { description: "Revoked" },
    404: { description: "No key of the company has this id (or it was revoked already)" },
  },
  async handler({ params, asCaller }) {
    await asCaller((tx) => rpc(tx, "revoke_api_key", { key_id: params.id }));
    return new Response(null, { status: 204 });
  },
});

// Section: webhook endpoints

const EVENT_TYPES = [
  "delivery.created",
  "delivery.status_changed",
  "delivery.completed",
  "delivery.failed",
  "route.published",
  "route.completed",
] as const;

const EventType = z.enum(EVENT_TYPES).describe(
  "`delivery.created`; `delivery.status_changed` (every move, with `previous_status`); `delivery.completed`; " +
    "`delivery.failed`; `route.published`; `route.completed`.",
).meta({ id: "WebhookEventType" });

const WebhookEndpoint = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(EventType),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable().describe("Why it is disabled: by the company, or after 5 days of failure"),
  failing_since: Timestamp.nullable().describe("The first failed attempt since the last success"),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: "WebhookEndpoint" });

const WEBHOOK_RULES = "Each event is a POST of `{type, timestamp, data}` (`data`: the delivery as the API shows it, " +
  "without the recipient's personal data) signed as Standard Webhooks sign: headers `webhook-id` (the event's id, " +
  "the same on every attempt), `webhook-timestamp` (the attempt's Unix time) and `webhook-signature` (`v1,` and the " +
  "base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the secret's base64-decoded bytes after `whsec_`). Sent " +
  "within seconds of the change's commit; an answer other than 2xx within 10 s (redirects are not followed) is " +
  "tried again with the same id and body after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then the event has " +
  "failed for that endpoint; an endpoint failing for 5 days is disabled and the company's owner told by e-mail. " +
  "The URL must be `https` and must not resolve to a private, loopback or link-local address (checked when saved " +
  "and before every send), except for the hosts in WEBHOOK_ALLOWED_HOSTS.";

const Url = Text(2000).describe("https; no private, loopback or link-local address");

/** The URL when webhooks may go there; 400 naming the field otherwise. */
async function checkedUrl(url: string): Promise<string> {
  try {
    return (await checkWebhookUrl(url, allowedHosts(env().WEBHOOK_ALLOWED_HOSTS))).href;
  } catch (error) {
    if (!(error instanceof WebhookUrlError)) throw error;
    throw new HttpError(400, [{ type: "value_error", loc: ["body", "url"], msg: error.message, input: url }]);
  }
}

/** A new signing secret as Standard Webhooks writes it: `whsec_` and 32 random bytes in base64. */
function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return `whsec_${btoa(text)}`;
}

export const createWebhookEndpoint = defineRoute({
  method: "post",
  path: "/api/v1/webhook-endpoints",
  tag: "integrations",
  summary: "Add a webhook endpoint",
  description:
    `${WEBHOOK_RULES} The secret is in this answer only (stored encrypted), so the answer is never kept for an ` +
    "Idempotency-Key: a retry adds another endpoint (delete the one you did not get).",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  answerHoldsSecret: true,
  body: z.object({
    url: Url,
    events: z.array(EventType).min(1).max(EVENT_TYPES.length),
    description: Text(500).nullish(),
  }),
  responses: {
    201: {
      description: "Created; `secret` is shown this once",
      schema: WebhookEndpoint.extend({ secret: z.string().describe("`whsec_` and base64") })
        .meta({ id: "NewWebhookEndpoint" }),
    },
    409: { description: "The company has 20 endpoints already" },
  },
  async handler({ body, asCaller, authorize }) {
    await authorize();
    const url = await checkedUrl(body.url);
    const secret = newWebhookSecret();
    const sealed = await encryptSecret(secret, env().SECRETS_ENCRYPTION_KEY);
    const saved = await asCaller((tx) =>
      rpc(tx, "create_webhook_endpoint", {
        url,
        events: body.events,
        secret_ciphertext: sealed,
        description: body.description ?? null,
      })
    );
    return { status: 201, body: { ...saved as unknown as Record<string, unknown>, secret } };
  },
});

export const listWebhookEndpoints = defineRoute({
  method: "get",
  path: "/api/v1/webhook-endpoints",
  tag: "integrations",
  summary: "The company's webhook endpoints",
  description: WEBHOOK_RULES,
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  responses: { 200: { description: "Oldest first", schema: z.object({ items: z.array(WebhookEndpoint) }) } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "list_webhook_endpoints")) }),
});

export const getWebhookEndpoint = defineRoute({
  method: "get",
  path: "/api/v1/webhook-endpoints/{id}",
  tag: "integrations",
  summary: "One webhook endpoint",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  responses: {
    200: { description: "The endpoint (never its secret)", schema: WebhookEndpoint },
    404: { description: "No endpoint of the company has this id" },
  },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_webhook_endpoint", { endpoint_id: params.id })),
  }),
});

export const updateWebhookEndpoint = defineRoute({
  method: "patch",
  path: "/api/v1/webhook-endpoints/{id}",
  tag: "integrations",
  summary: "Change a webhook endpoint: its URL, events, description, or enable or disable it",
  description: "Fields left out stay as they are. Disabling fails what is still pending for it; enabling clears its " +
    "failure record (resend what it missed with POST /api/v1/webhook-events/{id}/resend).",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  body: z.object({
    url: Url.optional(),
    events: z.array(EventType).min(1).max(EVENT_TYPES.length).optional(),
    description: ClearableText(500).optional().describe("An empty string clears it"),
    enabled: z.boolean().optional(),
  }),
  responses: {
    200: { description: "The endpoint", schema: WebhookEndpoint },
    404: { description: "No endpoint of the company has this id" },
  },
  async handler({ params, body, asCaller, authorize }) {
    await authorize();
    const url = body.url === undefined ? null : await checkedUrl(body.url);
    return {
      body: await asCaller((tx) =>
        rpc(tx, "update_webhook_endpoint", {
          endpoint_id: params.id,
          url,
          events: body.events ?? null,
          description: body.description ?? null,
          enabled: body.enabled ?? null,
        })
      ),
    };
  },
});

export const deleteWebhookEndpoint = defineRoute({
  method: "delete",
  path: "/api/v1/webhook-endpoints/{id}",
  tag: "integrations",
  summary: "Delete a webhook endpoint",
  description: "Nothing more is sent to it; its attempts are deleted with it.",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  responses: {
    204: { description: "Deleted" },
    404: { description: "No endpoint of the company has this id" },
  },
  async handler({ params, asCaller }) {
    await asCaller((tx) => rpc(tx, "delete_webhook_endpoint", { endpoint_id: params.id }));
    return new Response(null, { status: 204 });
  },
});

const WebhookAttempt = z.object({
  event_id: z.uuid().describe("The event's id: its `webhook-id`"),
  type: z.string(),
  attempt: z.number().int().describe("1 for the first, up to 8"),
  status: z.number().int().nullable().describe("The HTTP status answered, or null when no answer came"),
  duration_ms: z.number().int(),
  response: z.string().nullable().describe("The answer's first bytes"),
  error: z.string().nullable().describe("Why the attempt failed, when it did"),
  at: Timestamp,
}).meta({ id: "WebhookAttempt" });

export const listWebhookAttempts = defineRoute({
  method: "get",
  path: "/api/v1/webhook-endpoints/{id}/attempts",
  tag: "integrations",
  summary: "Every attempt to send events to an endpoint",
  description: "Newest first.",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  query: PageQuery,
  responses: {
    200: { description: "The attempts", schema: pageOf(WebhookAttempt) },
    404: { description: "No endpoint of the company has this id" },
  },
  handler: async ({ params, query, asCaller }) => ({
    body: await asCaller((tx) =>
      rpc(tx, "list_webhook_attempts", { endpoint_id: params.id, page_limit: query.limit, cursor: query.cursor })
    ),
  }),
});

const Queued = z.object({ event_id: z.uuid(), queued: z.number().int() }).meta({ id: "WebhookQueued" });

export const sendTestWebhook = defineRoute({
  method: "post",
  path: "/api/v1/webhook-endpoints/{id}/test",
  tag: "integrations",
  summary: "Send a test event to an endpoint",
  description: "A `webhook.test` event (`data: {endpoint_id}`), signed and retried as every event is.",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  responses: {
    202: { description: "Queued", schema: Queued },
    404: { description: "No endpoint of the company has this id" },
    409: { description: "The endpoint is disabled" },
  },
  handler: async ({ params, asCaller }) => ({
    status: 202,
    body: await asCaller((tx) => rpc(tx, "send_test_webhook", { endpoint_id: params.id })),
  }),
});

export const resendWebhookEvent = defineRoute({
  method: "post",
  path: "/api/v1/webhook-events/{id}/resend",
  tag: "integrations",
  summary: "Send an outgoing event again",
  description: "`id` is the event's id (`event_id` of an attempt, its `webhook-id`). It is sent again, with the " +
    "same id and body, to every enabled endpoint it was for, on the same schedule; a receiver recognises a copy by " +
    "its `webhook-id`.",
  auth: "bearer",
  roles: "webhook_managers",
  scope: "webhooks:manage",
  params: IdParams,
  responses: {
    202: { description: "Queued again", schema: Queued },
    404: { description: "No event of the company has this id" },
    409: { description: "None of its endpoints is enabled" },
  },
  handler: async ({ params, asCaller }) => ({
    status: 202,
    body: await asCaller((tx) => rpc(tx, "resend_webhook_event", { event_id: params.id })),
  }),
});

export default [
  createApiKey,
  listApiKeys,
  revokeApiKey,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookAttempts,
  sendTestWebhook,
  resendWebhookEvent,
];

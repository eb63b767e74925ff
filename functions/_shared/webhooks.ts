// The payment gateway's webhooks (SPEC.md §4.3, §4.4, §6; DESIGN.md §5), served
// by the gateway-webhook function (and documented with the /api/v1 routes).
//
// The body is read once as bytes and verified before it is parsed. A verified
// event is applied by the database (public.apply_transfer_event,
// public.apply_payment_event) in one transaction with a statement timeout,
// together with its audit row, so the log says "processed" only for what was
// committed. Everything else (a refusal, an error) is logged in a transaction
// of its own. The answer is 200 only for an event that was applied (or is
// safely ignored); otherwise the gateway delivers it again.
import { z } from "zod";
import { verifySignature } from "./crypto.ts";
import { asService, type Tx } from "./db.ts";
import { env } from "./env.ts";
import { HttpError, toHttpError, type ValidationItem } from "./errors.ts";
import { companyGateway, type GatewayObject, GatewayUnavailable } from "./gateway.ts";
import { rpc } from "./db.ts";
import { defineRoute } from "./route.ts";
import { UUID_PATTERN } from "./schemas.ts";

const TRANSFER_EVENTS = new Set(["TRANSFER_DONE", "TRANSFER_APPROVED", "TRANSFER_FAILED", "TRANSFER_CANCELLED"]);
const PAYMENT_EVENTS = new Set(["PAYMENT_RECEIVED", "PAYMENT_CONFIRMED", "PAYMENT_REFUNDED", "PAYMENT_OVERDUE"]);

/** The gateway waits 5 s for an answer; we keep half a second for the audit row and the network. */
const RESPONSE_BUDGET_MS = 4_500;
const STATEMENT_TIMEOUT_MS = 4_000;

type Result = "processed" | "duplicate" | "ignored" | "rejected" | "error";

/** What one webhook request is about, as far as it is known; becomes its audit row. */
interface Audit {
  companyId: string | null;
  event: string | null;
  objectId: string | null;
}

interface Outcome {
  result: Exclude<Result, "rejected" | "error">;
  detail: string;
  /** True when the audit row was written in the transaction that applied the event. */
  logged: boolean;
}

/** A request refused before anything is applied: 400, 401 or 404, logged `rejected`. */
class Rejected extends HttpError {}

export interface GatewayEvent {
  event: string;
  objectId: string | null;
  externalReference: string | null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** What an (unverified) body names goes into the audit log at a bounded length. */
function noteEvent(audit: Audit, event: GatewayEvent) {
  audit.event = event.event.slice(0, 100);
  audit.objectId = event.objectId?.slice(0, 200) ?? null;
}

/** The event name and its object's id and externalReference: from `transfer` (or, in the other form, `payment`). */
export function parseEvent(body: Uint8Array): GatewayEvent {
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new Rejected(
      400,
      [
        { type: "json_invalid", loc: ["body"], msg: `JSON decode error: ${(error as Error).message}`, input: null },
      ] satisfies ValidationItem[],
    );
  }
  // Postgres text cannot hold NUL: such a body can never be applied, so it is refused (400), not retried.
  if (/\\u0000/i.test(new TextDecoder().decode(body))) {
    throw new Rejected(400, [{ type: "value_error", loc: ["body"], msg: "NUL characters are not allowed", input: null }]);
  }
  const record = payload !== null && typeof payload === "object" && !Array.isArray(payload)
    ? payload as Record<string, unknown>
    : null;
  if (!record || typeof record.event !== "string" || record.event === "") {
    throw new Rejected(
      400,
      [
        {
          type: record && "event" in record ? "type_error" : "missing",
          loc: ["body", "event"],
          msg: "an event name is required",
          input: record?.event ?? null,
        },
      ] satisfies ValidationItem[],
    );
  }
  const holder =
    (TRANSFER_EVENTS.has(record.event) ? record.transfer ?? record.payment : record.payment ?? record.transfer) as
      | Record<string, unknown>
      | null
      | undefined;
  const object = holder !== null && typeof holder === "object" ? holder : {};
  return { event: record.event, objectId: text(object.id), externalReference: text(object.externalReference) };
}

/** The event a gateway object's status stands for; null while it is not settled. */
export function eventForStatus(kind: "transfer" | "payment", status: string): string | null {
  const events: Record<string, Record<string, string>> = {
    transfer: { DONE: "TRANSFER_DONE", FAILED: "TRANSFER_FAILED", CANCELLED: "TRANSFER_CANCELLED" },
    payment: {
      RECEIVED: "PAYMENT_RECEIVED",
      CONFIRMED: "PAYMENT_CONFIRMED",
      REFUNDED: "PAYMENT_REFUNDED",
      OVERDUE: "PAYMENT_OVERDUE",
    },
  };
  return events[kind][status] ?? null;
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError(503, `${what} did not finish in time`)), Math.max(ms, 0));
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The request's audit row, in the transaction given: the one that applied the event, or one of its own. */
async function insertAudit(tx: Tx, audit: Audit, result: Result, detail: string): Promise<void> {
  await tx`insert into public.webhook_events (company_id, event, object_id, result, detail)
           values (${audit.companyId}, ${audit.event}, ${audit.objectId}, ${result}, ${detail})`;
}

function writeAudit(audit: Audit, result: Result, detail: string): Promise<void> {
  return asService((tx) => insertAudit(tx, audit, result, detail));
}

interface Applied {
  result: "processed" | "duplicate" | "ignored";
  detail: string;
  company_id?: string | null;
  delivery_id?: string | null;
}

/**
 * Applies a verified event, within `companyFilter` (null: any company, for the
 * platform endpoint), and writes its audit row in the same transaction.
 */
async function applyEvent(
  audit: Audit,
  companyFilter: string | null,
  event: GatewayEvent,
  timeoutMs: number,
  detailPrefix = "",
): Promise<Outcome> {
  return await asService(async (tx) => {
    await tx.unsafe(
      `set local statement_timeout = ${Math.max(Math.min(Math.floor(timeoutMs), STATEMENT_TIMEOUT_MS), 100)}`,
    );
    const applied = TRANSFER_EVENTS.has(event.event)
      ? await rpc<Applied>(tx, "apply_transfer_event", {
        company_id: companyFilter,
        event: event.event,
        transfer_id: event.objectId,
        external_reference: event.externalReference,
      })
      : await rpc<Applied>(tx, "apply_payment_event", {
        company_id: companyFilter,
        event: event.event,
        payment_id: event.objectId,
        external_reference: event.externalReference,
      });
    // The platform endpoint learns the company from the object, so the company panel shows the event.
    audit.companyId ??= applied.company_id ??
      (applied.delivery_id
        ? (await tx<
          { company_id: string }[]
        >`select company_id from public.deliveries where id = ${applied.delivery_id}`)[0]
          ?.company_id ?? null
        : null);
    const detail = detailPrefix + applied.detail;
    await insertAudit(tx, audit, applied.result, detail);
    return { result: applied.result, detail, logged: true };
  });
}

async function dispatch(audit: Audit, companyFilter: string | null, event: GatewayEvent): Promise<Outcome> {
  if (!TRANSFER_EVENTS.has(event.event) && !PAYMENT_EVENTS.has(event.event)) {
    return { result: "ignored", detail: `event ${event.event} is not handled`, logged: false };
  }
  return await applyEvent(audit, companyFilter, event, STATEMENT_TIMEOUT_MS);
}

async function verifyOrReject(secret: string | undefined, body: Uint8Array<ArrayBuffer>, signature: string | null) {
  if (!secret) throw new Rejected(401, "no webhook secret is configured for this endpoint");
  if (signature === null) throw new Rejected(401, "missing gateway-signature");
  if (!(await verifySignature(secret, body, signature))) throw new Rejected(401, "invalid signature");
}

async function companyWebhook(
  audit: Audit,
  companyParam: string,
  body: Uint8Array<ArrayBuffer>,
  signature: string | null,
) {
  const unknown = () => new Rejected(404, "unknown company");
  if (!UUID_PATTERN.test(companyParam)) throw unknown();
  const [company] = await asService((tx) => tx`select id from public.companies where id = ${companyParam}`);
  if (!company) throw unknown();
  audit.companyId = companyParam;
  // The platform secret stands in only for a company that has none of its own.
  const gateway = await companyGateway(companyParam);
  await verifyOrReject(gateway?.webhookSecret ?? env().GATEWAY_PLATFORM_WEBHOOK_SECRET, body, signature);
  const event = parseEvent(body);
  noteEvent(audit, event);
  return await dispatch(audit, companyParam, event);
}

async function platformWebhook(
  audit: Audit,
  body: Uint8Array<ArrayBuffer>,
  signature: string | null,
  startedAt: number,
) {
  const config = env();
  if (signature !== null || config.GATEWAY_WEBHOOK_REQUIRE_SIGNATURE) {
    await verifyOrReject(config.GATEWAY_PLATFORM_WEBHOOK_SECRET, body, signature);
    const event = parseEvent(body);
    noteEvent(audit, event);
    return await dispatch(audit, null, event);
  }
  const event = parseEvent(body);
  noteEvent(audit, event);
  if (!TRANSFER_EVENTS.has(event.event) && !PAYMENT_EVENTS.has(event.event)) {
    return { result: "ignored", detail: `event ${event.event} is not handled`, logged: false } satisfies Outcome;
  }
  return await unsignedEvent(audit, event, startedAt);
}

interface Owned {
  id: string;
  company_id: string;
  gateway_id: string | null;
}

/**
 * An unsigned event is a hint, not a fact (DESIGN.md §5): find what it names,
 * fetch that object back from the gateway with its company's key, and apply
 * the status the gateway reports, never the claim itself.
 */
async function unsignedEvent(audit: Audit, claim: GatewayEvent, startedAt: number): Promise<Outcome> {
  const kind = TRANSFER_EVENTS.has(claim.event) ? "transfer" : "payment";
  const [owned] = await asService((tx) =>
    kind === "transfer"
      ? tx<Owned[]>`select id, company_id, gateway_transfer_id as gateway_id from public.withdrawals
                    where id = private.withdrawal_for_event(null, ${claim.objectId}, ${claim.externalReference})`
      : tx<Owned[]>`select id, company_id, gateway_payment_id as gateway_id from public.deliveries
                    where id = private.delivery_for_payment(${claim.objectId}, ${claim.externalReference})`
  );
  if (!owned) {
    return {
      result: "ignored",
      detail: `unsigned: no such ${kind === "transfer" ? "withdrawal" : "delivery"}`,
      logged: false,
    };
  }
  audit.companyId = owned.company_id;
  // Only an object already stored as ours, or one the gateway itself ties to ours, is fetched.
  const gatewayId = owned.gateway_id ?? claim.objectId;
  // The gateway always names its object; a claim that names none has nothing to verify.
  if (!gatewayId) {
    return { result: "ignored", detail: `unsigned: the ${kind} has no gateway id to verify`, logged: false };
  }
  const gateway = await companyGateway(owned.company_id);
  if (!gateway) throw new GatewayUnavailable("the company has no gateway configuration to verify with");
  const remaining = () => RESPONSE_BUDGET_MS - (Date.now() - startedAt);
  let object: GatewayObject;
  try {
    object = await withDeadline(
      kind === "transfer" ? gateway.client.getTransfer(gatewayId) : gateway.client.getPayment(gatewayId),
      remaining() - 1_000,
      "fetching the object back from the gateway",
    );
  } catch (error) {
    // A refusal (say, 404 for an invented id) is not applied either; the gateway may try again.
    if (error instanceof HttpError && error.status === 422) {
      throw new HttpError(502, `the gateway did not confirm the ${kind}: ${error.detail}`);
    }
    throw error;
  }
  if (owned.gateway_id === null && object.externalReference !== owned.id) {
    return { result: "ignored", detail: `unsigned: the gateway's ${kind} is not ours`, logged: false };
  }
  const event = eventForStatus(kind, object.status);
  if (!event) {
    return {
      result: "ignored",
      detail: `unsigned: the gateway reports ${kind} status ${object.status}`,
      logged: false,
    };
  }
  return await applyEvent(
    audit,
    owned.company_id,
    { event, objectId: object.id, externalReference: text(object.externalReference) ?? owned.id },
    remaining(),
    `unsigned, verified with the gateway (${object.status} = ${event}): `,
  );
}

function logLine(endpoint: string, audit: Audit, result: Result, status: number, detail: string) {
  console.log(JSON.stringify({
    event: "gateway_webhook",
    endpoint,
    company_id: audit.companyId,
    gateway_event: audit.event,
    object_id: audit.objectId,
    result,
    status,
    detail,
  }));
}

/** One webhook request, start to finish: always exactly one audit row. */
export async function receiveWebhook(req: Request, companyParam?: string): Promise<Response> {
  const startedAt = Date.now();
  const endpoint = companyParam === undefined ? "platform" : "company";
  const audit: Audit = { companyId: null, event: null, objectId: null };
  const body = new Uint8Array(await req.arrayBuffer());
  const signature = req.headers.get("gateway-signature");
  try {
    const outcome = companyParam === undefined
      ? await platformWebhook(audit, body, signature, startedAt)
      : await companyWebhook(audit, companyParam, body, signature);
    if (!outcome.logged) await writeAudit(audit, outcome.result, outcome.detail);
    logLine(endpoint, audit, outcome.result, 200, outcome.detail);
    return Response.json({ received: true });
  } catch (error) {
    const timedOut = (error as { code?: string })?.code === "57014";
    const http = timedOut
      ? new HttpError(503, "processing did not finish within the statement timeout")
      : toHttpError(error);
    const result: Result = error instanceof Rejected ? "rejected" : "error";
    const detail = typeof http.detail === "string" ? http.detail : http.detail.map((item) => item.msg).join("; ");
    // The gateway retries anything but 200; a failure of ours must not look like its mistake.
    const status = result === "error" && http.status < 500 ? 503 : http.status;
    try {
      await writeAudit(audit, result, detail);
    } catch (auditError) {
      console.error(JSON.stringify({ event: "gateway_webhook_audit_failed", error: String(auditError) }));
    }
    if (result === "error") {
      console.error(
        JSON.stringify({
          event: "gateway_webhook_failed",
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        }),
      );
    }
    logLine(endpoint, audit, result, status, detail);
    return Response.json({ detail: http.detail }, { status });
  }
}

// Route declarations: the same handler behind both paths, and the OpenAPI document.

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
  event: z.string().describe("PAYMENT_RECEIVED, PAYMENT_CONFIRMED, PAYMENT_REFUNDED, PAYMENT_OVERDUE, TRANSFER_DONE, " +
    "TRANSFER_APPROVED, TRANSFER_FAILED, TRANSFER_CANCELLED; any other is acknowledged and ignored"),
  transfer: GatewayObjectBody.optional(),
  payment: GatewayObjectBody.optional(),
}).passthrough().meta({ id: "WebhookEvent" });
const EVENT_DESCRIPTION =
  "Body: `{event, transfer | payment: {id, status, value, externalReference, ...}}` (SPEC.md §6), " +
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

export const companyWebhookRoute = defineRoute({
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
  handler: ({ params, req }) => receiveWebhook(req, params.company_id),
});

export const platformWebhookRoute = defineRoute({
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
  handler: ({ req }) => receiveWebhook(req),
});

export const webhookRoutes = [companyWebhookRoute, platformWebhookRoute];

// One webhook request, start to finish (docs/spec.md §4.3, §4.4, §6): read the
// body (at most 1 MiB), check the signature, parse, settle with the gateway,
// and answer within 5 s. Always exactly one audit row. The answer is 200 only
// for an event applied (or safely ignored); anything else makes the gateway
// deliver it again.
import { verifySignature } from "../_shared/crypto.ts";
import { db } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { HttpError, retryLater, toHttpError } from "../_shared/errors.ts";
import { companyWebhookSecret, type StoredConfig } from "../_shared/gateway.ts";
import { UUID_PATTERN } from "../_shared/schemas.ts";
import { readBody } from "../_shared/route.ts";
import { byDeadline } from "../_shared/timeout.ts";
import { type GatewayEvent, parseEvent, Rejected } from "./events.ts";
import { type Audit, ignored, insertAudit, type Outcome, type Result, settle } from "./settle.ts";

/** The gateway waits 5 s for an answer; the whole request (pool waits included) must end before. */
const RESPONSE_BUDGET_MS = 4_500;

/** The work, or a 503 the gateway retries once `ms` have passed. */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return byDeadline(work, ms, () => {
    throw retryLater(503, "the event could not be processed in time; deliver it again", 5);
  });
}

function noteEvent(audit: Audit, event: GatewayEvent) {
  audit.event = event.event.slice(0, 100);
  audit.objectId = event.objectId?.slice(0, 200) ?? null;
}

function verifyOrReject(secret: string | null | undefined, body: Uint8Array<ArrayBuffer>, signature: string | null) {
  if (!secret) throw new Rejected(401, "no webhook secret is configured for this endpoint");
  if (signature === null) throw new Rejected(401, "missing gateway-signature");
  if (!verifySignature(secret, body, signature)) throw new Rejected(401, "invalid signature");
}

async function dispatch(
  audit: Audit,
  scope: string | null,
  event: GatewayEvent,
  unsigned: boolean,
  config?: StoredConfig | null,
): Promise<Outcome> {
  noteEvent(audit, event);
  if (!event.kind) return { result: "ignored", detail: `event ${event.event} is not handled`, logged: false };
  return await settle(audit, scope, { ...event, kind: event.kind }, {
    unsigned,
    detailPrefix: unsigned ? "unsigned, " : "",
    config,
  });
}

async function companyWebhook(
  audit: Audit,
  companyParam: string,
  body: Uint8Array<ArrayBuffer>,
  signature: string | null,
) {
  const unknown = () => new Rejected(404, "unknown company");
  if (!UUID_PATTERN.test(companyParam)) throw unknown();
  // The company and its secret: read for every request, so a new secret applies at once everywhere (gateway.ts).
  const company = await companyWebhookSecret(companyParam);
  if (!company.known) throw unknown();
  audit.companyId = companyParam;
  // The platform secret stands in only for a company that has none of its own.
  const secret = company.secret ?? env().GATEWAY_PLATFORM_WEBHOOK_SECRET;
  verifyOrReject(secret, body, signature);
  const event = parseEvent(body);
  if (company.secret === null) {
    // Without a gateway configuration the company has no charge or transfer at the gateway (a Pix delivery and a
    // withdrawal both need one), so no event can be about anything of its own: 200, or the gateway retries for ever.
    noteEvent(audit, event);
    return ignored("the company has no gateway configuration: no gateway object is its own");
  }
  return await dispatch(audit, companyParam, event, false, company.config);
}

async function platformWebhook(audit: Audit, body: Uint8Array<ArrayBuffer>, signature: string | null) {
  const config = env();
  const unsigned = signature === null && !config.GATEWAY_WEBHOOK_REQUIRE_SIGNATURE;
  if (!unsigned) verifyOrReject(config.GATEWAY_PLATFORM_WEBHOOK_SECRET, body, signature);
  return await dispatch(audit, null, parseEvent(body), unsigned);
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

/** The last 100 ms of the gateway's 5 s are for the answer itself. */
const ANSWER_BY_MS = 4_900;

async function writeAudit(audit: Audit, result: Result, detail: string, startedAt: number): Promise<void> {
  const left = Math.min(1_000, ANSWER_BY_MS - (Date.now() - startedAt));
  try {
    if (left <= 0) throw new Error("no time left to write the audit row");
    // One statement, its own transaction: the audit row of a request that applied nothing.
    await withDeadline(insertAudit(db(), audit, result, detail), left);
  } catch (error) {
    console.error(JSON.stringify({ event: "gateway_webhook_audit_failed", error: String(error) }));
  }
}

/** One webhook request: `companyParam` for the company endpoint, undefined for the platform one. */
export async function receiveWebhook(req: Request, companyParam?: string): Promise<Response> {
  const startedAt = Date.now();
  const endpoint = companyParam === undefined ? "platform" : "company";
  const audit: Audit = { companyId: null, event: null, objectId: null };
  const signature = req.headers.get("gateway-signature");
  try {
    const outcome = await withDeadline(
      (async () => {
        // A body over 1 MiB is refused (413) before it is read whole.
        const body = await readBody(req).catch((error) => {
          throw error instanceof HttpError ? new Rejected(error.status, error.detail) : error;
        });
        return companyParam === undefined
          ? await platformWebhook(audit, body, signature)
          : await companyWebhook(audit, companyParam, body, signature);
      })(),
      RESPONSE_BUDGET_MS,
    );
    if (!outcome.logged) await writeAudit(audit, outcome.result, outcome.detail, startedAt);
    logLine(endpoint, audit, outcome.result, 200, outcome.detail);
    return Response.json({ received: true });
  } catch (error) {
    const http = toHttpError(error);
    const result: Result = error instanceof Rejected ? "rejected" : "error";
    const detail = typeof http.detail === "string" ? http.detail : http.detail.map((item) => item.msg).join("; ");
    // The gateway retries anything but 200; a failure of ours must not look like its mistake.
    const status = result === "error" && http.status < 500 && http.status !== 429 ? 503 : http.status;
    // What is left of the 5 s goes to the audit row, never past it.
    await writeAudit(audit, result, detail, startedAt);
    if (result === "error" && http.status >= 500) {
      console.error(JSON.stringify({
        event: "gateway_webhook_failed",
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      }));
    }
    logLine(endpoint, audit, result, status, detail);
    return Response.json({ detail: http.detail }, { status, headers: http.headers });
  }
}

// One run of the webhook sender: claim due sends (public.claim_webhook_deliveries:
// skip locked, under a lease), check each URL again (webhook-url.ts: DNS can
// change), sign with the standardwebhooks package, POST with a 10 s deadline
// and no redirects followed, record every attempt
// (public.record_webhook_attempt: delivered, or retried on Standard Webhooks'
// schedule), until nothing is due or the run's time is up; then tell the owners
// of endpoints disabled for failing. Any number of runs may go at once, on any
// number of instances: the claim gives each send to one of them. Logs never
// carry a secret, nor a body.
import nodemailer from "nodemailer";
import { Webhook } from "standardwebhooks";
import { decryptSecret } from "../_shared/crypto.ts";
import { asService } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";
import { allowedHosts, checkWebhookUrl, WebhookUrlError } from "../_shared/webhook-url.ts";

interface Claimed {
  event_id: string;
  endpoint_id: string;
  company_id: string;
  attempt: number;
  url: string;
  secret_ciphertext: string;
  type: string;
  body: string;
}

export interface RunSummary {
  delivered: number;
  retried: number;
  failed: number;
  owners_told: number;
}

/** Claims per round; the sends of a round go at once. */
const BATCH = 20;
/** A run stops claiming after this long, well inside pg_net's 30 s and the Edge Runtime's limits. */
const RUN_BUDGET_MS = 20_000;
/** No answer within this is a failed attempt (DESIGN: 10 s). */
export const SEND_TIMEOUT_MS = 10_000;
/** How much of an answer is kept with its attempt. */
const RESPONSE_BYTES = 500;

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

interface Attempt {
  delivered: boolean;
  status: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

/** The first bytes of an answer's body, without reading the rest. */
async function firstBytes(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes.slice(0, RESPONSE_BYTES)).replaceAll("\0", "");
}

/** The headers of one attempt, signed now: the id and body are the event's, the same on every attempt. */
export function signedHeaders(secret: string, eventId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = new Date(Math.floor(now.getTime() / 1000) * 1000);
  return {
    "content-type": "application/json",
    "user-agent": "delivery-platform-webhooks/1",
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp.getTime() / 1000),
    "webhook-signature": new Webhook(secret).sign(eventId, timestamp, body),
  };
}

async function attempt(send: Claimed): Promise<Attempt> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    await checkWebhookUrl(send.url, allowedHosts(env().WEBHOOK_ALLOWED_HOSTS));
  } catch (error) {
    if (!(error instanceof WebhookUrlError)) throw error;
    return { delivered: false, status: null, duration_ms: elapsed(), response: null, error: error.message };
  }
  const secret = await decryptSecret(send.secret_ciphertext, env().SECRETS_ENCRYPTION_KEY);
  const timeout = timeoutSignal(SEND_TIMEOUT_MS);
  try {
    const res = await fetch(send.url, {
      method: "POST",
      headers: signedHeaders(secret, send.event_id, send.body),
      body: send.body,
      redirect: "manual",
      signal: timeout.signal,
    });
    const response = await firstBytes(res);
    const delivered = res.status >= 200 && res.status < 300;
    const error = delivered
      ? null
      : res.status >= 300 && res.status < 400
      ? `answered ${res.status}: redirects are not followed`
      : `answered ${res.status}`;
    return { delivered, status: res.status, duration_ms: elapsed(), response, error };
  } catch (error) {
    const reason = isTimeout(error)
      ? `no answer within ${SEND_TIMEOUT_MS / 1000} s`
      : `could not connect: ${(error as Error).message}`.slice(0, 300);
    return { delivered: false, status: null, duration_ms: elapsed(), response: null, error: reason };
  } finally {
    timeout.clear();
  }
}

async function settle(send: Claimed, outcome: Attempt): Promise<"delivered" | "retried" | "failed" | null> {
  const [row] = await asService((tx) =>
    tx`select public.record_webhook_attempt(${send.event_id}, ${send.endpoint_id}, ${send.attempt},
      ${outcome.delivered}, ${outcome.status}, ${outcome.duration_ms}, ${outcome.response}, ${outcome.error}) as r`
  );
  const recorded = row.r as { status: string; endpoint_disabled: boolean } | null;
  const fields = {
    event_id: send.event_id,
    endpoint_id: send.endpoint_id,
    company_id: send.company_id,
    type: send.type,
    attempt: send.attempt,
    status: outcome.status,
    duration_ms: outcome.duration_ms,
  };
  if (!recorded) return null;
  if (recorded.status === "delivered") log("webhook_delivered", fields);
  else log(recorded.status === "failed" ? "webhook_failed" : "webhook_retry", { ...fields, error: outcome.error });
  if (recorded.endpoint_disabled) log("webhook_endpoint_disabled", { endpoint_id: send.endpoint_id });
  return recorded.status === "delivered" ? "delivered" : recorded.status === "failed" ? "failed" : "retried";
}

interface OwnerNotice {
  endpoint_id: string;
  url: string;
  company_name: string;
  reason: string;
  emails: string[];
}

/**
 * E-mails the owners of endpoints disabled for failing, each claimed by this run alone (runs at once do not both
 * send it); answers how many endpoints were told of.
 */
async function tellOwners(): Promise<number> {
  const [row] = await asService((tx) => tx`select public.webhook_owners_to_tell() as notices`);
  const notices = row.notices as OwnerNotice[];
  if (notices.length === 0) return 0;
  const config = env();
  const transport = nodemailer.createTransport(config.SMTP_URL);
  let told = 0;
  try {
    for (const notice of notices) {
      try {
        if (notice.emails.length > 0) {
          await transport.sendMail({
            from: { name: notice.company_name, address: config.SMTP_FROM },
            to: notice.emails,
            subject: "Webhook endpoint disabled",
            text: `The webhook endpoint ${notice.url} of ${notice.company_name} was ${notice.reason}: every ` +
              "attempt to send it events failed for 5 days. Nothing more is sent to it. Fix the receiver, then " +
              "enable the endpoint again in the panel (Integrations) or with PATCH " +
              `/api/v1/webhook-endpoints/${notice.endpoint_id} {"enabled": true}, and resend what it missed.`,
          });
        }
        await asService((tx) => tx`select public.webhook_owner_told(${notice.endpoint_id})`);
        told++;
        log("webhook_owner_told", { endpoint_id: notice.endpoint_id });
      } catch (error) {
        // Claimed again by a run 5 minutes on (public.webhook_owners_to_tell).
        log("webhook_owner_not_told", { endpoint_id: notice.endpoint_id, error: (error as Error).message });
      }
    }
  } finally {
    transport.close();
  }
  return told;
}

/** Sends what is due; answers how many sends were delivered, left to retry, and failed. */
export async function sendDue(): Promise<RunSummary> {
  const summary: RunSummary = { delivered: 0, retried: 0, failed: 0, owners_told: 0 };
  const stopAt = Date.now() + RUN_BUDGET_MS;
  while (Date.now() < stopAt) {
    const [row] = await asService((tx) => tx`select public.claim_webhook_deliveries(${BATCH}) as batch`);
    const batch = row.batch as Claimed[];
    if (batch.length === 0) break;
    await Promise.all(batch.map(async (send) => {
      try {
        const result = await settle(send, await attempt(send));
        if (result) summary[result]++;
      } catch (error) {
        // Not recorded (the database failed us): the lease ends and the send is claimed again.
        log("webhook_not_recorded", { event_id: send.event_id, error: (error as Error).message });
      }
    }));
  }
  summary.owners_told = await tellOwners();
  return summary;
}

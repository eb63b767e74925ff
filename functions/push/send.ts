// One run of the push sender: claim due messages (public.claim_push_messages:
// skip locked, under a lease), check each endpoint (a public https URL, or a
// host WEBHOOK_ALLOWED_HOSTS lists, as webhooks: a subscription is the
// driver's input), encrypt the payload for the subscription with
// @block65/webcrypto-web-push (RFC 8291, aes128gcm), sign the VAPID JWT
// (vapid.ts), POST it with TTL, Urgency and Topic (RFC 8030), and record the
// answer (public.record_push_outcome: 201 sent, 404/410 the subscription is
// deleted, 429/5xx retried). Logs carry no payload, no key and no endpoint
// path (which identifies a browser).
import { encryptNotification } from "@block65/webcrypto-web-push";
import { asService } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";
import { allowedHosts, checkWebhookUrl, WebhookUrlError } from "../_shared/webhook-url.ts";
import { vapidAuthorization, type VapidKeys } from "./vapid.ts";

interface Claimed {
  id: string;
  attempt: number;
  subscription_id: string;
  type: string;
  payload: Record<string, unknown>;
  topic: string;
  urgency: string;
  ttl: number;
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface RunSummary {
  sent: number;
  gone: number;
  retried: number;
  failed: number;
}

const BATCH = 50;
/** A run stops claiming after this long, well inside pg_net's 30 s. */
const RUN_BUDGET_MS = 20_000;
/** A push service answers at once (it only queues); no answer within this is a failed attempt. */
export const SEND_TIMEOUT_MS = 10_000;

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

function vapidKeys(): VapidKeys | null {
  const config = env();
  if (!config.VAPID_PUBLIC_KEY || !config.VAPID_PRIVATE_KEY || !config.VAPID_SUBJECT) return null;
  return { publicKey: config.VAPID_PUBLIC_KEY, privateKey: config.VAPID_PRIVATE_KEY, subject: config.VAPID_SUBJECT };
}

/** The request a push service gets for one message (exported for the tests of its encryption). */
export async function pushRequest(message: Claimed, keys: VapidKeys): Promise<RequestInit & { headers: Headers }> {
  const body = await encryptNotification(
    { endpoint: message.endpoint, expirationTime: null, keys: { p256dh: message.p256dh, auth: message.auth } },
    new TextEncoder().encode(JSON.stringify(message.payload)),
  );
  const headers = new Headers({
    authorization: await vapidAuthorization(message.endpoint, keys),
    "content-encoding": "aes128gcm",
    "content-type": "application/octet-stream",
    ttl: String(message.ttl),
    urgency: message.urgency,
    topic: message.topic,
  });
  return { method: "POST", headers, body, redirect: "manual" };
}

async function attempt(message: Claimed, keys: VapidKeys): Promise<{ status: number | null; error: string | null }> {
  try {
    await checkWebhookUrl(message.endpoint, allowedHosts(env().WEBHOOK_ALLOWED_HOSTS));
  } catch (error) {
    if (!(error instanceof WebhookUrlError)) throw error;
    // Never sent: recorded as the push service's refusal of a resource it does not have, so it is removed.
    return { status: 404, error: error.message.replace(/^url/, "endpoint") };
  }
  const timeout = timeoutSignal(SEND_TIMEOUT_MS);
  try {
    const res = await fetch(message.endpoint, { ...(await pushRequest(message, keys)), signal: timeout.signal });
    await res.body?.cancel();
    return { status: res.status, error: res.ok ? null : `answered ${res.status}` };
  } catch (error) {
    const reason = isTimeout(error)
      ? `no answer within ${SEND_TIMEOUT_MS / 1000} s`
      : `could not connect: ${(error as Error).message}`.slice(0, 300);
    return { status: null, error: reason };
  } finally {
    timeout.clear();
  }
}

/** Sends what is due; answers how many were sent, found gone, left to retry, and failed. */
export async function sendDue(): Promise<RunSummary> {
  const summary: RunSummary = { sent: 0, gone: 0, retried: 0, failed: 0 };
  const keys = vapidKeys();
  const stopAt = Date.now() + RUN_BUDGET_MS;
  while (Date.now() < stopAt) {
    const [row] = await asService((tx) => tx`select public.claim_push_messages(${BATCH}) as batch`);
    const batch = row.batch as Claimed[];
    if (batch.length === 0) break;
    await Promise.all(batch.map(async (message) => {
      try {
        const outcome = keys
          ? await attempt(message, keys)
          : { status: 503, error: "Web Push is not configured (VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT)" };
        const [recorded] = await asService((tx) =>
          tx`select public.record_push_outcome(${message.id}, ${message.attempt}, ${outcome.status},
            ${outcome.error}) as r`
        );
        const result = recorded.r as keyof RunSummary | null;
        if (!result) return;
        summary[result]++;
        const host = new URL(message.endpoint).host;
        log(`push_${result}`, {
          message_id: message.id,
          subscription_id: message.subscription_id,
          type: message.type,
          host,
          attempt: message.attempt,
          status: outcome.status,
          ...(outcome.error ? { error: outcome.error } : {}),
        });
      } catch (error) {
        // Not recorded (the database failed us): the lease ends and the message is claimed again.
        log("push_not_recorded", { message_id: message.id, error: (error as Error).message });
      }
    }));
  }
  return summary;
}

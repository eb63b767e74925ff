// One run of the sender: claim due messages (public.claim_notifications:
// skip locked, under a lease), send each, record each outcome
// (public.record_notification_outcome), until nothing is due or the run's
// time is up. Any number of runs may go at once, on any number of instances:
// the claim gives each message to one of them. Logs name the destination only
// masked, never a token.
import { asService, rpc } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import type { NotificationChannel, NotificationEvent } from "../_shared/notifications.ts";
import { type MessageFacts, oneLine, parametersOf, renderEmail, templateFor } from "./messages.ts";
import { createMailer, type Mailer, type Outcome, sendWhatsApp } from "./providers.ts";

interface Claimed {
  id: string;
  attempt: number;
  delivery_id: string;
  company_id: string;
  event: NotificationEvent;
  channel: NotificationChannel;
  to: string;
  to_masked: string;
  first_name: string | null;
  company_name: string;
  tracking_path: string;
  eta_at: string | null;
  handover_code: string | null;
}

export interface RunSummary {
  sent: number;
  retried: number;
  failed: number;
}

/** Claims per round; the messages of a round are sent at once. */
const BATCH = 10;
/** A run stops claiming after this long, well inside pg_net's 30 s and the Edge Runtime's limits. */
const RUN_BUDGET_MS = 20_000;

function log(event: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ event, ...fields }));
}

/** The provider's words with the destination masked (an SMTP refusal quotes the address). */
function masked(text: string, message: Claimed): string {
  return text.split(message.to).join(message.to_masked);
}

async function deliver(message: Claimed, mailer: () => Mailer): Promise<Outcome> {
  const config = env();
  const facts: MessageFacts = {
    first_name: message.first_name,
    company_name: message.company_name,
    eta_at: message.eta_at,
    link: `${config.WEB_APP_URL}${message.tracking_path}`,
    now: new Date(),
    handover_code: message.handover_code,
  };
  if (message.channel === "whatsapp") {
    const template = templateFor(message.event, facts);
    return await sendWhatsApp(
      { url: config.WHATSAPP_URL, token: config.WHATSAPP_TOKEN, phoneId: config.WHATSAPP_PHONE_ID },
      message.to,
      { name: template.name, parameters: parametersOf(template, facts) },
    );
  }
  return await mailer().send({
    from: { name: oneLine(message.company_name), address: config.SMTP_FROM },
    to: message.to,
    // The same id on every attempt: a mail that did arrive before its answer was lost is recognisably the same.
    messageId: `<${message.id}@${config.SMTP_FROM.split("@")[1]}>`,
    ...renderEmail(message.event, facts),
  });
}

async function settle(message: Claimed, outcome: Outcome): Promise<"sent" | "retried" | "failed" | null> {
  const error = outcome.kind === "sent" ? null : masked(outcome.reason, message).slice(0, 500);
  const status = await asService((tx) =>
    rpc(tx, "record_notification_outcome", {
      notification_id: message.id,
      attempt: message.attempt,
      outcome: outcome.kind,
      error,
      provider_message_id: outcome.kind === "sent" ? outcome.id : null,
    })
  );
  const fields = {
    notification_id: message.id,
    delivery_id: message.delivery_id,
    company_id: message.company_id,
    delivery_event: message.event,
    channel: message.channel,
    to: message.to_masked,
    attempt: message.attempt,
  };
  if (status === "sent") log("notification_sent", fields);
  else if (status === "failed") log("notification_failed", { ...fields, error });
  else if (status === "queued") log("notification_retry", { ...fields, error });
  return status === "sent" ? "sent" : status === "failed" ? "failed" : status === "queued" ? "retried" : null;
}

/** Sends what is due; answers how many messages were sent, left to retry, and failed. */
export async function sendDue(): Promise<RunSummary> {
  const summary: RunSummary = { sent: 0, retried: 0, failed: 0 };
  const stopAt = Date.now() + RUN_BUDGET_MS;
  let mailer: Mailer | undefined;
  const openMailer = () => (mailer ??= createMailer(env().SMTP_URL));
  try {
    while (Date.now() < stopAt) {
      const batch = await asService((tx) => rpc(tx, "claim_notifications", { batch: BATCH })) as unknown as Claimed[];
      if (batch.length === 0) break;
      await Promise.all(batch.map(async (message) => {
        try {
          const result = await settle(message, await deliver(message, openMailer));
          if (result) summary[result]++;
        } catch (error) {
          // Not recorded (the database failed us): the lease ends and the message is claimed again.
          log("notification_not_recorded", { notification_id: message.id, error: (error as Error).message });
        }
      }));
    }
  } finally {
    mailer?.close();
  }
  return summary;
}

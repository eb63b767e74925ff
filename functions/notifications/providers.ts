// The two providers: the WhatsApp Cloud API (a template message) and SMTP
// (nodemailer). Each answers an Outcome: sent (with the provider's id), failed
// for good (the provider refused this destination: retrying cannot help), or
// retry (anything else: down, slow, busy, misconfigured, a 5xx).
import nodemailer from "nodemailer";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";
import type { Email } from "./messages.ts";

export type Outcome =
  | { kind: "sent"; id: string | null }
  | { kind: "failed"; reason: string }
  | { kind: "retry"; reason: string };

/** Both providers get 10 s per message: a sender claims with a 2-minute lease. */
export const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * Meta's error codes that mean this recipient cannot get this message, whatever
 * we do: 131026 the number is not on WhatsApp (or cannot receive it), 131030
 * not in the test number's allowed list, 131021 the recipient is the sender,
 * 131009 / 100 a parameter (the `to`) is not valid. Anything else (rate
 * limits 130429 / 131048 / 131056, 131000 / 131016 / 1 / 2 service trouble,
 * 190 / 10 / 200 an access token or permission to fix) is retried.
 */
const WHATSAPP_REFUSALS = new Set([131026, 131030, 131021, 131009, 100]);

/** The `to` of a WhatsApp message: digits with the country code (a Brazilian number without one gets 55). */
export function whatsappNumber(phone: string): string {
  const digits = phone.replace(/\D/g, "");
  return !phone.trim().startsWith("+") && (digits.length === 10 || digits.length === 11) ? `55${digits}` : digits;
}

export interface WhatsAppConfig {
  url: string;
  token: string;
  phoneId: string;
}

/** POST {url}/{phone_id}/messages: a template in pt_BR with the body's parameters. */
export async function sendWhatsApp(
  config: WhatsAppConfig,
  to: string,
  template: { name: string; parameters: string[] },
): Promise<Outcome> {
  const timeout = timeoutSignal(PROVIDER_TIMEOUT_MS);
  try {
    const res = await fetch(`${config.url}/${encodeURIComponent(config.phoneId)}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${config.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: whatsappNumber(to),
        type: "template",
        template: {
          name: template.name,
          language: { code: "pt_BR" },
          components: [{
            type: "body",
            parameters: template.parameters.map((text) => ({ type: "text", text })),
          }],
        },
      }),
      signal: timeout.signal,
    });
    const body = await res.json().catch(() => null) as {
      messages?: { id?: string }[];
      error?: { code?: number; message?: string; error_data?: { details?: string } };
    } | null;
    if (res.ok) return { kind: "sent", id: body?.messages?.[0]?.id ?? null };
    const error = body?.error;
    const reason = error
      ? [error.message ?? `error ${error.code}`, error.error_data?.details].filter(Boolean).join(": ")
      : `WhatsApp answered ${res.status}`;
    if (res.status >= 400 && res.status < 500 && error?.code !== undefined && WHATSAPP_REFUSALS.has(error.code)) {
      return { kind: "failed", reason };
    }
    return { kind: "retry", reason };
  } catch (error) {
    return { kind: "retry", reason: isTimeout(error) ? "WhatsApp did not answer in 10 s" : describe(error) };
  } finally {
    timeout.clear();
  }
}

export interface Mailer {
  send(message: { from: { name: string; address: string }; to: string; messageId: string } & Email): Promise<Outcome>;
  close(): void;
}

/**
 * One SMTP transport per run of the sender, pooled (a few connections reused
 * for its messages). A 5xx to the recipient (RCPT TO: the address does not
 * exist, is refused, is malformed) fails the message; connection trouble, a
 * 4xx, or a refused login are retried.
 */
export function createMailer(smtpUrl: string): Mailer {
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 3,
    connectionTimeout: PROVIDER_TIMEOUT_MS,
    greetingTimeout: PROVIDER_TIMEOUT_MS,
    socketTimeout: PROVIDER_TIMEOUT_MS,
  });
  return {
    async send(message) {
      try {
        const info = await transport.sendMail({
          from: message.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: message.messageId,
        });
        if (info.rejected.length > 0) return { kind: "failed", reason: `refused: ${info.response}` };
        return { kind: "sent", id: info.messageId };
      } catch (error) {
        const { responseCode, command } = error as { responseCode?: number; command?: string };
        const reason = describe(error);
        if (responseCode && responseCode >= 500 && responseCode < 600 && command === "RCPT TO") {
          return { kind: "failed", reason };
        }
        return { kind: "retry", reason };
      }
    },
    close: () => transport.close(),
  };
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 400);
}

// Local stack only: fire the gateway's events for a delivery or a withdrawal,
// so a person can play a whole delivery through in two browser windows; and
// read what the recipients were sent: the WhatsApp simulator's messages, and
// the e-mails in the local mailbox (Mailpit's API at /_mail/api/v1).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError } from "../../../api/client.ts";
import { ErrorNote, Note } from "../../../components/ui.tsx";
import { config } from "../../../config.ts";
import { useTranslation } from "react-i18next";
import { formatBRL, formatDateTime, gatewayEventName, shortId } from "../../../format.ts";
import { PushInbox } from "../../notifications/components/PushInbox.tsx";
import { mailQuery, mailsQuery, type MailSummary, whatsAppInboxQuery } from "../api/queries.ts";
import { deliveriesQuery } from "../../deliveries/api/queries.ts";
import { integrationKeys } from "../../integrations/api/keys.ts";
import { withdrawalsQuery } from "../../money/api/queries.ts";

interface Fire {
  event: string;
  object_id?: string | null;
  external_reference: string;
  value: number;
}

/** The status the platform's webhook answered the signed event with. */
async function fire(body: Fire): Promise<number> {
  const res = await fetch(`${config.apiUrl}/_sim/web/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  }).catch(() => null);
  if (!res) throw new ApiError(0, null);
  const answer = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, answer);
  return res.status;
}

/** The text of a message with its links as links, as a phone shows it. */
function WithLinks({ text }: { text: string }) {
  return (
    <>
      {text.split(/(https?:\/\/\S+)/).map((part, i) =>
        i % 2 === 1 ? <a key={i} href={part} target="_blank" rel="noreferrer">{part}</a> : part
      )}
    </>
  );
}

/** What the WhatsApp simulator received, newest first. */
function WhatsAppInbox() {
  const { t } = useTranslation();
  const inbox = useQuery({
    ...whatsAppInboxQuery(),
    refetchInterval: 2_000,
  });
  const messages = inbox.data?.messages.slice(0, 20) ?? [];
  return (
    <section aria-labelledby="sim-whatsapp-title">
      <h2 id="sim-whatsapp-title">{t("notifications.whatsappTitle")}</h2>
      <ErrorNote error={inbox.error} />
      {inbox.isSuccess && messages.length === 0 && <p>{t("notifications.whatsappNone")}</p>}
      <ul className="list">
        {messages.map((m) => (
          <li key={m.id}>
            <strong>{t("notifications.whatsappTo", { to: m.to, at: formatDateTime(m.received_at) })}</strong>
            <p className="wrap-anywhere">
              <WithLinks text={m.text} />
            </p>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One e-mail of the local mailbox, its text read once (a message does not change). */
function Email({ mail }: { mail: MailSummary }) {
  const { t } = useTranslation();
  const full = useQuery(mailQuery(mail.ID));
  return (
    <li>
      <strong>
        {t("notifications.emailTo", {
          to: mail.To.map((to) => to.Address).join(", "),
          from: mail.From.Name,
          at: formatDateTime(mail.Created),
        })}
      </strong>
      <p>{mail.Subject}</p>
      <ErrorNote error={full.error} />
      {full.data && (
        <p className="wrap-anywhere pre-line">
          <WithLinks text={full.data.Text.trim()} />
        </p>
      )}
    </li>
  );
}

/** The e-mails in the local mailbox, newest first (the WhatsApp simulator's copies are listed above). */
function EmailInbox() {
  const { t } = useTranslation();
  const inbox = useQuery({
    ...mailsQuery(),
    refetchInterval: 2_000,
  });
  const mails = (inbox.data?.messages ?? [])
    .filter((m) => !m.To.some((to) => to.Address.endsWith("@whatsapp.local")))
    .slice(0, 20);
  return (
    <section aria-labelledby="sim-email-title">
      <h2 id="sim-email-title">{t("notifications.emailTitle")}</h2>
      <ErrorNote error={inbox.error} />
      {inbox.isSuccess && mails.length === 0 && <p>{t("notifications.emailNone")}</p>}
      <ul className="list">
        {mails.map((m) => <Email key={m.ID} mail={m} />)}
      </ul>
    </section>
  );
}

export default function SimulatorsPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [last, setLast] = useState<{ event: string; status: number } | null>(null);
  const deliveries = useQuery(deliveriesQuery({ status: "awaiting_payment" }, 50));
  const withdrawals = useQuery(withdrawalsQuery(undefined, 50));
  const send = useMutation({
    mutationFn: fire,
    onSuccess: (status, body) => {
      setLast({ event: body.event, status });
      void client.invalidateQueries({ queryKey: integrationKeys.events() });
    },
  });
  const pix = (deliveries.data?.items ?? []).filter((d) => d.payment);
  const processing = (withdrawals.data?.items ?? []).filter((w) => w.status === "processing");
  return (
    <section aria-labelledby="sim-title">
      <h1 id="sim-title">{t("simulators.title")}</h1>
      <p>{t("simulators.intro")}</p>
      <ErrorNote error={send.error} />
      {last && (
        <Note>
          {t("simulators.sent", {
            event: gatewayEventName(last.event),
            result: last.status === 200 ? t("simulators.accepted") : t("simulators.answered", { status: last.status }),
          })}
        </Note>
      )}
      <h2>{t("simulators.deliveries")}</h2>
      {pix.length === 0 && <p>{t("simulators.none")}</p>}
      <ul className="list">
        {pix.map((d) => (
          <li key={d.id}>
            {d.origin_address} → {d.destination_address} ({formatBRL(d.price as number)}){" "}
            {["PAYMENT_RECEIVED", "PAYMENT_OVERDUE"].map((event) => (
              <button
                key={event}
                type="button"
                disabled={send.isPending}
                onClick={() =>
                  send.mutate({
                    event,
                    object_id: d.payment!.gateway_payment_id,
                    external_reference: d.id,
                    value: d.price as number,
                  })}
              >
                {t("simulators.fire", { event: gatewayEventName(event), id: shortId(d.id) })}
              </button>
            ))}
          </li>
        ))}
      </ul>
      <h2>{t("simulators.withdrawals")}</h2>
      {processing.length === 0 && <p>{t("simulators.none")}</p>}
      <ul className="list">
        {processing.map((w) => (
          <li key={w.id}>
            {formatBRL(w.amount)} → {w.pix_key} {["TRANSFER_DONE", "TRANSFER_FAILED"].map((event) => (
              <button
                key={event}
                type="button"
                disabled={send.isPending}
                onClick={() =>
                  send.mutate({ event, object_id: w.gateway_transfer_id, external_reference: w.id, value: w.amount })}
              >
                {t("simulators.fire", { event: gatewayEventName(event), id: shortId(w.id) })}
              </button>
            ))}
          </li>
        ))}
      </ul>
      <WhatsAppInbox />
      <PushInbox />
      <EmailInbox />
    </section>
  );
}

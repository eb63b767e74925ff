// The webhook audit log: every request the gateway endpoints received, with its result and, in words, what was
// checked and done (the platform's audit note read by src/features/integrations/webhook-detail.ts; a note it does not know is shown
// as the platform wrote it, in English).
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge, ErrorNote, Loading, Pager } from "../../../components/ui.tsx";
import { formatDateTime, gatewayEventName } from "../../../format.ts";
import { i18n } from "../../../i18n/index.ts";
import { useTranslation } from "react-i18next";
import { type DetailReading, readWebhookDetail } from "../webhook-detail.ts";
import { webhookEventsQuery } from "../api/queries.ts";

/** A code of ours or the gateway's in words: the key under `group` when the language files have it. */
function word(group: string, code: string | undefined): string {
  const key = `${group}.${code}`;
  return code && i18n.exists(key) ? String(i18n.t(key as "status.pending")) : code ?? "";
}

/** What a reading's codes are, in words: a status is a withdrawal's in the withdrawals' outcomes, else a delivery's. */
function outcomeValues({ name, values }: NonNullable<DetailReading["outcome"]>) {
  return {
    status: word(name.startsWith("withdrawal") ? "withdrawalStatus" : "status", values.status),
    payment: word("paymentStatus", values.payment),
    event: values.event ? gatewayEventName(values.event) : "",
    kind: word("failureKind", values.kind),
    object: word("webhookDetail.objects", values.object),
  };
}

function WebhookDetail({ detail }: { detail: string | null }) {
  const { t } = useTranslation();
  if (!detail) return null;
  const reading: DetailReading = readWebhookDetail(detail);
  if (!reading.outcome) return <span lang="en">{detail}</span>;
  const parts = [
    ...reading.via.map((via) => t(`webhookDetail.${via}`)),
    reading.gatewayStatus &&
    t("webhookDetail.checked", { status: word("webhookDetail.gatewayStatus", reading.gatewayStatus) }),
    // Every sentence takes the values it names of these.
    t(
      `webhookDetail.outcome.${reading.outcome.name}` as "webhookDetail.outcome.paymentDoesNotApply",
      outcomeValues(reading.outcome),
    ),
  ];
  return <>{parts.filter(Boolean).join(" ")}</>;
}

export default function WebhooksPage() {
  const { t } = useTranslation();
  const [cursors, setCursors] = useState<string[]>([]);
  const query = useQuery({
    ...webhookEventsQuery(cursors.at(-1)),
    refetchInterval: 10_000,
  });
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">{t("webhooks.title")}</h1>
      <ErrorNote error={query.error} />
      {query.isPending ? <Loading /> : (
        <table className="cards">
          <thead>
            <tr>
              <th scope="col">{t("webhooks.received")}</th>
              <th scope="col">{t("webhooks.event")}</th>
              <th scope="col">{t("webhooks.result")}</th>
              <th scope="col">{t("webhooks.object")}</th>
              <th scope="col">{t("webhooks.detail")}</th>
            </tr>
          </thead>
          <tbody>
            {query.data?.items.length === 0 && (
              <tr>
                <td colSpan={5}>{t("webhooks.empty")}</td>
              </tr>
            )}
            {query.data?.items.map((e) => (
              <tr key={e.id}>
                <td data-label={t("webhooks.received")}>
                  <time dateTime={e.received_at}>{formatDateTime(e.received_at)}</time>
                </td>
                <td data-label={t("webhooks.event")}>{gatewayEventName(e.event)}</td>
                <td data-label={t("webhooks.result")}>
                  <Badge value={e.result} text={t(`webhookResult.${e.result}`)} />
                </td>
                <td data-label={t("webhooks.object")} className="code">{e.object_id ?? "—"}</td>
                <td data-label={t("webhooks.detail")} className="hint">
                  <WebhookDetail detail={e.detail ?? null} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}

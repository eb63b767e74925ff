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
import { DataTable } from "../../../components/ui/table/index.ts";

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
        <DataTable
          items={query.data?.items ?? []}
          itemKey={(e) => e.id}
          empty={query.data ? t("webhooks.empty") : undefined}
          columns={[
            {
              header: t("webhooks.received"),
              cell: (e) => <time dateTime={e.received_at}>{formatDateTime(e.received_at)}</time>,
            },
            { header: t("webhooks.event"), cell: (e) => gatewayEventName(e.event) },
            {
              header: t("webhooks.result"),
              cell: (e) => <Badge value={e.result} text={t(`webhookResult.${e.result}`)} />,
            },
            { header: t("webhooks.object"), className: "code", cell: (e) => e.object_id ?? "—" },
            {
              header: t("webhooks.detail"),
              className: "hint",
              cell: (e) => <WebhookDetail detail={e.detail ?? null} />,
            },
          ]}
        />
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}

// The webhook audit log: every request the gateway endpoints received, with its result.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, call } from "../api/client.ts";
import { Badge, ErrorNote, Loading, Pager } from "../components/ui.tsx";
import { formatDateTime, gatewayEventName } from "../format.ts";
import { useTranslation } from "react-i18next";

export default function WebhooksPage() {
  const { t } = useTranslation();
  const [cursors, setCursors] = useState<string[]>([]);
  const query = useQuery({
    queryKey: ["webhook-events", cursors.at(-1)],
    queryFn: () =>
      call(api.GET("/api/v1/webhook-events", { params: { query: { cursor: cursors.at(-1), limit: 20 } } })),
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
                {/* The platform's own audit note, in the words (English) it was written in. */}
                <td data-label={t("webhooks.detail")} lang="en" className="hint">{e.detail ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}

// Deliveries as a paginated table with status and payment filters, live
// through delivery_updated (lib/realtime.tsx updates the cached pages).
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type DeliveryStatus, type PaymentStatus } from "../api/client.ts";
import { Badge, ErrorNote, Loading, Pager, Select } from "../components/ui.tsx";
import { formatBRL, formatDateTime, shortId } from "../format.ts";
import { useTranslation } from "react-i18next";
import { Link } from "../lib/router.tsx";

const STATUSES: DeliveryStatus[] = ["awaiting_payment", "pending", "accepted", "in_progress", "completed", "cancelled"];
const PAYMENTS: PaymentStatus[] = ["pending", "received", "confirmed", "refunded", "overdue", "invoiced"];

export function DeliveriesPage() {
  const { t } = useTranslation();
  const [status, setStatus] = useState("");
  const [payment, setPayment] = useState("");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: ["deliveries", { status: status || undefined, payment_status: payment || undefined, cursor }],
    queryFn: () =>
      call(api.GET("/api/v1/deliveries", {
        params: {
          query: {
            limit: 20,
            cursor,
            status: (status || undefined) as DeliveryStatus | undefined,
            payment_status: (payment || undefined) as PaymentStatus | undefined,
          },
        },
      })),
  });
  const items = query.data?.items ?? [];
  const drivers = useQuery({
    queryKey: ["drivers", "all-active"],
    queryFn: () => call(api.GET("/api/v1/drivers", { params: { query: { limit: 100 } } })),
  });
  const driverName = (
    id: string | null,
  ) => (id ? drivers.data?.items.find((d) => d.id === id)?.name ?? shortId(id) : "—");

  return (
    <section aria-labelledby="deliveries-title">
      <div className="heading">
        <h1 id="deliveries-title">{t("deliveries.title")}</h1>
        <Link className="button" to="/deliveries/new">{t("nav.newDelivery")}</Link>
      </div>
      <div className="filters">
        <Select
          label={t("deliveries.filterStatus")}
          value={status}
          onChange={(e) => (setStatus(e.target.value), setCursors([]))}
          options={[["", t("deliveries.any")], ...STATUSES.map((s) => [s, t(`status.${s}`)] as const)]}
        />
        <Select
          label={t("deliveries.filterPayment")}
          value={payment}
          onChange={(e) => (setPayment(e.target.value), setCursors([]))}
          options={[["", t("deliveries.any")], ...PAYMENTS.map((s) => [s, t(`paymentStatus.${s}`)] as const)]}
        />
      </div>
      <ErrorNote error={query.error} />
      {query.isPending ? <Loading /> : (
        <table className="cards">
          <caption className="sr-only">{t("deliveries.title")}</caption>
          <thead>
            <tr>
              <th scope="col">{t("deliveries.columns.created")}</th>
              <th scope="col">{t("deliveries.columns.route")}</th>
              <th scope="col">{t("deliveries.columns.status")}</th>
              <th scope="col">{t("deliveries.columns.payment")}</th>
              <th scope="col">{t("deliveries.columns.price")}</th>
              <th scope="col">{t("deliveries.columns.driver")}</th>
            </tr>
          </thead>
          <tbody>
            {items.length === 0 && (
              <tr>
                <td colSpan={6}>{t("deliveries.empty")}</td>
              </tr>
            )}
            {items.map((d) => (
              <tr key={d.id}>
                <td data-label={t("deliveries.columns.created")}>
                  <Link to={`/deliveries/${d.id}`} aria-label={t("deliveries.open", { id: shortId(d.id) })}>
                    {formatDateTime(d.created_at)}
                  </Link>
                </td>
                <td data-label={t("deliveries.columns.route")}>{d.origin_address} → {d.destination_address}</td>
                <td data-label={t("deliveries.columns.status")}>
                  <Badge value={d.status} text={t(`status.${d.status}`)} />
                </td>
                <td data-label={t("deliveries.columns.payment")}>
                  {t(`paymentMethod.${d.payment_method}`)}: {t(`paymentStatus.${d.payment_status}`)}{" "}
                  {d.refund_due && <Badge value="refund_due" text={t("refundDue")} />}
                </td>
                <td data-label={t("deliveries.columns.price")}>{formatBRL(d.price as number)}</td>
                <td data-label={t("deliveries.columns.driver")}>{driverName(d.driver_id ?? null)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}

// Deliveries as a paginated table with a search box and filters kept in the address (so a filtered list can be
// reloaded or shared), live through delivery_updated (lib/realtime.tsx updates the cached pages). Late
// deliveries stand out; the list goes out as CSV and comes in from one (DeliveryCsv.tsx).
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { type Delivery, type DeliveryStatus, type PaymentStatus } from "../../../api/client.ts";
import { Badge, DateField, ErrorNote, Field, Loading, Pager, Select } from "../../../components/ui.tsx";
import { formatBRL, formatDateTime, shortId } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { driverLabel } from "../../drivers/drivers.ts";
import { Link, useSearchParams } from "../../../lib/router.tsx";
import { CsvExport, CsvImport } from "./DeliveryCsv.tsx";
import { deliveriesQuery } from "../api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";
import { DataTable } from "../../../components/ui/table/index.ts";

const STATUSES: DeliveryStatus[] = [
  "awaiting_payment",
  "pending",
  "accepted",
  "in_progress",
  "completed",
  "failed",
  "cancelled",
];
const PAYMENTS: PaymentStatus[] = ["pending", "received", "confirmed", "refunded", "overdue", "invoiced"];

/** The filters the address holds, as GET /api/v1/deliveries names them. */
const FILTERS = ["q", "status", "payment_status", "driver_id", "from", "to", "late"] as const;
export type DeliveryFilterValues = Partial<Record<(typeof FILTERS)[number], string>>;

/** A delivery's window in words: both ends, or the one it has; `labelled`, led by what it is (in a list). */
export function WindowText(
  { delivery, labelled = true }: { delivery: Pick<Delivery, "window_start" | "window_end">; labelled?: boolean },
) {
  const { t } = useTranslation();
  const { window_start: start, window_end: end } = delivery;
  if (!start && !end) return null;
  const text = start && end
    ? t("lifecycle.windowRange", { start: formatDateTime(start), end: formatDateTime(end) })
    : end
    ? t("lifecycle.windowUntil", { end: formatDateTime(end) })
    : t("lifecycle.windowFrom", { start: formatDateTime(start) });
  return <span className="window">{labelled ? `${t("lifecycle.window")}: ${text}` : text}</span>;
}

/** The status, with what else a dispatcher must see at a glance: where dispatch has it, late, a later attempt. */
export function StatusBadges({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const dispatch = delivery.status === "pending" ? delivery.dispatch_status : null;
  return (
    <>
      <Badge value={delivery.status} text={t(`status.${delivery.status}`)} />{" "}
      {dispatch && dispatch !== "assigned" && (
        <Badge value={`dispatch-${dispatch}`} text={t(`dispatch.status.${dispatch}`)} />
      )} {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}{" "}
      {delivery.attempts > 1 && <Badge value="attempt" text={t("lifecycle.attempt", { count: delivery.attempts })} />}
    </>
  );
}

export function DeliveriesPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const filters: DeliveryFilterValues = Object.fromEntries(
    FILTERS.map((name) => [name, params.get(name) ?? undefined]).filter(([, value]) => value),
  );
  const [text, setText] = useState(filters.q ?? "");
  const [tooShort, setTooShort] = useState(false);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const setFilter = (name: (typeof FILTERS)[number], value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next);
    setCursors([]);
  };
  const search = (event: FormEvent) => {
    event.preventDefault();
    const q = text.trim();
    setTooShort(q.length > 0 && q.length < 3);
    if (q.length === 0 || q.length >= 3) setFilter("q", q);
  };
  const query = useQuery(deliveriesQuery({ ...filters, cursor }, 20));
  const items = query.data?.items ?? [];
  const drivers = useQuery(driverNamesQuery());
  const driverName = (
    id: string | null,
  ) => (id ? drivers.data?.items.find((d) => d.id === id)?.name ?? shortId(id) : "—");

  return (
    <section aria-labelledby="deliveries-title">
      <div className="heading">
        <h1 id="deliveries-title">{t("deliveries.title")}</h1>
        <Link className="button" to="/deliveries/new">{t("nav.newDelivery")}</Link>
        <CsvExport filters={filters} />
      </div>
      <form className="search" role="search" onSubmit={search}>
        <Field
          label={t("lifecycle.search")}
          type="search"
          value={text}
          placeholder={t("lifecycle.searchHint")}
          onChange={(e) => setText(e.target.value)}
          problem={tooShort ? t("lifecycle.searchTooShort") : null}
          showProblem={tooShort}
          maxLength={100}
        />
        <button type="submit">{t("lifecycle.search")}</button>
      </form>
      <div className="filters">
        <Select
          label={t("deliveries.filterStatus")}
          value={filters.status ?? ""}
          onChange={(e) => setFilter("status", e.target.value)}
          options={[["", t("deliveries.any")], ...STATUSES.map((s) => [s, t(`status.${s}`)] as const)]}
        />
        <Select
          label={t("deliveries.filterPayment")}
          value={filters.payment_status ?? ""}
          onChange={(e) => setFilter("payment_status", e.target.value)}
          options={[["", t("deliveries.any")], ...PAYMENTS.map((s) => [s, t(`paymentStatus.${s}`)] as const)]}
        />
        <Select
          label={t("lifecycle.filterDriver")}
          value={filters.driver_id ?? ""}
          onChange={(e) => setFilter("driver_id", e.target.value)}
          options={[
            ["", t("deliveries.any")],
            ...(drivers.data?.items ?? []).map((d, _, all) => [d.id, driverLabel(d, all)] as const),
          ]}
        />
        <DateField
          label={t("lifecycle.from")}
          day={filters.from ?? ""}
          onDay={(day) => day !== null && setFilter("from", day)}
        />
        <DateField
          label={t("lifecycle.to")}
          day={filters.to ?? ""}
          onDay={(day) => day !== null && setFilter("to", day)}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={filters.late === "true"}
            onChange={(e) => setFilter("late", e.target.checked ? "true" : "")}
          />{" "}
          {t("lifecycle.onlyLate")}
        </label>
        {Object.keys(filters).length > 0 && (
          <button
            type="button"
            onClick={() => (setText(""), setParams(new URLSearchParams()), setCursors([]))}
          >
            {t("lifecycle.clearFilters")}
          </button>
        )}
      </div>
      <ErrorNote error={query.error} />
      {query.isPending ? <Loading /> : (
        <DataTable
          caption={t("deliveries.title")}
          items={items}
          itemKey={(d) => d.id}
          rowClassName={(d) => (d.late ? "late" : undefined)}
          empty={t("deliveries.empty")}
          columns={[
            {
              header: t("deliveries.columns.created"),
              cell: (d) => (
                <Link to={`/deliveries/${d.id}`} aria-label={t("deliveries.open", { id: shortId(d.id) })}>
                  {formatDateTime(d.created_at)}
                </Link>
              ),
            },
            {
              header: t("deliveries.columns.route"),
              cell: (d) => (
                <>
                  {d.origin_address} → {d.destination_address}
                  {d.recipient_name && <div className="muted">{d.recipient_name}</div>}
                  <div className="muted">
                    <WindowText delivery={d} />
                  </div>
                </>
              ),
            },
            { header: t("deliveries.columns.status"), cell: (d) => <StatusBadges delivery={d} /> },
            {
              header: t("deliveries.columns.payment"),
              cell: (d) => (
                <>
                  {t(`paymentMethod.${d.payment_method}`)}: {t(`paymentStatus.${d.payment_status}`)}{" "}
                  {d.refund_due && <Badge value="refund_due" text={t("refundDue")} />}
                </>
              ),
            },
            { header: t("deliveries.columns.price"), cell: (d) => formatBRL(d.price as number) },
            { header: t("deliveries.columns.driver"), cell: (d) => driverName(d.driver_id ?? null) },
          ]}
        />
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
      <CsvImport />
    </section>
  );
}

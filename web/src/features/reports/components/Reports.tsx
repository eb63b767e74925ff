// Reports (GET /api/v1/reports/summary): how the company's deliveries went over a chosen period of São Paulo days:
// the figures, deliveries per day by outcome (completed, failed, cancelled, still open) and revenue per day as charts
// (Chart.js, loaded with this page only), and the same numbers as a table for screen readers and for copying.
import { useQuery } from "@tanstack/react-query";
import { BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { type FormEvent, useState } from "react";
import { Bar } from "react-chartjs-2";
import { useTranslation } from "react-i18next";
import { DateField, ErrorNote, Loading } from "../../../components/ui.tsx";
import { formatBRL, locale, timeZone } from "../../../format.ts";
import { dayText } from "../../../lib/dates.ts";
import { useSearchParams } from "../../../lib/router.tsx";
import { reportQuery } from "../api/queries.ts";

Chart.register(BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** A São Paulo day (YYYY-MM-DD), `back` days before today. */
function dayBefore(back: number): string {
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: timeZone() }).format(new Date());
  const [y, m, d] = today.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d - back)).toISOString().slice(0, 10);
}

/** dd/mm of a YYYY-MM-DD day. */
const shortDay = (day: string) => `${day.slice(8, 10)}/${day.slice(5, 7)}`;
const percent = (share: number) =>
  new Intl.NumberFormat(locale(), { style: "percent", maximumFractionDigits: 1 }).format(share);
const decimal = (value: number) => new Intl.NumberFormat(locale(), { maximumFractionDigits: 1 }).format(value);

export default function ReportsPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const from = params.get("from") ?? dayBefore(29);
  const to = params.get("to") ?? dayBefore(0);
  const [draft, setDraft] = useState<{ from: string | null; to: string | null }>({ from, to });
  const [submitted, setSubmitted] = useState(false);
  const report = useQuery(reportQuery(from, to));
  const choose = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (draft.from && draft.to) setParams(new URLSearchParams({ from: draft.from, to: draft.to }));
  };
  const data = report.data;
  const days = data?.by_day ?? [];
  const figures: [string, string][] = data
    ? [
      [t("lifecycle.created"), decimal(data.created)],
      [t("lifecycle.completed"), decimal(data.completed)],
      [t("lifecycle.cancelled"), decimal(data.cancelled)],
      [t("lifecycle.failed"), decimal(data.failed)],
      [t("lifecycle.onTimeRate"), data.on_time_rate == null ? t("lifecycle.noWindow") : percent(data.on_time_rate)],
      [
        t("lifecycle.avgTime"),
        data.avg_delivery_minutes == null ? "—" : t("lifecycle.minutes", { value: decimal(data.avg_delivery_minutes) }),
      ],
      [t("lifecycle.revenue"), formatBRL(data.revenue as number)],
      [t("lifecycle.earnings"), formatBRL(data.driver_earnings as number)],
    ]
    : [];

  return (
    <section aria-labelledby="reports-title">
      <h1 id="reports-title">{t("lifecycle.reports")}</h1>
      <form className="filters" onSubmit={choose} aria-label={t("lifecycle.period")}>
        <DateField
          label={t("lifecycle.from")}
          day={from}
          required
          showProblem={submitted}
          onDay={(day) => setDraft((d) => ({ ...d, from: day || null }))}
        />
        <DateField
          label={t("lifecycle.to")}
          day={to}
          required
          showProblem={submitted}
          onDay={(day) => setDraft((d) => ({ ...d, to: day || null }))}
        />
        <button type="submit">{t("lifecycle.show")}</button>
      </form>
      <ErrorNote error={report.error} />
      {report.isPending ? <Loading /> : data && (
        <>
          <dl className="figures">
            {figures.map(([label, value]) => (
              <div key={label} className="card">
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          <div className="two">
            <figure className="card chart">
              <figcaption>{t("lifecycle.perDay")}</figcaption>
              <div className="chart-box">
                <Bar
                  aria-label={t("lifecycle.perDay")}
                  role="img"
                  data={{
                    labels: days.map((d) => shortDay(d.day)),
                    datasets: [
                      {
                        label: t("lifecycle.completed"),
                        data: days.map((d) => d.completed),
                        backgroundColor: "#16a34a",
                      },
                      { label: t("lifecycle.failed"), data: days.map((d) => d.failed), backgroundColor: "#dc2626" },
                      {
                        label: t("lifecycle.cancelled"),
                        data: days.map((d) => d.cancelled),
                        backgroundColor: "#64748b",
                      },
                      {
                        label: t("lifecycle.open"),
                        data: days.map((d) => d.created - d.completed - d.failed - d.cancelled),
                        backgroundColor: "#f59e0b",
                      },
                    ],
                  }}
                  options={{
                    locale: locale(),
                    // As tall on a phone as on a desktop: the box's height, not the width's half.
                    maintainAspectRatio: false,
                    animation: false,
                    scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
                  }}
                />
              </div>
            </figure>
            <figure className="card chart">
              <figcaption>{t("lifecycle.revenuePerDay")}</figcaption>
              <div className="chart-box">
                <Bar
                  aria-label={t("lifecycle.revenuePerDay")}
                  role="img"
                  data={{
                    labels: days.map((d) => shortDay(d.day)),
                    datasets: [{
                      label: t("lifecycle.revenue"),
                      data: days.map((d) => d.revenue as number),
                      backgroundColor: "#2563eb",
                    }],
                  }}
                  options={{
                    locale: locale(),
                    // As tall on a phone as on a desktop: the box's height, not the width's half.
                    maintainAspectRatio: false,
                    animation: false,
                    scales: { y: { beginAtZero: true, ticks: { callback: (value) => formatBRL(Number(value)) } } },
                    plugins: { tooltip: { callbacks: { label: (item) => formatBRL(item.parsed.y) } } },
                  }}
                />
              </div>
            </figure>
          </div>
          <div className="scroll-box">
            <table>
              <caption>{t("lifecycle.tableCaption")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("lifecycle.day")}</th>
                  <th scope="col">{t("lifecycle.created")}</th>
                  <th scope="col">{t("lifecycle.completed")}</th>
                  <th scope="col">{t("lifecycle.failed")}</th>
                  <th scope="col">{t("lifecycle.cancelled")}</th>
                  <th scope="col">{t("lifecycle.revenue")}</th>
                </tr>
              </thead>
              <tbody>
                {days.filter((d) => d.created > 0).map((d) => (
                  <tr key={d.day}>
                    <th scope="row">{dayText(d.day)}</th>
                    <td>{d.created}</td>
                    <td>{d.completed}</td>
                    <td>{d.failed}</td>
                    <td>{d.cancelled}</td>
                    <td>{formatBRL(d.revenue as number)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

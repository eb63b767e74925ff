// A driver's day in the panel (GET /api/v1/drivers/{id}/day, DESIGN.md §11.2): the figures of the day (time online,
// distance, completed, not delivered, returned, earnings, cash) and its deliveries as stops on a map and a list with
// their times, in the company's time zone.
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { useTranslation } from "react-i18next";
import type { MapMarker } from "../../../components/MapView.tsx";
import { Badge, DateField, ErrorNote, Loading } from "../../../components/ui.tsx";
import { formatBRL, formatKm, formatTime, timeZone } from "../../../format.ts";
import { Link } from "../../../lib/router.tsx";
import { driverDayQuery, driverQuery } from "../api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

const today = () => new Intl.DateTimeFormat("en-CA", { timeZone: timeZone() }).format(new Date());

export default function DriverDayPage({ id }: { id: string }) {
  const { t } = useTranslation();
  const [day, setDay] = useState<string | null>(today());
  const date = day || today();
  const driver = useQuery(driverQuery(id));
  const query = useQuery({
    ...driverDayQuery(id, date),
    enabled: day !== null,
  });
  const data = query.data;
  const markers: MapMarker[] = (data?.deliveries ?? []).map((d, i) => ({
    id: d.id,
    kind: "destination" as const,
    lat: d.destination.lat,
    lng: d.destination.lng,
    label: `${i + 1}. ${d.destination_address}`,
  }));
  /** When a delivery ended (or was picked up, while it goes on). */
  const at = (d: NonNullable<typeof data>["deliveries"][number]) =>
    d.completed_at ?? d.failed_at ?? d.returned_at ?? d.started_at ?? d.accepted_at;
  return (
    <section aria-labelledby="driver-day-title">
      <p>
        <Link to="/drivers">{t("drivers.title")}</Link>
      </p>
      <h1 id="driver-day-title">{t("operations.driverDay", { name: driver.data?.name ?? "" })}</h1>
      <DateField label={t("operations.day")} day={day} onDay={setDay} />
      <ErrorNote error={query.error ?? driver.error} />
      {query.isPending ? <Loading /> : data && (
        <>
          <dl className="facts driver-day-figures">
            <dt>{t("operations.onlineMinutes")}</dt>
            <dd>{t("operations.minutes", { count: data.online_minutes })}</dd>
            <dt>{t("operations.distance")}</dt>
            <dd>{formatKm(data.distance_m)}</dd>
            <dt>{t("operations.completed")}</dt>
            <dd>{data.completed}</dd>
            <dt>{t("operations.failed")}</dt>
            <dd>{data.failed}</dd>
            <dt>{t("operations.returned")}</dt>
            <dd>{data.returned}</dd>
            <dt>{t("operations.earnings")}</dt>
            <dd>{formatBRL(data.earnings)}</dd>
            <dt>{t("operations.cash")}</dt>
            <dd>{formatBRL(data.cash_collected)}</dd>
          </dl>
          <h2>{t("operations.stops")}</h2>
          {data.deliveries.length === 0 ? <p>{t("operations.noStops")}</p> : (
            <>
              <Suspense fallback={<Loading />}>
                <MapView markers={markers} lines={[]} label={t("operations.map")} />
              </Suspense>
              <ol className="driver-day-stops">
                {data.deliveries.map((d) => (
                  <li key={d.id}>
                    <Link to={`/deliveries/${d.id}`}>{d.destination_address}</Link>{" "}
                    <Badge value={d.status} text={t(`status.${d.status}`)} />{" "}
                    <span>{t("operations.time")}: {formatTime(at(d))}</span>
                  </li>
                ))}
              </ol>
            </>
          )}
        </>
      )}
    </section>
  );
}

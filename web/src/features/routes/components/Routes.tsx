// The day's routes (issue 32): the dispatcher chooses the pending deliveries (by default every one in no route) and
// the drivers (the active ones, with their vehicle), plans them (POST /routes/plan), sees each route in its own
// colour on the map with its stops numbered, moves a stop up or down or to another route (PUT /routes/{id}/stops,
// whose answer names what the new order breaks), and publishes or cancels each route. Routes under way follow the
// drivers: the page reads them again whenever a delivery of the company changes (delivery_updated) or a plan job
// moves (plan_progress).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Schemas } from "../../../api/client.ts";
import { Badge, ConfirmDialog, ErrorNote, Loading } from "../../../components/ui.tsx";
import type { MapLine, MapMarker } from "../../../components/MapView.tsx";
import { formatClock, formatKm, formatMinutes, timeZone } from "../../../format.ts";
import { useRealtimeEvent } from "../../../lib/realtime.tsx";
import { WindowText } from "../../deliveries/components/Deliveries.tsx";
import { routeKeys } from "../api/keys.ts";
import { dayRoutesQuery } from "../api/queries.ts";
import { deliveryKeys } from "../../deliveries/api/keys.ts";
import { deliveriesQuery } from "../../deliveries/api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

type Route = Schemas["Route"];
type Stop = Schemas["RouteStop"];
type PlanResult = Schemas["RoutePlanResult"];
type StopRef = { delivery_id: string; kind: "pickup" | "dropoff" };

/** One colour per route, told apart on the map and beside each route's name. */
export const ROUTE_COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f"];

const LIVE = new Set(["draft", "published", "in_progress"]);
const today = () => new Intl.DateTimeFormat("en-CA", { timeZone: timeZone() }).format(new Date());
const refs = (stops: Stop[]): StopRef[] => stops.map((s) => ({ delivery_id: s.delivery_id, kind: s.kind }));

function useRoutesData(date: string) {
  const routes = useQuery(dayRoutesQuery(date));
  const pending = useQuery(deliveriesQuery({ status: "pending" }, 100));
  const drivers = useQuery(driverNamesQuery());
  return { routes, pending, drivers };
}

export default function RoutesPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  // The São Paulo day to plan (default today): a later day's shifts run from its start to its end, whatever the hour.
  const [date, setDate] = useState(today);
  const { routes, pending, drivers } = useRoutesData(date);
  const [chosenDeliveries, setChosenDeliveries] = useState<Set<string> | null>(null);
  const [chosenDrivers, setChosenDrivers] = useState<Set<string> | null>(null);
  const [result, setResult] = useState<PlanResult | null>(null);

  useRealtimeEvent((event) => {
    if (event === "delivery_updated" || event === "plan_progress") {
      void client.invalidateQueries({ queryKey: routeKeys.lists() });
    }
  });

  const allRoutes = routes.data?.items ?? [];
  const shown = allRoutes.filter((r) => r.status !== "cancelled");
  const routed = new Set(allRoutes.filter((r) => LIVE.has(r.status)).flatMap((r) => r.stops.map((s) => s.delivery_id)));
  const candidates = (pending.data?.items ?? []).filter((d) => !routed.has(d.id));
  const activeDrivers = (drivers.data?.items ?? []).filter((d) => d.active);
  const deliveryIds = chosenDeliveries
    ? candidates.filter((d) => chosenDeliveries.has(d.id)).map((d) => d.id)
    : candidates.map((d) => d.id);
  const driverIds = chosenDrivers
    ? activeDrivers.filter((d) => chosenDrivers.has(d.id)).map((d) => d.id)
    : activeDrivers.map((d) => d.id);
  const driverName = (id: string) => drivers.data?.items.find((d) => d.id === id)?.name ?? id.slice(0, 8);
  const colour = (route: Route) => ROUTE_COLOURS[shown.indexOf(route) % ROUTE_COLOURS.length];

  const refresh = () => {
    void client.invalidateQueries({ queryKey: routeKeys.lists() });
    void client.invalidateQueries({ queryKey: deliveryKeys.lists() });
  };
  const plan = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/routes/plan", {
        body: { delivery_ids: deliveryIds, date, drivers: driverIds.map((driver_id) => ({ driver_id })) },
      })) as Promise<PlanResult>,
    onSuccess: (answer) => {
      setResult(answer);
      setChosenDeliveries(null);
      refresh();
    },
  });

  const toggle = (set: Set<string> | null, all: string[], id: string) => {
    const next = new Set(set ?? all);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    return next;
  };

  const { markers, lines } = useMemo(() => {
    const markers: MapMarker[] = [];
    const lines: MapLine[] = [];
    shown.forEach((route, index) => {
      const color = ROUTE_COLOURS[index % ROUTE_COLOURS.length];
      lines.push({
        id: route.id,
        kind: "route",
        color,
        points: [[route.start.lat, route.start.lng], ...route.stops.map((s) => [s.lat, s.lng] as [number, number])],
      });
      for (const stop of route.stops) {
        markers.push({
          id: `${route.id}:${stop.seq}`,
          lat: stop.lat,
          lng: stop.lng,
          kind: stop.kind === "pickup" ? "origin" : "destination",
          text: String(stop.seq),
          color,
          label: `${driverName(route.driver_id)} ${stop.seq}. ${
            stop.kind === "pickup" ? t("routes.pickup") : t("routes.dropoff")
          }: ${stop.address}`,
        });
      }
    });
    return { markers, lines };
    // driverName reads the drivers' list, which `drivers.data` stands for.
  }, [shown.map((r) => r.id + r.updated_at).join(), drivers.data, t]);

  return (
    <section aria-labelledby="routes-title" className="routes-page">
      <h1 id="routes-title">{t("routes.title")}</h1>
      <div className="routes-plan card">
        <label className="routes-date">
          {t("routes.date")}{" "}
          <input
            type="date"
            value={date}
            min={today()}
            onChange={(e) => {
              if (e.target.value) {
                setDate(e.target.value);
                setResult(null);
              }
            }}
          />
        </label>
        <p className="muted">{t("routes.dateHint")}</p>
        <details>
          <summary>
            {t("routes.deliveries")}: {t("routes.deliveriesCount", {
              selected: deliveryIds.length,
              count: candidates.length,
            })}
          </summary>
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setChosenDeliveries(null)}>
              {t("routes.all")}
            </button>
            <button type="button" className="secondary" onClick={() => setChosenDeliveries(new Set())}>
              {t("routes.none")}
            </button>
          </div>
          {pending.isPending
            ? <Loading />
            : candidates.length === 0
            ? <p>{t("routes.noDeliveries")}</p>
            : (
              <ul className="routes-choices">
                {candidates.map((d) => (
                  <li key={d.id}>
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={deliveryIds.includes(d.id)}
                        onChange={() =>
                          setChosenDeliveries(toggle(chosenDeliveries, candidates.map((c) => c.id), d.id))}
                      />{" "}
                      {d.destination_address} <WindowText delivery={d} />
                    </label>
                  </li>
                ))}
              </ul>
            )}
        </details>
        <fieldset className="routes-drivers">
          <legend>{t("routes.drivers")}</legend>
          {drivers.isPending ? <Loading /> : activeDrivers.length === 0 ? <p>{t("routes.noDrivers")}</p> : (
            activeDrivers.map((d) => (
              <label key={d.id} className="check">
                <input
                  type="checkbox"
                  checked={driverIds.includes(d.id)}
                  onChange={() => setChosenDrivers(toggle(chosenDrivers, activeDrivers.map((a) => a.id), d.id))}
                />{" "}
                {d.name}{" "}
                <span className="muted">
                  ({t("routes.vehicle", {
                    type: t(`routes.vehicleType.${d.vehicle.type}`),
                    count: d.vehicle.capacity,
                  })}
                  {d.vehicle.plate ? `, ${d.vehicle.plate}` : ""})
                </span>
              </label>
            ))
          )}
        </fieldset>
        <button
          type="button"
          disabled={plan.isPending || deliveryIds.length === 0 || driverIds.length === 0}
          onClick={() => plan.mutate()}
        >
          {plan.isPending ? t("routes.planning") : t("routes.plan")}
        </button>
        <ErrorNote error={plan.error} />
        {result && <PlanSummary result={result} />}
      </div>
      <ErrorNote error={routes.error ?? pending.error ?? drivers.error} />
      {shown.length > 0 && (
        <Suspense fallback={<Loading />}>
          <MapView markers={markers} lines={lines} label={t("routes.map")} fitKey={shown.map((r) => r.id).join()} />
        </Suspense>
      )}
      <h2>{t("routes.list")}</h2>
      {routes.isPending
        ? <Loading />
        : shown.length === 0
        ? <p>{t("routes.noRoutes")}</p>
        : (
          <div className="routes-grid">
            {shown.map((route) => (
              <RouteCard
                key={route.id}
                route={route}
                colour={colour(route)}
                driver={driverName(route.driver_id)}
                others={shown.filter((r) => r.id !== route.id && r.status === "draft").map((r) => ({
                  id: r.id,
                  name: driverName(r.driver_id),
                  stops: refs(r.stops),
                }))}
                onChanged={refresh}
              />
            ))}
          </div>
        )}
    </section>
  );
}

function PlanSummary({ result }: { result: PlanResult }) {
  const { t } = useTranslation();
  return (
    <div className="plan-result" role="status">
      <p>
        {t("routes.result", {
          seconds: (result.computed_ms / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 }),
          engine: t(`routes.engine.${result.engine}`),
        })}
      </p>
      {result.engine_error && <p className="muted">{t("routes.engineError", { why: result.engine_error })}</p>}
      {result.unassigned.length > 0 && (
        <details open>
          <summary>{t("routes.unassigned", { count: result.unassigned.length })}</summary>
          <ul>
            {result.unassigned.map((u) => (
              <li key={u.delivery_id}>
                <a href={`/deliveries/${u.delivery_id}`}>{u.delivery_id.slice(0, 8)}</a>:{" "}
                {t(`routes.reason.${u.reason ?? "none"}`)}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

function RouteCard(
  { route, colour, driver, others, onChanged }: {
    route: Route;
    colour: string;
    driver: string;
    others: { id: string; name: string; stops: StopRef[] }[];
    onChanged: () => void;
  },
) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const put = useMutation({
    mutationFn: ({ id, stops }: { id: string; stops: StopRef[] }) =>
      call(api.PUT("/api/v1/routes/{id}/stops", { params: { path: { id } }, body: { stops } })),
    onSettled: onChanged,
  });
  const publish = useMutation({
    mutationFn: () => call(api.POST("/api/v1/routes/{id}/publish", { params: { path: { id: route.id } } })),
    onSettled: onChanged,
  });
  const cancel = useMutation({
    mutationFn: () => call(api.POST("/api/v1/routes/{id}/cancel", { params: { path: { id: route.id } } })),
    onSettled: onChanged,
  });
  const editable = route.status === "draft" || route.status === "published";
  const busy = put.isPending || publish.isPending || cancel.isPending;
  const done = route.stops.filter((s) => s.status !== "pending").length;

  const move = (index: number, by: -1 | 1) => {
    const stops = refs(route.stops);
    const [stop] = stops.splice(index, 1);
    stops.splice(index + by, 0, stop);
    put.mutate({ id: route.id, stops });
  };
  const moveTo = (deliveryId: string, targetId: string) => {
    const target = others.find((o) => o.id === targetId);
    if (!target) return;
    put.mutate({
      id: target.id,
      stops: [...target.stops, { delivery_id: deliveryId, kind: "pickup" }, {
        delivery_id: deliveryId,
        kind: "dropoff",
      }],
    });
  };

  return (
    <article className="card route-card" data-route={route.id} aria-labelledby={`route-${route.id}`}>
      <header className="heading">
        <h3 id={`route-${route.id}`}>
          <span className="route-swatch" style={{ background: colour }} aria-hidden="true" />
          {t("routes.route", { driver })}
        </h3>
        <Badge value={route.status} text={t(`routes.status.${route.status}`)} />
      </header>
      <p className="muted">
        {t("routes.summary", {
          stops: route.stops.length,
          km: formatKm(route.distance_m),
          minutes: formatMinutes(route.duration_s),
          from: formatClock(route.starts_at),
          to: formatClock(route.ends_at),
        })}
        {route.status !== "draft" && ` · ${t("routes.progress", { done, count: route.stops.length })}`}
      </p>
      {route.violations.length > 0 && (
        <div className="warning" role="alert">
          <p>{t("routes.violations")}</p>
          <ul>
            {route.violations.map((v, i) => <li key={i}>{t(`routes.violation.${v.kind}`, { seq: v.seq })}</li>)}
          </ul>
        </div>
      )}
      <ErrorNote error={put.error ?? publish.error ?? cancel.error} />
      <ol className="route-stops">
        {route.stops.map((stop, index) => (
          <li key={`${stop.delivery_id}:${stop.kind}`} className={`route-stop route-stop-${stop.status}`}>
            <span className="route-stop-text">
              <strong>{stop.seq}.</strong> {stop.kind === "pickup" ? t("routes.pickup") : t("routes.dropoff")}
              {stop.recipient_name && stop.kind === "dropoff" ? ` (${stop.recipient_name})` : ""}: {stop.address}
              <span className="muted">
                {" "}
                {formatClock(stop.arrival_at)}
                {stop.status !== "pending" && ` · ${t(`routes.stopStatus.${stop.status}`)}`}
              </span>
            </span>
            {editable && stop.status === "pending" && (
              <span className="route-stop-actions">
                <button
                  type="button"
                  className="secondary small"
                  disabled={busy || index === 0}
                  aria-label={`${t("routes.up")} ${stop.seq}`}
                  onClick={() => move(index, -1)}
                >
                  ↑
                </button>
                <button
                  type="button"
                  className="secondary small"
                  disabled={busy || index === route.stops.length - 1}
                  aria-label={`${t("routes.down")} ${stop.seq}`}
                  onClick={() =>
                    move(index, 1)}
                >
                  ↓
                </button>
                {route.status === "draft" && others.length > 0 && (
                  <select
                    aria-label={t("routes.moveToLabel", { seq: stop.seq })}
                    value=""
                    disabled={busy}
                    onChange={(e) => moveTo(stop.delivery_id, e.target.value)}
                  >
                    <option value="">{t("routes.moveTo")}</option>
                    {others.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
                  </select>
                )}
              </span>
            )}
          </li>
        ))}
      </ol>
      <div className="actions">
        {route.status === "draft" && (
          <button type="button" disabled={busy} onClick={() => publish.mutate()}>{t("routes.publish")}</button>
        )}
        {LIVE.has(route.status) && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() => setConfirming(true)}
          >
            {t("routes.cancel")}
          </button>
        )}
      </div>
      <ConfirmDialog
        open={confirming}
        message={t("routes.cancelConfirm")}
        confirm={t("routes.cancel")}
        onConfirm={() => {
          setConfirming(false);
          cancel.mutate();
        }}
        onClose={() => setConfirming(false)}
      />
    </article>
  );
}

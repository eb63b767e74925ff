// The driver's route (issue 32), once the company published it: its stops in order, pickups and drop-offs, the next
// one first and highlighted, each with its address, window, the recipient of a drop-off and a link to the phone's
// maps app. The route comes from GET /routes, kept on the device like the shift (lib/persist.ts) and replaced by
// route_published and route_updated (lib/realtime.tsx); what the driver did that has not reached the server yet (a
// start or a completion waiting in the queue) already counts as done here.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import type { Schemas } from "../../../api/client.ts";
import { formatClock } from "../../../format.ts";
import { useAuth } from "../../../lib/auth.tsx";
import { directionsUrl } from "../contact.ts";
import type { ShiftDelivery } from "../shift.ts";
import { driverRoutesQuery } from "../../routes/api/queries.ts";

type Route = Schemas["Route"];
type Stop = Schemas["RouteStop"];

/** The driver's published or in-progress route, if any. */
export function useMyRoute(): Route | null {
  const { identity } = useAuth();
  const driverId = identity?.driverId ?? undefined;
  const query = useQuery({
    ...driverRoutesQuery(driverId),
    enabled: !!driverId,
  });
  return query.data?.items.find((r) => r.status === "published" || r.status === "in_progress") ?? null;
}

/** A stop's status with the driver's queued actions on top: a start queued is its pickup done, a completion its drop-off. */
export function stopStatus(stop: Stop, active: ShiftDelivery[]): Stop["status"] {
  if (stop.status !== "pending") return stop.status;
  const item = active.find((a) => a.delivery.id === stop.delivery_id);
  if (!item) return stop.status;
  if (stop.kind === "pickup" && item.status === "in_progress") return "done";
  if (stop.kind === "dropoff" && item.queued?.action === "complete") return "done";
  if (stop.kind === "dropoff" && item.queued?.action === "fail") return "failed";
  return stop.status;
}

/** The order of the deliveries under way by the route: the delivery of the next stop first. */
export function routeOrder(route: Route | null, active: ShiftDelivery[]): ShiftDelivery[] {
  if (!route) return active;
  const rank = new Map<string, number>();
  for (const stop of route.stops) {
    if (stopStatus(stop, active) === "pending" && !rank.has(stop.delivery_id)) rank.set(stop.delivery_id, stop.seq);
  }
  return [...active].sort((a, b) => (rank.get(a.delivery.id) ?? Infinity) - (rank.get(b.delivery.id) ?? Infinity));
}

export function DriverRoute({ route, active }: { route: Route; active: ShiftDelivery[] }) {
  const { t } = useTranslation();
  const stops = route.stops.map((stop) => ({ stop, status: stopStatus(stop, active) }));
  const done = stops.filter((s) => s.status !== "pending").length;
  const next = stops.find((s) => s.status === "pending");
  // The stops still to do first, the next one at the top; those done after them.
  const ordered = [...stops.filter((s) => s.status === "pending"), ...stops.filter((s) => s.status !== "pending")];
  return (
    <section aria-labelledby="route-title" className="driver-route">
      <h1 id="route-title">{t("driverRoute.title")}</h1>
      <p role="status" className="route-progress">
        {t("driverRoute.progress", { done, count: stops.length })}
      </p>
      <progress max={stops.length} value={done} aria-hidden="true" />
      <ol aria-label={t("driverRoute.title")}>
        {ordered.map(({ stop, status }) => {
          const isNext = stop === next?.stop;
          return (
            <li
              key={`${stop.delivery_id}:${stop.kind}`}
              className={`stop${isNext ? " next" : ""}${status !== "pending" ? " done" : ""}`}
              data-stop={stop.seq}
              aria-current={isNext ? "step" : undefined}
            >
              {isNext && (
                <p className="hint">
                  <strong>{t("driverRoute.next")}</strong>
                </p>
              )}
              <strong>
                {stop.seq}. {stop.kind === "pickup"
                  ? t("driverRoute.pickup")
                  : stop.recipient_name
                  ? t("driverRoute.dropoff", { name: stop.recipient_name })
                  : t("driverRoute.dropoffNoName")}
              </strong>
              {status !== "pending" && ` · ${t(`driverRoute.status.${status}`)}`}
              <br />
              {stop.address}
              {status === "pending" && (
                <>
                  <br />
                  <span className="muted">
                    {stop.window_end
                      ? stop.window_start
                        ? t("driverRoute.window", {
                          from: formatClock(stop.window_start),
                          to: formatClock(stop.window_end),
                        })
                        : t("driverRoute.until", { to: formatClock(stop.window_end) })
                      : null}
                    {stop.window_end && stop.arrival_at ? " · " : null}
                    {stop.arrival_at && t("driverRoute.arrival", { time: formatClock(stop.arrival_at) })}
                  </span>
                  <br />
                  <a href={directionsUrl(stop)} target="_blank" rel="noopener noreferrer">
                    {t("driverRoute.navigate")}
                  </a>
                </>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

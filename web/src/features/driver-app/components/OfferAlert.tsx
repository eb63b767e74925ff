// A new offer, or a route published or changed for the driver, takes the whole screen (docs/push.md): wherever the
// driver had scrolled to, with the offer's countdown, a chime and a vibration, and a system notification when the
// app is in the background. Aceitar and Recusar act as on the offer's card (the queue, lib/outbox.ts); Recusar asks
// once; Depois leaves the offer in the list. The alert goes by itself when the offer's deadline passes.
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Delivery } from "../../../api/client.ts";
import { formatBRL, formatKm, formatMinutes } from "../../../format.ts";
import { chime, confirmDecline, notifyWhenHidden, vibrate } from "../alerts.ts";
import { useClock } from "../../../lib/clock.ts";
import { secondsLeft } from "../../dispatch/dispatch.ts";
import { outbox } from "../../../lib/outbox.ts";
import { useRealtimeEvent } from "../../../lib/realtime.tsx";
import { useMyRoute } from "./DriverRoute.tsx";
import { OfferCountdown } from "./OfferCard.tsx";

/** A route's stops in order, as one text: what the dispatcher changes, not their status. */
function stopsOf(stops: unknown): string {
  return Array.isArray(stops)
    ? stops.map((s: { delivery_id?: string; kind?: string }) => `${s.delivery_id}:${s.kind}`).join(",")
    : "";
}

type Alert =
  | { kind: "offer"; delivery: Delivery & { expires_at?: string } }
  | { kind: "route"; event: "route_published" | "route_updated"; stops: number; id: string };

export function OfferAlert({ pay }: { pay: (price: number) => number | null }) {
  const { t } = useTranslation();
  const [alert, setAlert] = useState<Alert | null>(null);
  const now = useClock();
  const first = useRef<HTMLButtonElement>(null);
  // The stops of the routes seen, to tell a changed route from a stop done.
  const known = useRef(new Map<string, string>());
  const route = useMyRoute();
  useEffect(() => {
    if (route && !known.current.has(route.id)) known.current.set(route.id, stopsOf(route.stops));
  }, [route]);

  useRealtimeEvent((event, payload) => {
    if (event === "delivery_offered") {
      const delivery = payload as unknown as Delivery & { expires_at?: string };
      setAlert({ kind: "offer", delivery });
      void notifyWhenHidden(
        t("alerts.offerTitle"),
        t("alerts.offerBody", { from: delivery.origin_address, to: delivery.destination_address }),
        `offer-${delivery.id}`,
      );
    } else if (event === "route_published" || event === "route_updated") {
      const stops = Array.isArray(payload.stops) ? payload.stops.length : 0;
      const id = String(payload.id);
      const before = known.current.get(id);
      const now = stopsOf(payload.stops);
      known.current.set(id, now);
      // The driver's own moves (a stop done) change no stop: only a new route, or stops added, removed or reordered.
      if (event === "route_updated" && (before === undefined || before === now)) return;
      setAlert({ kind: "route", event, stops, id });
      void notifyWhenHidden(
        t(event === "route_published" ? "alerts.routeNew" : "alerts.routeChanged"),
        t("alerts.stops", { count: stops }),
        `route-${id}`,
      );
    } else return;
    chime();
    vibrate();
  });

  const expiresAt = alert?.kind === "offer" ? alert.delivery.offer_expires_at ?? alert.delivery.expires_at : null;
  const expired = !!expiresAt && secondsLeft(expiresAt, now) === 0;
  useEffect(() => {
    if (expired) setAlert(null);
  }, [expired]);
  useEffect(() => {
    if (alert) first.current?.focus();
  }, [alert]);
  if (!alert || expired) return null;

  if (alert.kind === "route") {
    const title = t(alert.event === "route_published" ? "alerts.routeNew" : "alerts.routeChanged");
    return (
      <div className="take-screen" role="alertdialog" aria-modal="true" aria-label={title}>
        <h2>{title}</h2>
        <p className="take-screen-big">{t("alerts.stops", { count: alert.stops })}</p>
        <div className="card-actions">
          <button
            ref={first}
            type="button"
            onClick={() => {
              setAlert(null);
              document.getElementById("driver-route")?.scrollIntoView({ block: "start" });
              window.scrollTo({ top: 0 });
            }}
          >
            {t("alerts.seeRoute")}
          </button>
        </div>
      </div>
    );
  }

  const d = alert.delivery;
  const earning = pay(d.price);
  return (
    <div className="take-screen" role="alertdialog" aria-modal="true" aria-label={t("alerts.offerTitle")}>
      <h2>{t("alerts.offerTitle")}</h2>
      {expiresAt && (
        <p className="take-screen-big">
          <OfferCountdown expiresAt={expiresAt} />
        </p>
      )}
      <p>
        <span className="muted">{t("driver.pickup")}:</span> {d.origin_address}
        <br />
        <span className="muted">{t("driver.dropoff")}:</span> <strong>{d.destination_address}</strong>
      </p>
      <p>
        {t("driver.trip", { km: formatKm(d.distance_m), min: formatMinutes(d.duration_s) })}
        {earning != null && (
          <>
            {" · "}
            {t("driver.pay")}: <strong>{formatBRL(earning)}</strong>
          </>
        )}
      </p>
      <div className="card-actions take-screen-actions">
        <button
          ref={first}
          type="button"
          onClick={() => {
            setAlert(null);
            void outbox()?.add("accept", d.id);
          }}
        >
          {t("driver.accept")}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            if (!confirmDecline(t("alerts.confirmDecline"))) return;
            setAlert(null);
            void outbox()?.add("decline", d.id);
          }}
        >
          {t("driver.decline")}
        </button>
        <button type="button" className="secondary" onClick={() => setAlert(null)}>{t("alerts.later")}</button>
      </div>
    </div>
  );
}

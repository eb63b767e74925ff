// The recipient's tracking page, /track/{token}: public, no sign-in. The view
// comes from GET /api/v1/track/{token}; while a driver has the delivery, the
// page joins the link's private Realtime topic with the anon key (the token is
// what lets it in) and follows the driver on the map. Positions never outlive
// the delivery: the server stops sending them, and the page stops drawing them. The drop-off is pinned on the map
// from the start; the ETA counts down each second between the server's refreshes; where the company requires a
// handover code, the page shows it (to the link's holder only); once delivered, the proof photo, through the signed
// URL the answer carries for a few minutes.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, useMemo } from "react";
import { ApiError, type Schemas } from "../../../api/client.ts";
import type { MapLine, MapMarker } from "../../../components/MapView.tsx";
import { Badge, ErrorNote, Loading } from "../../../components/ui.tsx";
import { useTranslation } from "react-i18next";
import { formatClock, formatDateTime, formatKm, formatTime } from "../../../format.ts";
import { useClock } from "../../../lib/clock.ts";
import { countdown, secondsLeft } from "../../dispatch/dispatch.ts";
import { supabase } from "../../../lib/supabase.ts";
import { trackingKeys } from "../api/keys.ts";
import { type PathPoint, seenPathQuery, trackingQuery } from "../api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

type Tracking = Schemas["Tracking"];

/** Statuses during which the link's topic is open (a driver has the delivery). */
const UNDER_WAY = ["accepted", "in_progress"];
const FINISHED = ["completed", "cancelled"];

export default function TrackPage({ token }: { token: string }) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const viewKey = trackingKeys.view(token);
  const pathKey = trackingKeys.path(token);
  const query = useQuery({
    ...trackingQuery(token),
    retry: (count, error) => !(error instanceof ApiError && [404, 429].includes(error.status)) && count < 2,
    // Live updates arrive on the topic; before a driver has it, look again now and then.
    refetchInterval: (q) => {
      const status = q.state.data?.status;
      return !status || FINISHED.includes(status) ? false : UNDER_WAY.includes(status) ? 60_000 : 20_000;
    },
  });
  const view = query.data;
  const topic = view?.realtime_topic;
  const open = !!view && UNDER_WAY.includes(view.status);

  // The path the page has seen the driver take: its own observations, kept in the query cache.
  const seen = useQuery(seenPathQuery(token));
  const path = seen.data ?? [];
  const position = view?.position;
  useEffect(() => {
    if (!position) return;
    client.setQueryData<PathPoint[]>(
      pathKey,
      (old = []) =>
        old.at(-1)?.at === position.updated_at
          ? old
          : [...old, { lat: position.lat, lng: position.lng, at: position.updated_at }],
    );
  }, [position?.updated_at]);

  useEffect(() => {
    if (!topic || !open) return;
    const channel = supabase
      .channel(topic, { config: { private: true } })
      .on("broadcast", { event: "tracking_updated" }, ({ payload }) => {
        client.setQueryData<Tracking>(viewKey, (old) => old && { ...old, ...(payload as Partial<Tracking>) });
        // The proof photo's URL is made for an answer, never broadcast: ask for it once delivered.
        if ((payload as Partial<Tracking>).status === "completed") void client.invalidateQueries({ queryKey: viewKey });
      })
      .on("broadcast", { event: "driver_location" }, ({ payload }) => {
        const p = payload as { lat: number; lng: number; heading: number | null; updated_at: string };
        client.setQueryData<Tracking>(
          viewKey,
          (old) =>
            old && old.status === "in_progress"
              ? { ...old, position: { lat: p.lat, lng: p.lng, heading: p.heading, updated_at: p.updated_at } }
              : old,
        );
      })
      .subscribe();
    return () => void supabase.removeChannel(channel);
  }, [topic, open]);

  const live = view?.status === "in_progress" ? view.position : null;
  const dropoff = view?.destination;
  const { markers, lines } = useMemo(() => {
    const markers: MapMarker[] = [
      ...(dropoff
        ? [{
          id: "dst",
          kind: "destination" as const,
          lat: dropoff.lat,
          lng: dropoff.lng,
          label: t("track.dropoffMarker"),
        }]
        : []),
      ...(live
        ? [{ id: "drv", kind: "driver" as const, lat: live.lat, lng: live.lng, label: t("track.driverMarker") }]
        : []),
    ];
    const lines: MapLine[] = view?.status === "in_progress"
      ? [{ id: "trail", kind: "trail", points: path.map((p): [number, number] => [p.lat, p.lng]) }]
      : [];
    return { markers, lines };
  }, [live?.updated_at, dropoff?.lat, dropoff?.lng, view?.status, path.length, t]);

  if (query.isPending) {
    return (
      <main className="center">
        <Loading />
      </main>
    );
  }
  if (!view) {
    const error = query.error;
    const missing = error instanceof ApiError && error.status === 404;
    return (
      <main className="center track">
        <section className="card">
          <h1>{t("track.title")}</h1>
          <ErrorNote
            error={missing
              ? t("track.notFound")
              : error instanceof ApiError && error.status === 429
              ? t("track.tooMany", { seconds: error.retryAfter ?? 60 })
              : error}
          />
        </section>
      </main>
    );
  }

  const steps: [string, string | null][] = [
    [t("track.steps.created"), view.created_at],
    [t("track.steps.accepted"), view.accepted_at],
    [t("track.steps.started"), view.started_at],
    [t("track.steps.completed"), view.completed_at],
    [t("track.steps.cancelled"), view.cancelled_at],
  ];
  return (
    <main className="track">
      <header className="heading">
        <h1>{t("track.title")}</h1>
        <Badge value={view.status} text={t(`track.status.${view.status}`)} />
      </header>
      <p role="status" aria-live="polite" aria-label={t("track.summaryLabel")}>
        {t(`track.summary.${view.status}`, { who: view.driver?.first_name ?? t("track.yourDriver") })}
      </p>
      {view.driver && !FINISHED.includes(view.status) && (
        <p className="track-vehicle">
          {t(view.driver.vehicle.plate ? "track.vehiclePlate" : "track.vehicle", {
            who: view.driver.first_name,
            vehicle: t(`track.vehicles.${view.driver.vehicle.type}`),
            plate: view.driver.vehicle.plate ?? "",
          })}
        </p>
      )}
      {view.handover_code && (
        <section className="card handover-code" aria-labelledby="track-code">
          <h2 id="track-code">{t("track.handoverCode")}</h2>
          <p className="code" aria-describedby="track-code-hint">{view.handover_code}</p>
          <p id="track-code-hint" className="hint">{t("track.handoverCodeHint")}</p>
        </section>
      )}
      {UNDER_WAY.includes(view.status) && view.eta_at && <Countdown at={view.eta_at} />}
      {view.status === "in_progress" && (
        <p role="status" aria-label={t("track.etaLabel")}>
          {view.eta_at && view.remaining_m != null
            ? t("track.eta", { time: formatClock(view.eta_at), km: formatKm(view.remaining_m) })
            : t("track.etaUnknown")}
        </p>
      )}
      {view.stops_before != null && (
        <p role="status" className="stops-before" aria-live="polite">
          {view.stops_before > 0 ? t("track.stopsBefore", { count: view.stops_before }) : t("track.stopsBeforeNone")}
        </p>
      )}
      {view.proof_photo_url && (
        <figure className="card track-proof">
          <img src={view.proof_photo_url} alt={t("track.proofPhoto")} />
          <figcaption className="hint">{t("track.proofPhotoNote")}</figcaption>
        </figure>
      )}
      {!FINISHED.includes(view.status) && markers.length > 0 && (
        <Suspense fallback={<Loading />}>
          {/* Named for the driver while the page follows one; before, the drop-off alone. */}
          <MapView
            markers={markers}
            lines={lines}
            label={view.status === "in_progress" ? t("track.map") : t("track.dropoffMap")}
            follow
          />
        </Suspense>
      )}
      {live && <p className="hint">{t("track.lastSeen", { time: formatTime(live.updated_at) })}</p>}
      <section aria-labelledby="track-timeline">
        <h2 id="track-timeline">{t("track.timeline")}</h2>
        <ol className="timeline">
          {steps.filter(([, at]) => at).map(([label, at]) => (
            <li key={label}>
              <strong>{label}</strong> <time dateTime={at!}>{formatDateTime(at)}</time>
            </li>
          ))}
        </ol>
      </section>
    </main>
  );
}

/** The time left until the ETA, counted down each second between the server's refreshes of it. */
function Countdown({ at }: { at: string }) {
  const { t } = useTranslation();
  const left = secondsLeft(at, useClock());
  return (
    <p role="timer" aria-label={t("track.countdownLabel")} className="track-countdown">
      {left > 0 ? t("track.countdown", { time: countdown(left) }) : t("track.arriving")}
    </p>
  );
}

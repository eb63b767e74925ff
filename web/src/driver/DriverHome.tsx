// The driver app's main screen: the current delivery (map, start, complete,
// location sharing) and the available deliveries, which appear live.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, useRef, useState } from "react";
import { api, ApiError, call, type Delivery } from "../api/client.ts";
import { errorMessage } from "../api/errors.ts";
import { Badge, ErrorNote, Loading, Note } from "../components/ui.tsx";
import { useTranslation } from "react-i18next";
import { formatBRL, formatKm, formatMinutes, formatTime } from "../format.ts";
import { displayPhone, phoneE164 } from "../lib/brazil.ts";
import { useAuth } from "../lib/auth.tsx";
import { ProofCapture, type ProofDraft, ProofUploadError, uploadProof } from "./ProofCapture.tsx";
import { FailDelivery } from "./FailDelivery.tsx";
import { WindowText } from "../panel/Deliveries.tsx";

const MapView = lazy(() => import("../components/MapView.tsx"));
const SHARE_EVERY_MS = 10_000;

/**
 * Sends the browser's position while mounted: at most one update per 10 s
 * (the server's window counts from the last accepted one, so the next send
 * waits a little longer), and after a 429 as long as Retry-After says.
 */
function LocationSharing({ onSent }: { onSent: (lat: number, lng: number) => void }) {
  const { t } = useTranslation();
  const [sentAt, setSentAt] = useState<string | null>(null);
  // An API error, or "denied" when the browser refused the position.
  const [problem, setProblem] = useState<unknown>(null);
  useEffect(() => {
    if (!("geolocation" in navigator)) return;
    // One flag per run of this effect: a cleanup stops exactly the loop it belongs to, also when React runs
    // the effect again on the same component (StrictMode, a Suspense boundary hiding and showing it).
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const later = (ms: number) => {
      if (!stopped) timer = setTimeout(send, ms);
    };
    const send = () => {
      navigator.geolocation.getCurrentPosition(
        async ({ coords }) => {
          let wait = SHARE_EVERY_MS + 500;
          try {
            const heading = coords.heading != null && Number.isFinite(coords.heading) && coords.heading < 360
              ? coords.heading
              : null;
            const location = await call(api.PUT("/api/v1/locations/me", {
              body: {
                lat: coords.latitude,
                lng: coords.longitude,
                heading,
                speed: coords.speed != null && Number.isFinite(coords.speed) ? coords.speed : null,
                accuracy: Number.isFinite(coords.accuracy) ? coords.accuracy : null,
              },
            }));
            setSentAt(location.updated_at);
            onSent(location.lat, location.lng);
            setProblem(null);
          } catch (error) {
            // A 429 only means this update came too early: shown, and sent again when allowed.
            if (error instanceof ApiError && error.status === 429 && error.retryAfter) {
              wait = error.retryAfter * 1000 + 200;
            }
            setProblem(error);
          }
          later(wait);
        },
        () => {
          setProblem("denied");
          later(SHARE_EVERY_MS);
        },
        { enableHighAccuracy: true, maximumAge: 0, timeout: 8_000 },
      );
    };
    send();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  return (
    <div className="sharing" aria-live="polite">
      <p>{t("driverApp.sharing")}</p>
      {sentAt && <p role="status">{t("driverApp.lastSent", { at: formatTime(sentAt) })}</p>}
      {problem
        ? <p className="warning">{problem === "denied" ? t("driverApp.locationDenied") : errorMessage(problem)}</p>
        : null}
    </div>
  );
}

function CurrentDelivery({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [me, setMe] = useState<{ lat: number; lng: number } | null>(null);
  const id = delivery.id;
  const onDone = (d: Delivery) => {
    client.setQueryData(["delivery", id], d);
    void client.invalidateQueries({ queryKey: ["deliveries"] });
    if (d.status === "completed") void client.invalidateQueries({ queryKey: ["wallet"] });
  };
  const start = useMutation({
    mutationFn: () => call(api.POST("/api/v1/deliveries/{id}/start", { params: { path: { id } } })),
    onSuccess: onDone,
  });
  const { identity } = useAuth();
  const [draft, setDraft] = useState<ProofDraft>({ photo: null, signature: null, signed: false, note: "" });
  const sent = useRef(new Set<string>());
  const required = useQuery({
    queryKey: ["proof-requirements"],
    queryFn: () => call(api.GET("/api/v1/companies/me/proof-requirements")),
  });
  const complete = useMutation({
    mutationFn: async () => {
      await uploadProof(`${identity?.companyId}/${id}`, draft, sent.current);
      const note = draft.note.trim();
      return await call(api.POST("/api/v1/deliveries/{id}/complete", {
        params: { path: { id } },
        body: note ? { note } : undefined,
      }));
    },
    onSuccess: onDone,
  });
  return (
    <section className="card" aria-labelledby="current-title">
      <h2 id="current-title">{t("driverApp.current")}</h2>
      <p>
        <Badge value={delivery.status} text={t(`status.${delivery.status}`)} />{" "}
        {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}
      </p>
      <p>
        <WindowText delivery={delivery} />
      </p>
      <p>
        {delivery.origin_address} → <strong>{delivery.destination_address}</strong>
      </p>
      <p>{formatKm(delivery.distance_m)}, {formatMinutes(delivery.duration_s)}</p>
      {delivery.recipient_name && (
        <p>
          {t("delivery.recipient")}: {delivery.recipient_name} {delivery.recipient_phone && (
            <a
              href={`tel:${phoneE164(delivery.recipient_phone)}`}
              aria-label={t("driverApp.call", { phone: displayPhone(delivery.recipient_phone) })}
            >
              {displayPhone(delivery.recipient_phone)}
            </a>
          )}
        </p>
      )}
      {delivery.notes && <p>{delivery.notes}</p>}
      <Suspense fallback={<Loading />}>
        <MapView
          label={t("delivery.map")}
          markers={[
            {
              id: "o",
              kind: "origin",
              lat: delivery.origin.lat,
              lng: delivery.origin.lng,
              label: `${t("delivery.from")}: ${delivery.origin_address}`,
            },
            {
              id: "d",
              kind: "destination",
              lat: delivery.destination.lat,
              lng: delivery.destination.lng,
              label: `${t("driverApp.destination")}: ${delivery.destination_address}`,
            },
            ...(me && delivery.status === "in_progress"
              ? [{ id: "me", kind: "driver" as const, lat: me.lat, lng: me.lng, label: t("driverApp.you") }]
              : []),
          ]}
          lines={[{
            id: "route",
            kind: "route",
            points: [[delivery.origin.lat, delivery.origin.lng], [delivery.destination.lat, delivery.destination.lng]],
          }]}
        />
      </Suspense>
      {delivery.status === "in_progress" && <LocationSharing onSent={(lat, lng) => setMe({ lat, lng })} />}
      <ErrorNote
        error={start.error ?? (complete.error instanceof ProofUploadError ? complete.error.message : complete.error)}
      />
      {delivery.status === "accepted" && (
        <button
          type="button"
          disabled={start.isPending}
          onClick={() => start.mutate()}
        >
          {start.isPending ? t("driverApp.starting") : t("driverApp.start")}
        </button>
      )}
      {delivery.status === "in_progress" && <ProofCapture draft={draft} onChange={setDraft} required={required.data} />}
      {delivery.status === "in_progress" && (
        <button
          type="button"
          disabled={complete.isPending}
          onClick={() => complete.mutate()}
        >
          {complete.isPending ? t("driverApp.completing") : t("driverApp.complete")}
        </button>
      )}
      {delivery.status === "in_progress" && <FailDelivery delivery={delivery} onDone={onDone} />}
    </section>
  );
}

function AvailableItem({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const accept = useMutation({
    mutationFn: () => call(api.POST("/api/v1/deliveries/{id}/accept", { params: { path: { id: delivery.id } } })),
    onSuccess: (d) => {
      client.setQueryData(["delivery", d.id], d);
      void client.invalidateQueries({ queryKey: ["deliveries"] });
    },
    onError: (error) => {
      // Another driver was faster: the list is out of date.
      if (error instanceof ApiError && error.status === 422) {
        void client.invalidateQueries({ queryKey: ["deliveries"] });
      }
    },
  });
  return (
    <li className="card" aria-label={`${delivery.origin_address} → ${delivery.destination_address}`}>
      <p>
        {delivery.origin_address} → <strong>{delivery.destination_address}</strong>
      </p>
      <p>
        {formatKm(delivery.distance_m)}, {formatMinutes(delivery.duration_s)}, {formatBRL(delivery.price as number)}
      </p>
      <p>
        <WindowText delivery={delivery} /> {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}
      </p>
      <ErrorNote error={accept.error} />
      <button type="button" disabled={accept.isPending} onClick={() => accept.mutate()}>
        {accept.isPending ? t("driverApp.accepting") : t("driverApp.accept")}
      </button>
    </li>
  );
}

export default function DriverHome() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const driverId = identity?.driverId ?? undefined;
  const mine = useQuery({
    queryKey: ["deliveries", { driver_id: driverId }],
    enabled: !!driverId,
    queryFn: () => call(api.GET("/api/v1/deliveries", { params: { query: { driver_id: driverId, limit: 20 } } })),
  });
  const available = useQuery({
    queryKey: ["deliveries", { status: "pending" }],
    queryFn: () => call(api.GET("/api/v1/deliveries", { params: { query: { status: "pending", limit: 50 } } })),
  });
  const current = mine.data?.items.find((d) => d.status === "accepted" || d.status === "in_progress");
  const justCompleted = mine.data?.items.find((d) =>
    d.status === "completed" && d.completed_at &&
    Date.now() - new Date(d.completed_at).getTime() < 120_000
  );
  const offers = (available.data?.items ?? []).filter((d) => d.status === "pending" && !d.driver_id);

  return (
    <div className="driver-home">
      {current ? <CurrentDelivery delivery={current} /> : (
        <section aria-labelledby="current-title">
          <h2 id="current-title">{t("driverApp.current")}</h2>
          <p>{t("driverApp.noCurrent")}</p>
          {justCompleted && <Note>{t("driverApp.completed")}</Note>}
        </section>
      )}
      <section aria-labelledby="available-title">
        <h1 id="available-title">{t("driverApp.available")}</h1>
        <ErrorNote error={available.error} />
        {available.isPending
          ? <Loading />
          : offers.length === 0
          ? <p>{t("driverApp.noneAvailable")}</p>
          : (
            <ul className="offers">
              {offers.map((d) => <AvailableItem key={d.id} delivery={d} />)}
            </ul>
          )}
      </section>
    </div>
  );
}

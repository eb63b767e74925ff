// One delivery: route on a map, timeline, the driver's trail and live
// position while in progress, the last failed attempt (reason, note, photo), the proof of delivery, the Pix
// charge, and cancel / assign / reopen.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useMemo, useState } from "react";
import { api, call, type Delivery, type DriverLocation } from "../../../api/client.ts";
import { Badge, ConfirmDialog, ErrorNote, Field, Loading, Note, Select } from "../../../components/ui.tsx";
import { useTranslation } from "react-i18next";
import {
  formatBRL,
  formatClock,
  formatCoordinate,
  formatDateTime,
  formatKm,
  formatMinutes,
  formatTime,
  shortId,
} from "../../../format.ts";
import { displayPhone } from "../../../lib/brazil.ts";
import { can, COMPANY_MANAGERS, useAuth } from "../../../lib/auth.tsx";
import { useRealtimeEvent } from "../../../lib/realtime.tsx";
import { Link } from "../../../lib/router.tsx";
import { driverLabel } from "../../drivers/drivers.ts";
import type { MapLine, MapMarker } from "../../../components/MapView.tsx";
import { DeliveryNotifications } from "../../notifications/components/Notifications.tsx";
import { DispatchHistory } from "../../dispatch/components/DispatchHistory.tsx";
import { EditDelivery, RecallDelivery } from "./DeliveryOperations.tsx";
import { StatusBadges, WindowText } from "./Deliveries.tsx";
import { deliveryKeys } from "../api/keys.ts";
import { deliveryQuery, proofUrlsQuery, trailQuery } from "../api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

export function PixCharge({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  if (!delivery.payment) return null;
  return (
    <section className="card pix" aria-labelledby="pix-title">
      <h2 id="pix-title">{t("delivery.pix")}</h2>
      <p>{t("delivery.pixHint")}</p>
      <img
        src={`data:image/png;base64,${delivery.payment.pix_qr_code_image}`}
        alt={t("delivery.qrAlt")}
        width={200}
        height={200}
      />
      <div className="field">
        <label htmlFor="pix-code">{t("delivery.copyPaste")}</label>
        <textarea id="pix-code" readOnly rows={3} value={delivery.payment.pix_copy_paste} />
      </div>
      <button
        type="button"
        onClick={() =>
          void navigator.clipboard?.writeText(delivery.payment!.pix_copy_paste).then(() => setCopied(true), () => {})}
      >
        {copied ? t("delivery.copied") : t("delivery.copy")}
      </button>
    </section>
  );
}

/** The recipient's link, to copy into a message; the page it opens needs no account. */
function TrackingLink({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  if (!delivery.tracking_url) return null;
  const url = new URL(delivery.tracking_url, window.location.origin).href;
  return (
    <div className="field tracking-link">
      <label htmlFor="tracking-link">{t("delivery.trackingLink")}</label>
      <input id="tracking-link" readOnly value={url} onFocus={(e) => e.target.select()} />
      <div>
        <button
          type="button"
          onClick={() => void navigator.clipboard?.writeText(url).then(() => setCopied(true), () => {})}
        >
          {copied ? t("delivery.linkCopied") : t("delivery.copyLink")}
        </button>
      </div>
    </div>
  );
}

/** Short-lived signed URLs of files the driver left in the private bucket (the company's managers may read them). */
function useSignedUrls(deliveryId: string, paths: string[]) {
  return useQuery({ ...proofUrlsQuery(deliveryId, paths), enabled: paths.length > 0 });
}

/** The photo the driver took of the last failed attempt, if any. */
function FailurePhoto({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const path = delivery.failure_photo_path;
  const urls = useSignedUrls(delivery.id, path ? [path] : []);
  if (!path) return null;
  if (urls.isError) return <ErrorNote error={t("errors.server")} />;
  const url = urls.data?.[path];
  return url
    ? (
      <div className="proof-images">
        <img src={url} alt={t("lifecycle.failurePhoto")} />
      </div>
    )
    : null;
}

/** The photo, signature and note the driver left, through short-lived signed URLs (managers may read them). */
function ProofOfDelivery({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const proof = delivery.proof;
  const paths = [proof?.photo_path, proof?.signature_path].filter((p): p is string => !!p);
  const urls = useSignedUrls(delivery.id, paths);
  if (!proof) return null;
  return (
    <section className="card" aria-labelledby="proof-title">
      <h2 id="proof-title">{t("proof.shown")}</h2>
      {paths.length === 0 && !proof.note && <p>{t("proof.none")}</p>}
      {urls.isError && <ErrorNote error={t("errors.server")} />}
      <div className="proof-images">
        {proof.photo_path && urls.data?.[proof.photo_path] && (
          <img src={urls.data[proof.photo_path]!} alt={t("proof.photoAlt")} />
        )}
        {proof.signature_path && urls.data?.[proof.signature_path] && (
          <img src={urls.data[proof.signature_path]!} alt={t("proof.signatureAlt")} className="signature" />
        )}
      </div>
      {proof.note && <p>{t("proof.noteLabel")}: {proof.note}</p>}
    </section>
  );
}

function Timeline({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const paid = ["received", "confirmed"].includes(delivery.payment_status);
  const steps: [string, string | null | undefined, boolean][] = [
    [t("delivery.created"), delivery.created_at, true],
    [t("delivery.paid"), null, paid],
    [t("delivery.acceptedAt"), delivery.accepted_at, !!delivery.accepted_at],
    [t("delivery.startedAt"), delivery.started_at, !!delivery.started_at],
    [t("delivery.completedAt"), delivery.completed_at, !!delivery.completed_at],
    [t("lifecycle.failedAt"), delivery.failed_at, !!delivery.failed_at],
    [t("delivery.cancelledAt"), delivery.cancelled_at, !!delivery.cancelled_at],
  ];
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">{t("delivery.timeline")}</h2>
      <ol className="timeline">
        {steps.filter(([, , done]) => done).map(([label, at]) => (
          <li key={label}>
            <strong>{label}</strong> {at ? <time dateTime={at}>{formatDateTime(at)}</time> : null}
          </li>
        ))}
      </ol>
      {delivery.cancel_reason && <p>{t("delivery.cancelReason")}: {delivery.cancel_reason}</p>}
    </section>
  );
}

export default function DeliveryPage({ id }: { id: string }) {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const client = useQueryClient();
  const query = useQuery(deliveryQuery(id));
  const delivery = query.data;
  const tracking = delivery && ["in_progress", "completed"].includes(delivery.status);
  const trail = useQuery({
    ...trailQuery(id),
    enabled: !!tracking,
  });
  // The driver's positions while in progress extend the cached trail; its last point is where the driver is.
  useRealtimeEvent((event, payload) => {
    const location = payload as unknown as DriverLocation;
    if (event !== "driver_location" || !delivery || location.driver_id !== delivery.driver_id) return;
    if (delivery.status !== "in_progress") return;
    client.setQueryData(
      trailQuery(id).queryKey,
      (old) =>
        old &&
        { ...old, points: [...old.points, { lat: location.lat, lng: location.lng, recorded_at: location.updated_at }] },
    );
  });

  const [reason, setReason] = useState("");
  const [confirmingCancel, setConfirmingCancel] = useState(false);
  const [driverId, setDriverId] = useState("");
  const update = (d: Delivery) => {
    client.setQueryData(deliveryKeys.one(id), d);
    void client.invalidateQueries({ queryKey: deliveryKeys.lists() });
  };
  const cancel = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries/{id}/cancel", { params: { path: { id } }, body: { reason: reason || null } })),
    onSuccess: update,
  });
  const assign = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries/{id}/assign", { params: { path: { id } }, body: { driver_id: driverId } })),
    onSuccess: update,
  });
  const [confirming, setConfirming] = useState(false);
  const reopen = useMutation({
    mutationFn: () => call(api.POST("/api/v1/deliveries/{id}/reopen", { params: { path: { id } } })),
    onSuccess: (d) => (setConfirming(false), update(d)),
  });
  const managers = can(identity, COMPANY_MANAGERS);
  const drivers = useQuery({
    ...driverNamesQuery(),
    enabled: managers,
  });
  const driverName = drivers.data?.items.find((d) => d.id === delivery?.driver_id)?.name;

  const points = trail.data?.points ?? [];
  const last = points.at(-1) ?? null;
  const { markers, lines } = useMemo(() => {
    if (!delivery) return { markers: [], lines: [] };
    const markers: MapMarker[] = [
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
        label: `${t("delivery.to")}: ${delivery.destination_address}`,
      },
    ];
    if (last && delivery.status === "in_progress") {
      markers.push({ id: "drv", kind: "driver", lat: last.lat, lng: last.lng, label: t("delivery.driver") });
    }
    const lines: MapLine[] = [
      {
        id: "route",
        kind: "route",
        points: [[delivery.origin.lat, delivery.origin.lng], [delivery.destination.lat, delivery.destination.lng]],
      },
      { id: "trail", kind: "trail", points: points.map((p) => [p.lat, p.lng]) },
    ];
    return { markers, lines };
  }, [delivery, last?.lat, last?.lng, points.length, t]);

  if (query.isPending) return <Loading />;
  if (!delivery) return <ErrorNote error={query.error} />;
  const open = ["awaiting_payment", "pending", "accepted", "failed"].includes(delivery.status);

  return (
    <section aria-labelledby="delivery-title">
      <p>
        <Link to="/deliveries">{t("delivery.back")}</Link>
      </p>
      <div className="heading">
        <h1 id="delivery-title">{t("delivery.title", { id: shortId(delivery.id) })}</h1>
        <StatusBadges delivery={delivery} />
        <span>{t(`paymentMethod.${delivery.payment_method}`)}: {t(`paymentStatus.${delivery.payment_status}`)}</span>
        {delivery.refund_due && <Badge value="refund_due" text={t("refundDue")} />}
      </div>
      <div className="two">
        <div>
          <dl className="facts">
            <dt>{t("delivery.from")}</dt>
            <dd>{delivery.origin_address}</dd>
            <dt>{t("delivery.to")}</dt>
            <dd>{delivery.destination_address}</dd>
            <dt>{t("delivery.distance")}</dt>
            <dd>{formatKm(delivery.distance_m)}</dd>
            <dt>{t("delivery.duration")}</dt>
            <dd>{formatMinutes(delivery.duration_s)}</dd>
            <dt>{t("delivery.price")}</dt>
            <dd>{formatBRL(delivery.price as number)}</dd>
            <dt>{t("delivery.driver")}</dt>
            <dd>{delivery.driver_id ? driverName ?? shortId(delivery.driver_id) : t("delivery.unassigned")}</dd>
            {delivery.recipient_name && (
              <>
                <dt>{t("delivery.recipient")}</dt>
                <dd>{delivery.recipient_name} {displayPhone(delivery.recipient_phone)}</dd>
              </>
            )}
            {delivery.notes && (
              <>
                <dt>{t("delivery.notes")}</dt>
                <dd>{delivery.notes}</dd>
              </>
            )}
            {delivery.recipient_email && (
              <>
                <dt>{t("lifecycle.recipientEmail")}</dt>
                <dd>{delivery.recipient_email}</dd>
              </>
            )}
            {delivery.external_id && (
              <>
                <dt>{t("lifecycle.externalId")}</dt>
                <dd>{delivery.external_id}</dd>
              </>
            )}
            {(delivery.window_start || delivery.window_end) && (
              <>
                <dt>{t("lifecycle.window")}</dt>
                <dd>
                  <WindowText delivery={delivery} labelled={false} />
                </dd>
              </>
            )}
            {delivery.failure_reason && delivery.failed_at && (
              <>
                <dt>{t("lifecycle.failure")}</dt>
                <dd>
                  {t("lifecycle.failureLine", {
                    reason: t(`lifecycle.reasons.${delivery.failure_reason}`),
                    at: formatDateTime(delivery.failed_at),
                  })}
                  {delivery.failure_note && <div>{t("lifecycle.failureNote")}: {delivery.failure_note}</div>}
                  <FailurePhoto delivery={delivery} />
                </dd>
              </>
            )}
            {delivery.status === "in_progress" && delivery.eta_at && delivery.remaining_m != null && (
              <>
                <dt>{t("delivery.eta")}</dt>
                <dd>
                  {t("delivery.etaLine", { time: formatClock(delivery.eta_at), km: formatKm(delivery.remaining_m) })}
                </dd>
              </>
            )}
          </dl>
          <TrackingLink delivery={delivery} />
          <DeliveryNotifications delivery={delivery} onErased={update} />
          <ProofOfDelivery delivery={delivery} />
          <Timeline delivery={delivery} />
          <DispatchHistory
            delivery={delivery}
            headingId="delivery-dispatch-title"
            title={t("dispatch.history.title")}
            hideWhenEmpty
          />
          {delivery.status === "awaiting_payment" && <PixCharge delivery={delivery} />}
          {managers && <EditDelivery key={delivery.id} delivery={delivery} onChanged={update} />}
          {managers && <RecallDelivery delivery={delivery} onChanged={update} />}
        </div>
        <div>
          <Suspense fallback={<Loading />}>
            <MapView markers={markers} lines={lines} label={t("delivery.map")} />
          </Suspense>
          {tracking && <p>{t("delivery.trail", { count: points.length })}</p>}
          {last && delivery.status === "in_progress" && (
            <p role="status">
              {t("delivery.driverAt", {
                lat: formatCoordinate(last.lat),
                lng: formatCoordinate(last.lng),
                at: formatTime(last.recorded_at),
              })}
            </p>
          )}
        </div>
      </div>
      {delivery.status === "failed" && (
        <div className="card reopen">
          {!confirming
            ? (
              <button type="button" onClick={() => setConfirming(true)}>
                {t("lifecycle.reopen")}
              </button>
            )
            : (
              <div role="group" aria-label={t("lifecycle.reopen")}>
                <p>{t("lifecycle.reopenConfirm")}</p>
                <button type="button" disabled={reopen.isPending} onClick={() => reopen.mutate()}>
                  {reopen.isPending ? t("lifecycle.reopening") : t("lifecycle.reopenYes")}
                </button>{" "}
                <button type="button" onClick={() => setConfirming(false)}>{t("lifecycle.reopenNo")}</button>
              </div>
            )}
          <ErrorNote error={reopen.error} />
        </div>
      )}
      {open && (
        <div className="actions">
          {managers && !["accepted", "failed"].includes(delivery.status) && (
            <form className="card" onSubmit={(e) => (e.preventDefault(), assign.mutate())}>
              <Select
                label={t("delivery.assign")}
                value={driverId}
                onChange={(e) =>
                  setDriverId(e.target.value)}
                required
                options={[
                  ["", "—"],
                  ...(drivers.data?.items ?? []).filter((d) =>
                    d.active
                  )
                    .map((d, _, all) => [d.id, driverLabel(d, all)] as const),
                ]}
              />
              <ErrorNote error={assign.error} />
              <button type="submit" disabled={assign.isPending || !driverId}>
                {assign.isPending ? t("delivery.assigning") : t("delivery.assignSubmit")}
              </button>
            </form>
          )}
          <form className="card" onSubmit={(e) => (e.preventDefault(), setConfirmingCancel(true))}>
            <Field
              label={t("delivery.cancelReason")}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={500}
            />
            <ErrorNote error={cancel.error} />
            {cancel.isPending && <Note>{t("delivery.cancelling")}</Note>}
            <button type="submit" className="danger" disabled={cancel.isPending}>{t("delivery.cancelDelivery")}</button>
            <ConfirmDialog
              open={confirmingCancel}
              message={t("delivery.cancelConfirm")}
              confirm={t("delivery.cancelConfirmYes")}
              onConfirm={() => cancel.mutate()}
              onClose={() => setConfirmingCancel(false)}
            />
          </form>
        </div>
      )}
    </section>
  );
}

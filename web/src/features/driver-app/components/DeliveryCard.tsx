// One of the driver's deliveries under way: where to pick it up and take it, the driver's pay, the recipient
// (call, WhatsApp), the way there in the phone's maps app, its window and whether it is late, and what the driver
// can do next (start; complete, or report it could not be delivered). An action goes to the
// queue (lib/outbox.ts): the card shows it as sent, or waiting for a connection, at once (an accept waiting past
// its offer's deadline says so). Everything the card
// holds (the proof draft) belongs to this delivery: the list keys cards by delivery. The proof the company requires
// (its requirements as last read, kept on the device) is checked here before a completion is queued, with a
// connection or without: what is missing is said at once, while the recipient is still at the door. The draft is
// kept on the device as it is taken (features/driver-app/proof-drafts.ts) and dropped once the completion or failure is queued.
import { useQuery } from "@tanstack/react-query";
import { lazy, type ReactNode, Suspense, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { Badge, DecimalField, ErrorNote, Field, Loading, readDecimal } from "../../../components/ui.tsx";
import { useAuth } from "../../../lib/auth.tsx";
import { useClock } from "../../../lib/clock.ts";
import { formatBRL, formatInputNumber, formatKm, formatMinutes, formatTime } from "../../../format.ts";
import { displayPhone } from "../../../lib/brazil.ts";
import { callUrl, directionsUrl, whatsappUrl } from "../contact.ts";
import { countdown, secondsLeft } from "../../dispatch/dispatch.ts";
import { useSharing } from "../location.ts";
import { useOnline } from "../../../lib/online.ts";
import { failurePhotoKind, outbox } from "../../../lib/outbox.ts";
import { dropProofDraft, loadProofDraft, saveProofDraft } from "../proof-drafts.ts";
import { WindowText } from "../../deliveries/components/Deliveries.tsx";
import { CollectNote } from "./CollectNote.tsx";
import { FailDelivery } from "./FailDelivery.tsx";
import { canvasBlob, emptyDraft, missingProof, ProofCapture, type ProofDraft, proofFiles } from "./ProofCapture.tsx";
import type { ShiftDelivery } from "../shift.ts";
import { proofRequirementsQuery } from "../../deliveries/api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

/**
 * An accept waiting for a connection while its offer runs out: the deadline, and once it has passed, that the
 * server decides when the accept arrives (lib/outbox.ts says what became of it).
 */
function AcceptDeadline({ expiresAt }: { expiresAt: string }) {
  const { t } = useTranslation();
  const seconds = secondsLeft(expiresAt, useClock());
  const at = formatTime(expiresAt);
  return (
    <p className="warning offer-deadline" role="status">
      {seconds > 0
        ? t("driver.offer.acceptWaiting", { time: countdown(seconds), at })
        : t("driver.offer.acceptLate", { at })}
    </p>
  );
}

/** The queued action's state, in words. */
export function QueuedNote({ action, sending }: { action: string; sending: boolean }) {
  const { t } = useTranslation();
  const online = useOnline();
  const name = t(`driver.actions.${action as "accept"}`, { defaultValue: action });
  return (
    <p className="queued" role="status">
      {sending && online ? t("driver.sending", { action: name }) : t("driver.waiting", { action: name })}
    </p>
  );
}

export function DeliveryCard(
  { item, title, withMap, pay }: { item: ShiftDelivery; title: string; withMap: boolean; pay: number | null },
) {
  const { t } = useTranslation();
  const { delivery, status, queued, refused } = item;
  const id = delivery.id;
  const [draft, setDraft] = useState<ProofDraft>(emptyDraft);
  // Once a completion was tried, what it lacks, as the driver adds it.
  const [tried, setTried] = useState(false);
  const userId = useAuth().identity?.userId;
  const kept = useKeptDraft(id, userId, status === "in_progress" && !queued, draft, setDraft);
  // What the recipient paid at the door (the amount to collect until the driver types another), and their code.
  const [collectedText, setCollectedText] = useState(
    delivery.collect ? formatInputNumber(delivery.collect.amount, 2) : "",
  );
  const [code, setCode] = useState("");
  const collectRules = { required: true, min: 0, fractionDigits: 2 };
  const collected = readDecimal(collectedText, collectRules);
  const sharing = useSharing();
  const online = useOnline();
  const required = useQuery({
    ...proofRequirementsQuery(),
    // Read before the pick-up too, so that the phone knows them at the door with no connection.
    enabled: status === "accepted" || status === "in_progress",
  });
  const act = async (action: string, extra?: Parameters<NonNullable<ReturnType<typeof outbox>>["add"]>[2]) => {
    const box = outbox();
    if (!box) return;
    if (refused) await box.dismiss(refused.id);
    await box.add(action, id, extra);
  };
  const needsCode = !!required.data?.handover_code;
  const missing = tried ? missingProof(draft, required.data) : [];
  const ready = (!delivery.collect || (collected.ok && collected.value != null)) &&
    (!needsCode || /^\d{4}$/.test(code));
  const complete = async () => {
    setTried(true);
    if (missingProof(draft, required.data).length > 0) return;
    const note = draft.note.trim();
    const body: Record<string, unknown> = {};
    if (note) body.note = note;
    if (delivery.collect && collected.ok && collected.value != null) {
      body.collected = { amount: collected.value, method: delivery.collect.method };
    }
    if (needsCode) body.code = code;
    await act("complete", {
      body: Object.keys(body).length ? body : undefined,
      proof: await proofFiles(draft),
    });
    await kept.drop();
  };
  const target = status === "in_progress" ? delivery.destination : delivery.origin;
  const recalled = status === "returning" ? delivery.recall_reason : null;
  const me = sharing && "lat" in sharing && sharing.lat != null && sharing.lng != null
    ? { lat: sharing.lat, lng: sharing.lng }
    : null;
  const headingId = `delivery-${id}`;
  const phone = delivery.recipient_phone;

  let actions: ReactNode = null;
  if (queued) {
    actions = (
      <>
        <QueuedNote action={queued.action} sending={queued.state === "sending"} />
        {queued.action === "accept" && delivery.offer_expires_at && !(queued.state === "sending" && online) && (
          <AcceptDeadline expiresAt={delivery.offer_expires_at} />
        )}
      </>
    );
  } else if (status === "accepted") {
    actions = <button type="button" onClick={() => void act("start")}>{t("driver.start")}</button>;
  } else if (status === "returning") {
    actions = <button type="button" onClick={() => void act("return")}>{t("driver.returned")}</button>;
  } else if (status === "in_progress") {
    actions = (
      <>
        <button type="button" disabled={!ready} onClick={() => void complete()}>{t("driver.complete")}</button>
        <FailDelivery
          onReport={(body, photo) =>
            void act("fail", {
              body,
              proof: photo ? [{ kind: failurePhotoKind(delivery.attempts), blob: photo }] : undefined,
            }).then(kept.drop)}
        />
      </>
    );
  }

  return (
    <li className="card delivery-card" aria-labelledby={headingId}>
      <h3 id={headingId}>{title}</h3>
      <p>
        <Badge value={status} text={t(`status.${status}`)} />{" "}
        {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}
      </p>
      {(delivery.window_start || delivery.window_end) && (
        <p>
          <WindowText delivery={delivery} />
        </p>
      )}
      <dl className="facts">
        <dt>{t("driver.pickup")}</dt>
        <dd>{delivery.origin_address}</dd>
        <dt>{t("driver.dropoff")}</dt>
        <dd>
          <strong>{delivery.destination_address}</strong>
        </dd>
        {pay != null && (
          <>
            <dt>{t("driver.pay")}</dt>
            <dd>
              <strong>{formatBRL(pay)}</strong>
            </dd>
          </>
        )}
      </dl>
      <p>{t("driver.trip", { km: formatKm(delivery.distance_m), min: formatMinutes(delivery.duration_s) })}</p>
      <CollectNote collect={delivery.collect} />
      {delivery.recipient_name && <p>{t("driver.recipient")}: {delivery.recipient_name}</p>}
      {delivery.notes && <p>{delivery.notes}</p>}
      {recalled && <p role="note">{t("driver.recalled", { reason: recalled })}</p>}
      <p className="links">
        <a className="button secondary" href={directionsUrl(target)} target="_blank" rel="noopener noreferrer">
          {status === "in_progress" ? t("driver.toDropoff") : t("driver.toPickup")}
        </a>
        {phone && (
          <>
            <a className="button secondary" href={callUrl(phone)}>{t("driver.call", { phone: displayPhone(phone) })}</a>
            <a className="button secondary" href={whatsappUrl(phone)} target="_blank" rel="noopener noreferrer">
              {t("driver.whatsapp", { phone: displayPhone(phone) })}
            </a>
          </>
        )}
      </p>
      {withMap && (
        <Suspense fallback={<Loading />}>
          <MapView
            label={t("driver.map")}
            markers={[
              {
                id: "o",
                kind: "origin",
                lat: delivery.origin.lat,
                lng: delivery.origin.lng,
                label: `${t("driver.pickup")}: ${delivery.origin_address}`,
              },
              {
                id: "d",
                kind: "destination",
                lat: delivery.destination.lat,
                lng: delivery.destination.lng,
                label: `${t("driver.destination")}: ${delivery.destination_address}`,
              },
              ...(me ? [{ id: "me", kind: "driver" as const, lat: me.lat, lng: me.lng, label: t("driver.you") }] : []),
            ]}
            lines={[{
              id: "route",
              kind: "route",
              points: [[delivery.origin.lat, delivery.origin.lng], [
                delivery.destination.lat,
                delivery.destination.lng,
              ]],
            }]}
          />
        </Suspense>
      )}
      {status === "in_progress" && (
        <div hidden={!!queued}>
          <ProofCapture draft={draft} onChange={setDraft} required={required.data} />
          {delivery.collect && (
            <DecimalField
              label={t("driver.collect.collected")}
              value={collectedText}
              rules={collectRules}
              onChange={(e) => setCollectedText(e.target.value)}
            />
          )}
          {needsCode && (
            <Field
              label={t("driver.handoverCode")}
              hint={t("driver.handoverCodeHint")}
              inputMode="numeric"
              autoComplete="off"
              maxLength={4}
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, "").slice(0, 4))}
            />
          )}
        </div>
      )}
      {missing.length > 0 && status === "in_progress" && !queued && (
        <p className="error" role="alert">
          {t("server.proofMissing", {
            what: missing.map((kind) => t(`server.proofKinds.${kind}`)).join(t("server.listSeparator")),
          })}
        </p>
      )}
      <ErrorNote error={refused?.problem} />
      <div className="card-actions">{actions}</div>
    </li>
  );
}

/**
 * Keeps the card's proof draft on the device while the delivery is in progress (`active`): put back after a reload,
 * saved as it changes (the photo, each stroke of the signature, the note), dropped with `drop` once queued.
 */
function useKeptDraft(
  deliveryId: string,
  userId: string | undefined,
  active: boolean,
  draft: ProofDraft,
  setDraft: (update: (d: ProofDraft) => ProofDraft) => void,
) {
  // State, not a ref: a photo taken before the kept draft was read (a slow IndexedDB) is saved once it has been.
  const [loaded, setLoaded] = useState(false);
  const dropped = useRef(false);
  useEffect(() => {
    if (!active || loaded) return;
    let gone = false;
    void loadProofDraft(deliveryId).then((record) => {
      if (gone) return;
      setLoaded(true);
      if (!record) return;
      // What was taken before the page went away, unless the driver has started again meanwhile.
      setDraft((d) =>
        d.photo || d.signed || d.note
          ? d
          : { ...d, photo: record.photo, note: record.note, signed: !!record.signature, kept: record.signature }
      );
    });
    return () => void (gone = true);
  }, [deliveryId, active, loaded]);
  useEffect(() => {
    if (!active || !loaded || !userId || dropped.current) return;
    const timer = setTimeout(async () => {
      const signature = !draft.signed ? null : draft.signature ? await canvasBlob(draft.signature) : draft.kept;
      if (dropped.current) return;
      await saveProofDraft({
        deliveryId,
        userId,
        photo: draft.photo,
        signature,
        note: draft.note,
        savedAt: Date.now(),
      });
    }, 200);
    return () => clearTimeout(timer);
  }, [active, loaded, userId, draft.photo, draft.signed, draft.note, draft.strokes, draft.kept]);
  return {
    drop: async () => {
      dropped.current = true;
      await dropProofDraft(deliveryId);
    },
  };
}

// A delivery the driver may take: one open to every driver (Aceitar), or one dispatch offers this driver with a
// deadline (docs/dispatch.md): the pickup, the driver's pay, a live countdown to `offer_expires_at`, Aceitar and
// Recusar. The card leaves the list when the deadline passes (features/driver-app/shift.ts). Both actions go to the queue
// (lib/outbox.ts): an accept shows at once as the driver's delivery; a decline, once confirmed, takes the card away
// at once. A new offer also takes the whole screen (OfferAlert.tsx).
import { useTranslation } from "react-i18next";
import type { Delivery } from "../../../api/client.ts";
import { CollectNote } from "./CollectNote.tsx";
import { Badge } from "../../../components/ui.tsx";
import { useClock } from "../../../lib/clock.ts";
import { formatBRL, formatKm, formatMinutes, formatTime } from "../../../format.ts";
import { countdown, offerView, secondsLeft } from "../../dispatch/dispatch.ts";
import { outbox, type OutboxItem } from "../../../lib/outbox.ts";
import { WindowText } from "../../deliveries/components/Deliveries.tsx";
import { QueuedNote } from "./DeliveryCard.tsx";
import { confirmDecline } from "../alerts.ts";

/** How long the driver has to answer an offer, counting down. */
export function OfferCountdown({ expiresAt }: { expiresAt: string }) {
  const { t } = useTranslation();
  const seconds = secondsLeft(expiresAt, useClock());
  return (
    // A timer is not announced at every tick; the deadline is in the text for whoever reads it.
    <span role="timer" className={seconds <= 10 ? "countdown ending" : "countdown"}>
      {t("driver.offer.answerWithin", { time: countdown(seconds) })}{" "}
      <span className="muted">
        ({t("driver.offer.until")} <time dateTime={expiresAt}>{formatTime(expiresAt)}</time>)
      </span>
    </span>
  );
}

export function OfferCard(
  { delivery, pay, queued }: { delivery: Delivery; pay: number | null; queued: OutboxItem | null },
) {
  const { t } = useTranslation();
  const live = offerView(delivery, Date.now()) === "offer" && !!delivery.offer_expires_at;
  return (
    <li
      className={live ? "card offer-card live-offer" : "card offer-card"}
      aria-label={`${delivery.origin_address} → ${delivery.destination_address}`}
    >
      {live && (
        <p className="offer-head">
          <Badge value="offer" text={t("driver.offer.forYou")} />{" "}
          <OfferCountdown expiresAt={delivery.offer_expires_at!} />
        </p>
      )}
      <p>
        <span className="muted">{t("driver.pickup")}:</span> {delivery.origin_address}
        <br />
        <span className="muted">{t("driver.dropoff")}:</span> <strong>{delivery.destination_address}</strong>
      </p>
      <p>
        {t("driver.trip", { km: formatKm(delivery.distance_m), min: formatMinutes(delivery.duration_s) })}
        {pay != null && (
          <>
            {" · "}
            {t("driver.pay")}: <strong>{formatBRL(pay)}</strong>
          </>
        )}
      </p>
      <CollectNote collect={delivery.collect} />
      {(delivery.window_start || delivery.window_end || delivery.late) && (
        <p>
          <WindowText delivery={delivery} /> {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}
        </p>
      )}
      {queued
        ? <QueuedNote action={queued.action} sending={queued.state === "sending"} />
        : (
          <div className="card-actions">
            <button type="button" onClick={() => void outbox()?.add("accept", delivery.id)}>
              {t("driver.accept")}
            </button>
            {live && (
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  if (confirmDecline(t("alerts.confirmDecline"))) void outbox()?.add("decline", delivery.id);
                }}
              >
                {t("driver.decline")}
              </button>
            )}
          </div>
        )}
    </li>
  );
}

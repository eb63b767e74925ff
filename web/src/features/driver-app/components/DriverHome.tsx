// The driver app's main screen, a shift at a glance: what needs the driver's attention (an offer lost, a
// delivery cancelled, an action refused), the deliveries under way in the order to do them, each with its own
// actions, the offers to take (with the driver's choice to be available for them), and what was completed today.
// Everything comes from the cache that Realtime and the queue keep current (features/driver-app/shift.ts): nothing here waits
// for a reload.
import { useId } from "react";
import { useTranslation } from "react-i18next";
import type { Delivery } from "../../../api/client.ts";
import { ErrorNote, Loading, Note } from "../../../components/ui.tsx";
import { formatBRL, formatClock } from "../../../format.ts";
import { useAuth } from "../../../lib/auth.tsx";
import { setAvailable, useAvailable } from "../availability.ts";
import { outbox } from "../../../lib/outbox.ts";
import { DeliveryCard } from "./DeliveryCard.tsx";
import { DriverRoute, routeOrder, useMyRoute } from "./DriverRoute.tsx";
import { OfferCard } from "./OfferCard.tsx";
import { AlertsSwitch } from "./AlertsSwitch.tsx";
import { OfferAlert } from "./OfferAlert.tsx";
import { useWakeLock } from "../alerts.ts";
import { usePay, useShift } from "../shift.ts";

/**
 * The driver's choice to be available for offers: while on, the app sends the driver's position, so that dispatch
 * may offer the driver deliveries near it (features/driver-app/availability.ts).
 */
function Availability() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const driverId = identity?.driverId;
  const available = useAvailable(driverId);
  const id = useId();
  if (!driverId) return null;
  return (
    <div className="availability">
      <label className="check">
        <input
          type="checkbox"
          role="switch"
          checked={available}
          aria-describedby={id}
          onChange={(e) => setAvailable(driverId, e.target.checked)}
        />{" "}
        {t("driver.availability.label")}
      </label>
      <p id={id} className="hint">{available ? t("driver.availability.on") : t("driver.availability.off")}</p>
    </div>
  );
}

/** One thing the driver should know, until the driver says so. */
function Notice({ text, onDismiss }: { text: string; onDismiss: () => void }) {
  const { t } = useTranslation();
  return (
    <li className="notice">
      <p role="alert">{text}</p>
      <button type="button" className="secondary" onClick={onDismiss}>{t("driver.dismiss")}</button>
    </li>
  );
}

export default function DriverHome() {
  const { t } = useTranslation();
  const shift = useShift();
  const route = useMyRoute();
  // In a route, the deliveries under way in the route's order: the next stop's delivery first.
  const active = routeOrder(route, shift.active);
  const pay = usePay();
  const { identity } = useAuth();
  // On shift: available for offers, or with deliveries under way. The screen stays on meanwhile.
  const available = useAvailable(identity?.driverId);
  useWakeLock(available || active.length > 0);
  const earned = shift.completedToday.reduce((sum, d) => sum + (pay(d.price) ?? 0), 0);
  const notices = shift.notices.length + shift.cancelled.length;
  const cancelledText = (d: Delivery): string => {
    const to = d.destination_address;
    if (d.completed_at) return t("driver.cancelledAfterCompletion", { to });
    return d.cancel_reason ? t("driver.cancelledWhy", { to, reason: d.cancel_reason }) : t("driver.cancelled", { to });
  };

  return (
    <div className="driver-home">
      <OfferAlert pay={pay} />
      {notices > 0 && (
        <section aria-labelledby="notices-title">
          <h2 id="notices-title">{t("driver.notices")}</h2>
          <ul className="notices">
            {shift.notices.map((item) => (
              <Notice
                key={item.id}
                text={item.to ? t("driver.refusedOn", { to: item.to, why: item.problem ?? "" }) : item.problem ?? ""}
                onDismiss={() => {
                  void outbox()?.dismiss(item.id);
                  shift.dismissCancelled(item.deliveryId);
                }}
              />
            ))}
            {shift.cancelled.map((d) => (
              <Notice
                key={d.id}
                text={cancelledText(d)}
                onDismiss={() => shift.dismissCancelled(d.id)}
              />
            ))}
          </ul>
        </section>
      )}
      {route && <DriverRoute route={route} active={shift.active} />}
      <section aria-labelledby="mine-title">
        <h1 id="mine-title">{t("driver.mine")}</h1>
        <ErrorNote error={shift.error} />
        {shift.loading && active.length === 0
          ? <Loading />
          : active.length === 0
          ? <p>{t("driver.noCurrent")}</p>
          : (
            <ol className="deliveries">
              {active.map((item, index) => (
                <DeliveryCard
                  key={item.delivery.id}
                  item={item}
                  title={index === 0 ? t("driver.current") : t("driver.nth", { n: index + 1 })}
                  withMap={index === 0}
                  pay={pay(item.delivery.price)}
                />
              ))}
            </ol>
          )}
      </section>
      <section aria-labelledby="available-title">
        <h2 id="available-title">{t("driver.available")}</h2>
        <Availability />
        <AlertsSwitch />
        <ErrorNote error={shift.offersError} />
        {shift.offersLoading && shift.offers.length === 0
          ? <Loading />
          : shift.offers.length === 0
          ? <p>{t("driver.noneAvailable")}</p>
          : (
            <ul className="offers">
              {shift.offers.map((d) => (
                <OfferCard
                  key={d.id}
                  delivery={d}
                  pay={pay(d.price)}
                  queued={shift.waiting.find((i) => i.deliveryId === d.id) ?? null}
                />
              ))}
            </ul>
          )}
      </section>
      <section aria-labelledby="today-title">
        <h2 id="today-title">{t("driver.completedToday")}</h2>
        {shift.completedToday.length === 0 ? <p>{t("driver.noneToday")}</p> : (
          <>
            <Note>{t("driver.completedSummary", { count: shift.completedToday.length, pay: formatBRL(earned) })}</Note>
            <ul className="list">
              {shift.completedToday.map((d) => (
                <li key={d.id}>
                  {d.destination_address}
                  <br />
                  <span className="muted">
                    {t("driver.completedAt")}{" "}
                    <time dateTime={d.completed_at ?? undefined}>{formatClock(d.completed_at)}</time>
                    {pay(d.price) != null && (
                      <>
                        {" · "}
                        {t("driver.pay")}: <strong>{formatBRL(pay(d.price))}</strong>
                      </>
                    )}
                  </span>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </div>
  );
}

// The strip under the header on every screen of the driver app: whether there is a connection, how many actions
// wait for it, and whether the position reaches the company. It also runs what works in the background while
// the driver is signed in: the queue of actions (lib/outbox.ts) and, while a delivery is in progress or the driver
// is available for offers (features/driver-app/availability.ts), the one location sender (features/driver-app/location.ts).
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../../../api/errors.ts";
import { formatTime } from "../../../format.ts";
import { useAuth } from "../../../lib/auth.tsx";
import { useAvailable } from "../availability.ts";
import { useClock } from "../../../lib/clock.ts";
import { publishSharing, shareLocation, type SharingState, useSharing } from "../location.ts";
import { useOnline } from "../../../lib/online.ts";
import { useShift } from "../shift.ts";

/** Seconds until `at`, counting down on screen. */
function useSecondsUntil(at: number | undefined): number {
  const now = useClock(1_000, !!at);
  return at ? Math.max(1, Math.ceil((at - now) / 1000)) : 0;
}

function SharingLine({ state, active }: { state: SharingState | null; active: boolean }) {
  const { t } = useTranslation();
  const online = useOnline();
  const seconds = useSecondsUntil(state?.kind === "waiting" ? state.nextAt : undefined);
  let text: string;
  let warning = false;
  if (!active || !state) text = t("driver.sharing.off");
  else if (!online && state.kind !== "denied" && state.kind !== "unsupported") {
    text = t("driver.sharing.offline");
    warning = true;
  } else {
    switch (state.kind) {
      case "starting":
        text = t("driver.sharing.starting");
        break;
      case "sent":
        text = t("driver.sharing.sent", { at: formatTime(state.at) });
        break;
      case "waiting":
        text = state.at
          ? t("driver.sharing.sent", { at: formatTime(state.at) })
          : t("driver.sharing.waiting", { seconds });
        break;
      case "offline":
        text = t("driver.sharing.offline");
        warning = true;
        break;
      case "denied":
        text = t("driver.sharing.denied");
        warning = true;
        break;
      case "unsupported":
        text = t("driver.sharing.unsupported");
        warning = true;
        break;
      case "failed":
        text = t("driver.sharing.failed", { why: errorMessage(state.error) });
        warning = true;
        break;
    }
  }
  return (
    <p className={warning ? "warning" : undefined} role="status" aria-label={t("driver.sharing.title")}>
      {text}
    </p>
  );
}

export default function DriverBar() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const online = useOnline();
  const driverId = identity?.driverId;

  const shift = useShift();
  const available = useAvailable(driverId);
  // Shared while a delivery is on its way to the recipient, as the company and the recipient follow it, and while
  // the driver is available for offers, as dispatch looks for drivers near each pickup.
  const sharing = shift.active.some((a) => a.status === "in_progress") || available;
  useEffect(() => {
    if (!sharing || !driverId) return;
    const stop = shareLocation(driverId, publishSharing);
    return () => {
      stop();
      publishSharing(null);
    };
  }, [sharing, driverId]);
  const state = useSharing();

  return (
    <section className="driver-bar" aria-label={t("driver.bar")}>
      {!online && <p className="warning" role="status">{t("driver.offline")}</p>}
      {shift.waiting.length > 0 && <p role="status">{t("driver.queued", { count: shift.waiting.length })}</p>}
      <SharingLine state={state} active={sharing} />
    </section>
  );
}

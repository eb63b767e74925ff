// The driver's choice to be alerted with the app closed (Web Push, docs/push.md): a tap asks the browser's
// permission and registers this phone with the platform. Shown until it is on; says so when the browser refuses.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { enableAlerts, type PushState, pushState } from "../alerts.ts";

export function AlertsSwitch() {
  const { t } = useTranslation();
  const [state, setState] = useState<PushState | "working" | "failed" | null>(null);
  useEffect(() => {
    void pushState().then(setState).catch(() => setState("off"));
  }, []);
  if (state === null || state === "on" || state === "unsupported") return null;
  if (state === "denied") return <p className="hint">{t("alerts.denied")}</p>;
  return (
    <div className="alerts-switch">
      <button
        type="button"
        className="secondary"
        disabled={state === "working"}
        onClick={() => {
          setState("working");
          enableAlerts().then(setState).catch(() => setState("failed"));
        }}
      >
        {t("alerts.enable")}
      </button>
      <p className="hint">{state === "failed" ? t("alerts.failed") : t("alerts.enableHint")}</p>
    </div>
  );
}

// Local stack only (the simulators page): what the Web Push service simulator received (docs/push.md), newest
// first, each message as the phone's service worker would read it once decrypted.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { ErrorNote } from "../../../components/ui.tsx";
import { formatDateTime } from "../../../format.ts";
import { pushInboxQuery } from "../api/queries.ts";

export function PushInbox() {
  const { t } = useTranslation();
  const inbox = useQuery({
    ...pushInboxQuery(),
    refetchInterval: 2_000,
  });
  const messages = inbox.data?.messages.slice(0, 20) ?? [];
  return (
    <section aria-labelledby="sim-webpush-title">
      <h2 id="sim-webpush-title">{t("alerts.sim.title")}</h2>
      <ErrorNote error={inbox.error} />
      {inbox.isSuccess && messages.length === 0 && <p>{t("alerts.sim.none")}</p>}
      <ul className="list">
        {messages.map((m) => (
          <li key={m.id}>
            <strong>
              {t("alerts.sim.to", { to: m.label ?? m.subscription_id.slice(0, 8), at: formatDateTime(m.received_at) })}
            </strong>
            <br />
            <span className="muted">
              {t("alerts.sim.meta", { ttl: m.ttl, urgency: m.urgency, size: m.size })}
            </span>
            <pre className="wrap-anywhere">{m.payload ?? t("alerts.sim.undecrypted", { why: m.decrypt_error ?? "" })}</pre>
          </li>
        ))}
      </ul>
    </section>
  );
}

// Local stack only (the simulators page): what the Web Push service simulator received (docs/push.md), newest
// first, each message as the phone's service worker would read it once decrypted.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { ApiError } from "../../../api/client.ts";
import { ErrorNote } from "../../../components/ui.tsx";
import { config } from "../../../config.ts";
import { formatDateTime } from "../../../format.ts";

interface PushedMessage {
  id: string;
  subscription_id: string;
  label: string | null;
  received_at: string;
  ttl: number;
  urgency: string;
  topic: string | null;
  size: number;
  payload: string | null;
  decrypt_error: string | null;
}

export function PushInbox() {
  const { t } = useTranslation();
  const inbox = useQuery({
    queryKey: ["sim-webpush"],
    queryFn: async () => {
      const res = await fetch(`${config.apiUrl}/_sim/webpush/messages`).catch(() => null);
      if (!res?.ok) throw new ApiError(res?.status ?? 0, null);
      return (await res.json()) as { messages: PushedMessage[] };
    },
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

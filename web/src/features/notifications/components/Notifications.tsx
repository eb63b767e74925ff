// Notifications to recipients: the settings page (which events, on which
// channels; owners and admins), and a delivery's messages with the button that
// erases its recipient's data (LGPD), shown on the delivery's page.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Delivery } from "../../../api/client.ts";
import { Badge, ErrorNote, Note } from "../../../components/ui.tsx";
import { formatDateTime } from "../../../format.ts";
import { notificationKeys } from "../api/keys.ts";
import { deliveryNotificationsQuery, notificationSettingsQuery } from "../api/queries.ts";
import { DataTable } from "../../../components/ui/table/index.ts";

const EVENTS = ["created", "started", "nearby", "completed", "failed"] as const;
const CHANNELS = ["whatsapp", "email"] as const;
type Settings = { events: (typeof EVENTS)[number][]; channels: (typeof CHANNELS)[number][] };

/** A list with `value` in or out, in the order of `all`. */
function toggled<T extends string>(all: readonly T[], list: T[], value: T, on: boolean): T[] {
  return all.filter((v) => (v === value ? on : list.includes(v)));
}

export default function NotificationSettingsPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const query = useQuery(notificationSettingsQuery());
  const save = useMutation({
    mutationKey: notificationKeys.settings(),
    mutationFn: (body: Settings) => call(api.PUT("/api/v1/notifications/settings", { body })),
    // The box shows the new state at once; the answer (or a refetch after an error) settles it.
    onMutate: (body) => client.setQueryData(notificationKeys.settings(), body),
    onSuccess: (saved) => {
      if (client.isMutating({ mutationKey: notificationKeys.settings() }) <= 1) {
        client.setQueryData(notificationKeys.settings(), saved);
      }
    },
    onError: () => void client.invalidateQueries({ queryKey: notificationKeys.settings() }),
  });
  const current = query.data as Settings | undefined;
  return (
    <section aria-labelledby="notifications-title">
      <h1 id="notifications-title">{t("notifications.title")}</h1>
      <p>{t("notifications.intro")}</p>
      <ErrorNote error={query.error ?? save.error} />
      {current && (
        <>
          <fieldset className="card">
            <legend>{t("notifications.events")}</legend>
            {EVENTS.map((event) => (
              <label key={event} className="check">
                <input
                  type="checkbox"
                  checked={current.events.includes(event)}
                  onChange={(e) =>
                    save.mutate({ ...current, events: toggled(EVENTS, current.events, event, e.target.checked) })}
                />
                {t(`notifications.event.${event}`)}
              </label>
            ))}
          </fieldset>
          <fieldset className="card">
            <legend>{t("notifications.channels")}</legend>
            {CHANNELS.map((channel) => (
              <label key={channel} className="check">
                <input
                  type="checkbox"
                  checked={current.channels.includes(channel)}
                  onChange={(e) =>
                    save.mutate({
                      ...current,
                      channels: toggled(CHANNELS, current.channels, channel, e.target.checked),
                    })}
                />
                {t(`notifications.channel.${channel}`)}
              </label>
            ))}
          </fieldset>
        </>
      )}
      {save.isSuccess && <Note>{t("notifications.saved")}</Note>}
    </section>
  );
}

/**
 * Why a message was not sent, or why its last attempt failed: the platform's reasons in words; the provider's answer
 * (Meta's or the mail server's, in English) quoted as it came.
 */
function MessageError({ error }: { error: string }) {
  const { t } = useTranslation();
  if (error === "the recipient's address was erased") return <div className="hint">{t("notifications.whyErased")}</div>;
  const outdated = /^outdated: the delivery is (\w+) now$/.exec(error);
  if (outdated) {
    return (
      <div className="hint">
        {t("notifications.whyOutdated", { status: t(`status.${outdated[1]}` as "status.completed") })}
      </div>
    );
  }
  const gaveUp = /^gave up after 24 hours: (.*)$/s.exec(error);
  return (
    <div className="hint">
      {t(gaveUp ? "notifications.whyGaveUp" : "notifications.whyProvider")} <q lang="en">{gaveUp?.[1] ?? error}</q>
    </div>
  );
}

/** The messages to a delivery's recipient, and erasing the recipient's data. */
export function DeliveryNotifications({ delivery, onErased }: { delivery: Delivery; onErased(d: Delivery): void }) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const messages = useQuery({
    ...deliveryNotificationsQuery(delivery),
    // Messages leave the queue within seconds of the change that queued them.
    refetchInterval: (q) => (q.state.data?.items.some((m) => m.status === "queued") ? 3_000 : false),
  });
  const erase = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries/{id}/erase-recipient", { params: { path: { id: delivery.id } } })),
    onSuccess: (d) => {
      setConfirming(false);
      onErased(d);
      void messages.refetch();
    },
  });
  const items = messages.data?.items ?? [];
  const hasRecipient = !!(delivery.recipient_name || delivery.recipient_phone || delivery.recipient_email);
  return (
    <section className="card" aria-labelledby="messages-title">
      <h2 id="messages-title">{t("notifications.messages")}</h2>
      <ErrorNote error={messages.error} />
      {messages.isSuccess && items.length === 0 && <p>{t("notifications.none")}</p>}
      {items.length > 0 && (
        <DataTable
          items={items}
          itemKey={(m) => `${m.event}/${m.channel}`}
          columns={[
            { header: t("notifications.columns.event"), cell: (m) => t(`notifications.eventShort.${m.event}`) },
            {
              header: t("notifications.columns.to"),
              cell: (m) => `${t(`notifications.channel.${m.channel}`)}: ${m.to ?? t("notifications.erased")}`,
            },
            {
              header: t("notifications.columns.status"),
              cell: (m) => (
                <>
                  <Badge value={m.status} text={t(`notifications.status.${m.status}`)} />
                  <div className="hint">{t("notifications.columns.attempts")}: {m.attempts}</div>
                  {m.error && <MessageError error={m.error} />}
                </>
              ),
            },
            {
              header: t("notifications.columns.sentAt"),
              cell: (m) => (m.sent_at ? <time dateTime={m.sent_at}>{formatDateTime(m.sent_at)}</time> : "—"),
            },
          ]}
        />
      )}
      {hasRecipient && (
        <div>
          <p className="hint">{t("notifications.eraseHint")}</p>
          <ErrorNote error={erase.error} />
          {!confirming
            ? (
              <button type="button" className="danger" onClick={() => setConfirming(true)}>
                {t("notifications.erase")}
              </button>
            )
            : (
              <button type="button" className="danger" disabled={erase.isPending} onClick={() => erase.mutate()}>
                {erase.isPending ? t("notifications.erasing") : t("notifications.eraseConfirm")}
              </button>
            )}
        </div>
      )}
      {erase.isSuccess && <Note>{t("notifications.erasedNote")}</Note>}
    </section>
  );
}

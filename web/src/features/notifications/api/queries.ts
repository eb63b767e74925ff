// Every read about notifications, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, ApiError, call, type Delivery } from "../../../api/client.ts";
import { config } from "../../../config.ts";
import { notificationKeys } from "./keys.ts";

/** A message the local Web Push service received. */
export interface PushedMessage {
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

/** What the company's recipients are sent, and how. */
export const notificationSettingsQuery = () =>
  queryOptions({
    queryKey: notificationKeys.settings(),
    queryFn: () => call(api.GET("/api/v1/notifications/settings")),
  });

/** The messages a delivery's recipient was sent. */
export const deliveryNotificationsQuery = (delivery: Pick<Delivery, "id" | "status" | "eta_at">) =>
  queryOptions({
    queryKey: notificationKeys.delivery(delivery.id, delivery.status, delivery.eta_at),
    queryFn: () => call(api.GET("/api/v1/deliveries/{id}/notifications", { params: { path: { id: delivery.id } } })),
  });

/** What the local Web Push simulator received. */
export const pushInboxQuery = () =>
  queryOptions({
    queryKey: notificationKeys.pushInbox(),
    queryFn: async () => {
      const res = await fetch(`${config.apiUrl}/_sim/webpush/messages`).catch(() => null);
      if (!res?.ok) throw new ApiError(res?.status ?? 0, null);
      return (await res.json()) as { messages: PushedMessage[] };
    },
  });

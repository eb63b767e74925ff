// The events a delivery's recipient can be told of and the channels, as the
// database names them (supabase/schemas/13_notifications.sql): the api's
// settings and the notifications function's messages both use them.
export const NOTIFICATION_EVENTS = ["created", "started", "nearby", "completed", "failed"] as const;
export type NotificationEvent = typeof NOTIFICATION_EVENTS[number];
export const NOTIFICATION_CHANNELS = ["whatsapp", "email"] as const;
export type NotificationChannel = typeof NOTIFICATION_CHANNELS[number];

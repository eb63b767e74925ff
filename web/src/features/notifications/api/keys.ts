// The query keys of notifications: the company's settings, a delivery's messages, the local Web Push inbox.
export const notificationKeys = {
  settings: () => ["notification-settings"] as const,
  /** A delivery's messages, read again when its status or ETA changes (which queues new ones). */
  delivery: (id: string, status: string, etaAt: string | null | undefined) =>
    ["delivery-notifications", id, status, etaAt] as const,
  pushInbox: () => ["sim-webpush"] as const,
};

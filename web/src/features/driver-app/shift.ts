// The driver's shift as the screens show it: the deliveries under way (in order, with what the driver did that
// has not reached the server yet applied on top), the offers, today's completed deliveries, and the cancelled
// ones still to explain. Each list is the server's, read per status so none is cut short by older deliveries;
// Realtime and the answers to actions keep them current (features/deliveries/api/cache.ts): the server tells a driver when a
// delivery becomes available or is offered to it, and when it stops being open to it (delivery_unavailable:
// another driver took it, the company assigned or cancelled it, the offer ended). An offer with a deadline also
// leaves the screen when the deadline passes (features/dispatch/dispatch.ts), on the phone's clock. Offers are read again every
// minute, in case a message was lost while the channel stayed up (a reconnect reads everything again).
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useState } from "react";
import { ApiError, type Delivery } from "../../api/client.ts";
import { timeZone } from "../../format.ts";
import { useAuth } from "../../lib/auth.tsx";
import { offerView } from "../dispatch/dispatch.ts";
import { type OutboxItem, useOutboxItems } from "../../lib/outbox.ts";
import { driverPay } from "../money/pay.ts";
import { deliveriesQuery } from "../deliveries/api/queries.ts";
import { newestById } from "../deliveries/api/cache.ts";
import { pricesQuery } from "../money/api/queries.ts";

const OFFERS_REFRESH_MS = 60_000;
const EXPLAIN_CANCELLED_FOR_MS = 24 * 3600_000;

export type ActiveStatus = "accepted" | "in_progress" | "returning";

/** One of the driver's deliveries under way, as the driver sees it now. */
export interface ShiftDelivery {
  delivery: Delivery;
  /** The status once what is queued reaches the server. */
  status: ActiveStatus;
  /** The driver's action on its way or waiting for a connection, if any. */
  queued: OutboxItem | null;
  /** The driver's last action on it that the server refused, if any. */
  refused: OutboxItem | null;
}

function useList(driverId: string | undefined, status: string, limit: number) {
  return useQuery({ ...deliveriesQuery({ driver_id: driverId, status }, limit), enabled: !!driverId });
}

/** A query's error worth showing: not "no connection" over data the screen has (the status bar says it). */
const shown = (query: { error: unknown; data: unknown }) =>
  query.error instanceof ApiError && query.error.status === 0 && query.data ? null : query.error;

const dayIn = (iso: string, zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date(iso));

const RANK: Record<ActiveStatus, number> = { returning: 0, in_progress: 1, accepted: 2 };

/** The effect an action has on a delivery's status once the server takes it. */
const EFFECT: Record<string, ActiveStatus | undefined> = { accept: "accepted", start: "in_progress" };

/**
 * The deliveries this device showed the driver as under way and has not explained the end of yet: a cancelled one
 * among them is explained (once, until dismissed). Kept per driver in localStorage, the last 100.
 */
const seenKey = (driverId: string) => `deliveries-under-way:${driverId}`;
function readSeen(driverId: string): string[] {
  try {
    return JSON.parse(localStorage.getItem(seenKey(driverId)) ?? "[]");
  } catch {
    return [];
  }
}
function writeSeen(driverId: string, ids: string[]) {
  try {
    localStorage.setItem(seenKey(driverId), JSON.stringify(ids.slice(-100)));
  } catch {
    // private mode: remembered for this page only
  }
}

export function useShift() {
  const { identity } = useAuth();
  const driverId = identity?.driverId ?? undefined;
  const accepted = useList(driverId, "accepted", 100);
  const inProgress = useList(driverId, "in_progress", 100);
  // Called back by the company while in progress: the goods go back to the origin (the return button).
  const returning = useList(driverId, "returning", 100);
  const completed = useList(driverId, "completed", 50);
  const cancelled = useList(driverId, "cancelled", 10);
  const offers = useQuery({
    ...deliveriesQuery({ status: "pending" }, 50),
    enabled: !!driverId,
    refetchInterval: OFFERS_REFRESH_MS,
  });
  const items = useOutboxItems();
  const [seen, setSeen] = useState<string[]>(() => (driverId ? readSeen(driverId) : []));
  const now = useNextDeadline(offers.data?.items, offers.refetch);

  const shift = useMemo(() => {
    const waiting = items.filter((i) => i.state !== "failed");
    const refused = items.filter((i) => i.state === "failed");
    const offered = (offers.data?.items ?? []).filter((d) => d.status === "pending" && !d.driver_id);
    // Read apart (and kept on the device across a reload), two lists can hold one delivery before and after a
    // change: it is under way in its newest version, never back in an earlier state, or off the screen and back
    // (which would drop the proof being taken on its card). A tie goes to the later state.
    const known = newestById(accepted.data?.items, inProgress.data?.items, returning.data?.items);
    // An offer accepted with no connection is the driver's until the server says otherwise.
    for (const item of waiting) {
      const offer = offered.find((d) => d.id === item.deliveryId);
      if (item.action === "accept" && offer && !known.has(offer.id)) known.set(offer.id, offer);
    }
    const active: ShiftDelivery[] = [...known.values()].map((delivery) => {
      const mine = waiting.filter((i) => i.deliveryId === delivery.id);
      let status = (delivery.status === "pending" ? "accepted" : delivery.status) as ActiveStatus;
      for (const item of mine) status = EFFECT[item.action] ?? status;
      return {
        delivery,
        status,
        queued: mine[0] ?? null,
        refused: refused.findLast((i) => i.deliveryId === delivery.id) ?? null,
      };
    }).sort((a, b) =>
      RANK[a.status] - RANK[b.status] ||
      (a.delivery.accepted_at ?? "\uffff").localeCompare(b.delivery.accepted_at ?? "\uffff")
    );
    const activeIds = new Set(active.map((a) => a.delivery.id));
    const today = dayIn(new Date().toISOString(), timeZone());
    const completedToday = (completed.data?.items ?? []).filter((d) =>
      d.completed_at && dayIn(d.completed_at, timeZone()) === today
    );
    const since = Date.now() - EXPLAIN_CANCELLED_FOR_MS;
    const toExplain = (cancelled.data?.items ?? []).filter((d) =>
      seen.includes(d.id) && d.cancelled_at && new Date(d.cancelled_at).getTime() > since &&
      // A refused action on it already says it was cancelled.
      !refused.some((i) => i.deliveryId === d.id)
    );
    // A decline waiting for a connection takes the offer off the screen at once.
    const declined = new Set(waiting.filter((i) => i.action === "decline").map((i) => i.deliveryId));
    return {
      active,
      offers: offered.filter((d) => !activeIds.has(d.id) && !declined.has(d.id) && offerView(d, now) !== "gone"),
      completedToday,
      cancelled: toExplain,
      // Refusals of actions on deliveries no longer under way (an offer lost, a delivery cancelled meanwhile).
      notices: refused.filter((i) => !activeIds.has(i.deliveryId)),
      waiting,
    };
  }, [items, offers.data, returning.data, inProgress.data, accepted.data, completed.data, cancelled.data, seen, now]);

  // What is under way now is remembered, so that its cancellation can be explained later, also after a reload.
  const underWay = shift.active.map((a) => a.delivery.id).join();
  useEffect(() => {
    if (!driverId || !underWay) return;
    const known = readSeen(driverId);
    const fresh = underWay.split(",").filter((id) => !known.includes(id));
    if (fresh.length > 0) writeSeen(driverId, [...known, ...fresh]);
    // Another screen of this tab may have written them first.
    setSeen(readSeen(driverId));
  }, [driverId, underWay]);

  /** The driver has read how a delivery ended. */
  const dismissCancelled = useCallback((id: string) => {
    if (!driverId) return;
    writeSeen(driverId, readSeen(driverId).filter((x) => x !== id));
    setSeen(readSeen(driverId));
  }, [driverId]);

  return {
    ...shift,
    loading: accepted.isPending || inProgress.isPending || returning.isPending,
    offersLoading: offers.isPending,
    error: shown(accepted) ?? shown(inProgress) ?? shown(returning),
    offersError: shown(offers),
    dismissCancelled,
  };
}

/**
 * The time, moved on when the next offer's deadline passes (so the offer leaves the screen then), and the offers
 * read again at that moment (the next one may be this driver's, or the delivery open to everyone).
 */
function useNextDeadline(deliveries: Delivery[] | undefined, refetch: () => unknown): number {
  const [now, setNow] = useState(() => Date.now());
  const next = Math.min(
    ...(deliveries ?? []).map((d) => (d.offer_expires_at ? Date.parse(d.offer_expires_at) : Infinity))
      .filter((at) => at > now),
  );
  useEffect(() => {
    if (!Number.isFinite(next)) return;
    const timer = setTimeout(() => {
      setNow(Date.now());
      void refetch();
    }, Math.max(0, next - Date.now()) + 50);
    return () => clearTimeout(timer);
  }, [next, refetch]);
  return now;
}

/** The driver's pay for a delivery's price (features/money/pay.ts), once the company's share is known. */
export function usePay(): (price: unknown) => number | null {
  const prices = useQuery(pricesQuery());
  const share = prices.data?.driver_share;
  return (price) => (share == null || typeof price !== "number" ? null : driverPay(price, share));
}

// The user's private Realtime channel (company:{id} for managers,
// driver:{id} for drivers): its events update the TanStack Query cache, so
// every list and page changes without a reload; pages may also listen. Who is
// online is not Realtime presence, whose payload says whatever its sender
// writes: it is each driver's latest accepted position (online-drivers.ts),
// which driver_location keeps current here.
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { Delivery, DriverLocation, DriverLocationItem, Page, Schemas, Withdrawal } from "../api/client.ts";
import { type Identity, useAuth } from "./auth.tsx";
import { applyDelivery, dropUnavailable, newest } from "../features/deliveries/api/cache.ts";
import { isProofUrls } from "../features/deliveries/api/keys.ts";
import { driverKeys } from "../features/drivers/api/keys.ts";
import { walletKeys, withdrawalKeys } from "../features/money/api/keys.ts";
import { routeKeys } from "../features/routes/api/keys.ts";
import { reportAnswer } from "./online.ts";
import { supabase } from "./supabase.ts";

type Versioned = { id: string; updated_at: string };
type Route = Schemas["Route"];
type Listener = (event: string, payload: Record<string, unknown>) => void;

interface RealtimeState {
  connected: boolean;
  subscribe(listener: Listener): () => void;
}

const RealtimeContext = createContext<RealtimeState>({
  connected: false,
  subscribe: () => () => {},
});

function applyEvent(client: QueryClient, event: string, payload: Record<string, unknown>) {
  if (event === "driver_location") {
    const location = payload as unknown as DriverLocation;
    client.setQueryData<{ items: DriverLocationItem[] }>(driverKeys.locations(), (old) =>
      old && {
        ...old,
        items: old.items.map((item) => (item.driver_id === location.driver_id ? { ...item, ...location } : item)),
      });
  } else if (event === "delivery_updated" || event === "delivery_available" || event === "delivery_offered") {
    // delivery_offered: the delivery with the driver's offer's deadline (`offer_expires_at`), to the drivers offered it.
    applyDelivery(client, payload as unknown as Delivery);
  } else if (event === "delivery_unavailable") {
    // To a driver: a delivery it could take is no longer open to it (taken, cancelled, its offer ended).
    dropUnavailable(client, payload as unknown as Delivery);
  } else if (event === "driver_deactivated") {
    // The company deactivated this driver: the next request says so (403), and ends the session with a sentence.
    void client.invalidateQueries();
  } else if (event === "route_published" || event === "route_updated") {
    // To a driver: its route, as it is now (published, a stop done, a delivery inserted, the dispatcher's order).
    const route = payload as unknown as Route;
    client.setQueriesData<Page<Route>>({ queryKey: routeKeys.lists() }, (page) => {
      if (!page?.items) return page;
      const known = page.items.some((r) => r.id === route.id);
      return {
        ...page,
        items: known ? page.items.map((r) => (r.id === route.id ? newest(r, route) : r)) : [route, ...page.items],
      };
    });
    void client.invalidateQueries({ queryKey: routeKeys.lists() });
  } else if (event === "withdrawal_updated") {
    const withdrawal = payload as unknown as Withdrawal;
    client.setQueryData<Withdrawal>(withdrawalKeys.one(withdrawal.id), (cached) => newest(cached, withdrawal));
    client.setQueriesData<Page<Withdrawal>>({ queryKey: withdrawalKeys.lists() }, (page) => {
      if (!page?.items?.some((w) => w.id === withdrawal.id)) return page;
      return { ...page, items: page.items.map((w) => (w.id === withdrawal.id ? newest(w, withdrawal) : w)) };
    });
    void client.invalidateQueries({
      queryKey: withdrawalKeys.lists(),
      predicate: (q) => !hasItem(q.state.data, withdrawal.id),
    });
    void client.invalidateQueries({ queryKey: walletKeys.all() });
  }
}

const hasItem = (data: unknown, id: string) => !!(data as Page<Versioned> | undefined)?.items?.some((x) => x.id === id);

function topicFor(identity: Identity): string | null {
  if (identity.role === "driver") return identity.driverId ? `driver:${identity.driverId}` : null;
  return `company:${identity.companyId}`;
}

export function RealtimeProvider({ children }: { children: ReactNode }) {
  const { identity, session } = useAuth();
  const client = useQueryClient();
  const listeners = useRef(new Set<Listener>());
  const [connected, setConnected] = useState(false);

  useEffect(() => {
    if (!identity || !session) return;
    const topic = topicFor(identity);
    if (!topic) return;
    const channel = supabase
      .channel(topic, { config: { private: true } })
      .on("broadcast", { event: "*" }, ({ event, payload }) => {
        applyEvent(client, event, payload);
        for (const listener of listeners.current) listener(event, payload);
      });
    channel.subscribe((status) => {
      setConnected(status === "SUBSCRIBED");
      // Realtime rejoins by itself with a backoff: its success is the first sign the connection is back.
      if (status === "SUBSCRIBED") reportAnswer(true);
      // A reconnect may have missed events: fetch again what is on screen. Not the signed URLs of stored proof
      // photos (`isProofUrls`: valid for an hour, and no event changes them): each new URL downloads the photo again,
      // on every reconnect of a flapping connection.
      if (status === "SUBSCRIBED") void client.invalidateQueries({ predicate: (q) => !isProofUrls(q.queryKey) });
    });
    return () => {
      void supabase.removeChannel(channel);
      setConnected(false);
    };
  }, [identity, session?.user.id, client]);

  const subscribe = useCallback((listener: Listener) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);
  const value = useMemo<RealtimeState>(() => ({ connected, subscribe }), [connected, subscribe]);
  return <RealtimeContext.Provider value={value}>{children}</RealtimeContext.Provider>;
}

export const useRealtime = () => useContext(RealtimeContext);

/** Calls `handler` for each event of the user's channel while the component is mounted. */
export function useRealtimeEvent(handler: Listener) {
  const { subscribe } = useRealtime();
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => subscribe((event, payload) => ref.current(event, payload)), [subscribe]);
}

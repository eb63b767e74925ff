// The user's private Realtime channel (company:{id} for managers,
// driver:{id} for drivers): its events update the TanStack Query cache, so
// every list and page changes without a reload; pages may also listen.
// Presence (who is online) rides on the company channel.
import type { RealtimeChannel } from "@supabase/supabase-js";
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { Delivery, DriverLocation, DriverLocationItem, Page, Withdrawal } from "../api/client.ts";
import { type Identity, useAuth } from "./auth.tsx";
import { applyDelivery, newest } from "./deliveries.ts";
import { reportAnswer } from "./online.ts";
import { supabase } from "./supabase.ts";

type Versioned = { id: string; updated_at: string };
type Listener = (event: string, payload: Record<string, unknown>) => void;

interface RealtimeState {
  connected: boolean;
  /** driver ids present on the company channel. */
  online: Set<string>;
  subscribe(listener: Listener): () => void;
}

const RealtimeContext = createContext<RealtimeState>({
  connected: false,
  online: new Set(),
  subscribe: () => () => {},
});

export const presenceTopic = (companyId: string) => `company:${companyId}`;

function applyEvent(client: QueryClient, event: string, payload: Record<string, unknown>) {
  if (event === "driver_location") {
    // Who is online and where (lib/online-drivers.ts).
    const location = payload as unknown as DriverLocation;
    client.setQueryData<{ items: DriverLocationItem[] }>(["locations"], (old) =>
      old && {
        ...old,
        items: old.items.map((item) => (item.driver_id === location.driver_id ? { ...item, ...location } : item)),
      });
  } else if (event === "delivery_updated" || event === "delivery_available" || event === "delivery_offered") {
    // delivery_offered: the delivery with the driver's offer's deadline (`offer_expires_at`), to the drivers offered it.
    applyDelivery(client, payload as unknown as Delivery);
  } else if (event === "withdrawal_updated") {
    const withdrawal = payload as unknown as Withdrawal;
    client.setQueryData<Withdrawal>(["withdrawal", withdrawal.id], (cached) => newest(cached, withdrawal));
    client.setQueriesData<Page<Withdrawal>>({ queryKey: ["withdrawals"] }, (page) => {
      if (!page?.items?.some((w) => w.id === withdrawal.id)) return page;
      return { ...page, items: page.items.map((w) => (w.id === withdrawal.id ? newest(w, withdrawal) : w)) };
    });
    void client.invalidateQueries({
      queryKey: ["withdrawals"],
      predicate: (q) => !hasItem(q.state.data, withdrawal.id),
    });
    void client.invalidateQueries({ queryKey: ["wallet"] });
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
  const [online, setOnline] = useState<Set<string>>(new Set());

  useEffect(() => {
    if (!identity || !session) return;
    const topic = topicFor(identity);
    if (!topic) return;
    const channels: RealtimeChannel[] = [];
    const channel = supabase
      .channel(topic, { config: { private: true, presence: { key: identity.driverId ?? identity.userId } } })
      .on("broadcast", { event: "*" }, ({ event, payload }) => {
        applyEvent(client, event, payload);
        for (const listener of listeners.current) listener(event, payload);
      });
    if (identity.role !== "driver") {
      channel.on("presence", { event: "sync" }, () => {
        const state = channel.presenceState<{ driver_id?: string }>();
        const ids = new Set<string>();
        for (const metas of Object.values(state)) for (const meta of metas) if (meta.driver_id) ids.add(meta.driver_id);
        setOnline(ids);
      });
    }
    channel.subscribe((status) => {
      setConnected(status === "SUBSCRIBED");
      // Realtime rejoins by itself with a backoff: its success is the first sign the connection is back.
      if (status === "SUBSCRIBED") reportAnswer(true);
      // A reconnect may have missed events: fetch again what is on screen.
      if (status === "SUBSCRIBED") void client.invalidateQueries();
    });
    channels.push(channel);

    if (identity.role === "driver") {
      // The driver announces itself on its company's channel while the app is open.
      const presence = supabase.channel(presenceTopic(identity.companyId), {
        // enabled: a channel with no presence listeners would otherwise join for broadcast only.
        config: { private: true, presence: { key: identity.driverId ?? identity.userId, enabled: true } },
      });
      presence.subscribe((status) => {
        if (status === "SUBSCRIBED") {
          void presence.track({ driver_id: identity.driverId, online_at: new Date().toISOString() });
        }
        // A platform that does not let drivers announce themselves: no presence, and no endless rejoining.
        if (status === "CHANNEL_ERROR") void supabase.removeChannel(presence);
      });
      channels.push(presence);
    }
    return () => {
      for (const ch of channels) void supabase.removeChannel(ch);
      setConnected(false);
    };
  }, [identity, session?.user.id, client]);

  const subscribe = useCallback((listener: Listener) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  }, []);
  const value = useMemo<RealtimeState>(() => ({ connected, online, subscribe }), [connected, online, subscribe]);
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

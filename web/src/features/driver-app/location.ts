// The driver's position, sent while the driver has a delivery under way: one sender per driver however many tabs
// are open (a Web Lock; the other tabs show what the sender tells them over a BroadcastChannel), at most one
// update per 10 s counted from the last one the server accepted (kept in localStorage, so a reload waits out the
// window instead of being refused), a 429's Retry-After waited out as a normal pause, and the latest position
// sent as soon as the connection comes back.
import { useSyncExternalStore } from "react";
import { api, ApiError, call } from "../../api/client.ts";
import { reportApiError } from "../../lib/auth.tsx";
import { isOnline, subscribeOnline } from "../../lib/online.ts";

const WINDOW_MS = 10_000;
const MARGIN_MS = 300;

export type SharingState =
  /** Waiting for the first position or answer. */
  | { kind: "starting" }
  /** The server has the position of `at` (ISO time). */
  | { kind: "sent"; at: string; lat: number; lng: number; nextAt: number }
  /** Waiting out the server's window before the next update. */
  | { kind: "waiting"; nextAt: number; at?: string; lat?: number; lng?: number }
  /** No connection: the latest position goes when it returns. */
  | { kind: "offline"; at?: string }
  /** The browser (or the person) refused the position. */
  | { kind: "denied" }
  | { kind: "unsupported" }
  /** The server refused the update (not a rate limit): the sentence comes from the error. */
  | { kind: "failed"; error: unknown };

const lastKey = (driverId: string) => `location-sent:${driverId}`;

function lastAccepted(driverId: string): number {
  try {
    return Number(localStorage.getItem(lastKey(driverId))) || 0;
  } catch {
    return 0;
  }
}

function rememberAccepted(driverId: string, at: number) {
  try {
    localStorage.setItem(lastKey(driverId), String(at));
  } catch {
    // private mode: the next reload may wait a window more
  }
}

function position(): Promise<GeolocationPosition> {
  return new Promise((resolve, reject) =>
    navigator.geolocation.getCurrentPosition(resolve, reject, {
      enableHighAccuracy: true,
      maximumAge: 0,
      timeout: 8_000,
    })
  );
}

const finite = (value: number | null) => (value != null && Number.isFinite(value) ? value : null);

/** The loop of the one tab that sends, until `signal` aborts. */
async function send(driverId: string, signal: AbortSignal, tell: (state: SharingState) => void) {
  let last = { kind: "starting" } as SharingState;
  const say = (state: SharingState) => {
    last = state;
    tell(state);
  };
  let wake: () => void = () => {};
  const sleep = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, Math.max(0, ms));
      wake = () => {
        clearTimeout(timer);
        done();
      };
    });
  const unsubscribe = subscribeOnline(() => {
    if (isOnline()) wake();
  });
  signal.addEventListener("abort", () => wake());
  try {
    while (!signal.aborted) {
      const allowedAt = lastAccepted(driverId) + WINDOW_MS + MARGIN_MS;
      if (Date.now() < allowedAt) {
        if (last.kind !== "sent" && last.kind !== "offline") say({ kind: "waiting", nextAt: allowedAt });
        await sleep(allowedAt - Date.now());
        continue;
      }
      let coords: GeolocationCoordinates;
      try {
        coords = (await position()).coords;
      } catch (error) {
        // Refused by the person or the browser; a position not found in time is tried again, saying nothing new.
        if ((error as GeolocationPositionError).code === 1) say({ kind: "denied" });
        await sleep(WINDOW_MS);
        continue;
      }
      if (signal.aborted) break;
      try {
        const heading = finite(coords.heading);
        const sent = await call(api.PUT("/api/v1/locations/me", {
          body: {
            lat: coords.latitude,
            lng: coords.longitude,
            heading: heading != null && heading < 360 ? heading : null,
            speed: finite(coords.speed),
            accuracy: finite(coords.accuracy),
          },
        }));
        const now = Date.now();
        rememberAccepted(driverId, now);
        say({ kind: "sent", at: sent.updated_at, lat: sent.lat, lng: sent.lng, nextAt: now + WINDOW_MS + MARGIN_MS });
      } catch (error) {
        if (error instanceof ApiError && error.status === 429) {
          // Too early for the server (another device, or a send whose answer was lost): wait as it says.
          const wait = (error.retryAfter ?? WINDOW_MS / 1000) * 1000;
          rememberAccepted(driverId, Date.now() + wait - WINDOW_MS);
          const at = last.kind === "sent" ? last : {};
          say({ kind: "waiting", nextAt: Date.now() + wait + MARGIN_MS, ...at });
          continue;
        }
        if (error instanceof ApiError && (error.status === 0 || error.status >= 500)) {
          say({ kind: "offline", at: last.kind === "sent" || last.kind === "waiting" ? last.at : undefined });
          // Sent again when the connection comes back, or after a window.
          await sleep(isOnline() ? WINDOW_MS : 60_000);
          continue;
        }
        reportApiError(error);
        say({ kind: "failed", error });
        await sleep(WINDOW_MS * 3);
      }
    }
  } finally {
    unsubscribe();
  }
}

/**
 * Shares the driver's position until the returned function is called. `tell` hears every state, from this tab
 * when it is the sender, or from the tab that is.
 */
export function shareLocation(driverId: string, tell: (state: SharingState) => void): () => void {
  if (!("geolocation" in navigator)) {
    tell({ kind: "unsupported" });
    return () => {};
  }
  const stop = new AbortController();
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`location:${driverId}`) : null;
  let sending = false;
  let latest: SharingState = { kind: "starting" };
  const broadcast = (state: SharingState) => {
    latest = state;
    tell(state);
    // An error object does not cross tabs: the others hear the kind.
    channel?.postMessage(state.kind === "failed" ? { kind: "failed", error: null } : state);
  };
  channel?.addEventListener("message", (event: MessageEvent) => {
    const message = event.data as SharingState | { kind: "hello" };
    // A tab just opened asks how sharing goes: the sender says.
    if (message.kind === "hello") {
      if (sending) broadcast(latest);
    } else if (!sending) tell(message);
  });
  tell({ kind: "starting" });
  channel?.postMessage({ kind: "hello" });
  const run = () => {
    sending = true;
    return send(driverId, stop.signal, broadcast).finally(() => (sending = false));
  };
  if (navigator.locks) {
    navigator.locks.request(`location:${driverId}`, { signal: stop.signal }, run).catch(() => {});
  } else {
    void run();
  }
  return () => {
    stop.abort();
    channel?.close();
  };
}

// How sharing goes, for every screen of this tab (the status bar starts and stops it).
let sharing: SharingState | null = null;
const sharingListeners = new Set<() => void>();

export function publishSharing(state: SharingState | null) {
  sharing = state;
  for (const listener of sharingListeners) listener();
}

export function useSharing(): SharingState | null {
  return useSyncExternalStore((listener) => {
    sharingListeners.add(listener);
    return () => void sharingListeners.delete(listener);
  }, () => sharing);
}

// Whether the app can reach the platform: the browser's own word (navigator.onLine and its events) and what the
// last request found (no answer at all means no connection, whatever the browser says: a dead mobile link often
// keeps onLine true). "No connection" is said as such, apart from a connection that is up while the server or
// Realtime is not answering. TanStack Query follows it too (main.tsx), so queries wait for the connection.
import { useSyncExternalStore } from "react";

let unanswered = false;
const listeners = new Set<() => void>();
const tell = () => {
  for (const listener of listeners) listener();
};

export const isOnline = () => navigator.onLine && !unanswered;

/** What a request found: an answer (any status), or none. */
export function reportAnswer(answered: boolean) {
  if (unanswered !== answered) return;
  unanswered = !answered;
  tell();
}

export function subscribeOnline(listener: () => void): () => void {
  if (listeners.size === 0) {
    window.addEventListener("online", browserOnline);
    window.addEventListener("offline", tell);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      window.removeEventListener("online", browserOnline);
      window.removeEventListener("offline", tell);
    }
  };
}

/** The browser says the connection is back: worth trying again, whatever the last request found. */
function browserOnline() {
  unanswered = false;
  tell();
}

export const useOnline = () => useSyncExternalStore(subscribeOnline, isOnline);

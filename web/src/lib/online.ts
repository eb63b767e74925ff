// Whether the browser has a connection at all (navigator.onLine and its events): "no connection" is said as such,
// apart from a connection that is up while the server or Realtime is not answering.
import { useSyncExternalStore } from "react";

function subscribe(listener: () => void) {
  window.addEventListener("online", listener);
  window.addEventListener("offline", listener);
  return () => {
    window.removeEventListener("online", listener);
    window.removeEventListener("offline", listener);
  };
}

export const useOnline = () => useSyncExternalStore(subscribe, () => navigator.onLine);

// Whether the driver is available for offers: the driver's own choice, kept on this device per driver. While it is
// on and the app is open, the driver's position is sent (features/driver-app/location.ts, as during a delivery), which is what
// makes a driver "online" to dispatch (a position in the last 2 minutes, docs/dispatch.md): a company that offers
// or assigns deliveries automatically only considers drivers who are. Off by default: the position is the driver's
// to give. Every tab of the app follows the choice (the `storage` event).
import { useSyncExternalStore } from "react";

const key = (driverId: string) => `available:${driverId}`;
const listeners = new Set<() => void>();

function read(driverId: string): boolean {
  try {
    return localStorage.getItem(key(driverId)) === "true";
  } catch {
    return false;
  }
}

let memory: Record<string, boolean> = {};

export function setAvailable(driverId: string, on: boolean) {
  memory = { ...memory, [driverId]: on };
  try {
    if (on) localStorage.setItem(key(driverId), "true");
    else localStorage.removeItem(key(driverId));
  } catch {
    // private mode: the choice lasts while the page is open
  }
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  const storage = (event: StorageEvent) => {
    if (event.key?.startsWith("available:")) {
      memory = {};
      listener();
    }
  };
  window.addEventListener("storage", storage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", storage);
  };
}

/** Whether the driver chose to be available for offers on this device. */
export function useAvailable(driverId: string | null | undefined): boolean {
  return useSyncExternalStore(subscribe, () => (driverId ? memory[driverId] ?? read(driverId) : false));
}

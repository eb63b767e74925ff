// A driver's app opens with no connection: who the driver is and the last data seen (the driver's deliveries, the
// offers, prices, proof requirements, the wallet) are kept on the device per user, restored before the first
// screen, and refreshed from the server as soon as it answers. Only what a driver's screens read is kept.
import { dehydrate, hydrate, type QueryClient } from "@tanstack/react-query";
import { device, type SavedUser } from "./device.ts";
import { forgetProofDrafts } from "../features/driver-app/proof-drafts.ts";
import { keptOnDevice } from "../features/driver-app/api/kept.ts";

/** Changes that come together are saved together, at once: what the screen showed is on the device. */
const SAVE_EVERY_MS = 0;

export async function loadSaved(userId: string): Promise<SavedUser | null> {
  try {
    return (await (await device()).get("users", userId)) ?? null;
  } catch {
    return null; // a browser without IndexedDB (private mode): nothing kept
  }
}

/** Puts what was kept back in the cache, marked stale so that every screen asks the server again. */
export function restoreCache(client: QueryClient, saved: SavedUser | null) {
  if (!saved?.cache) return;
  hydrate(client, saved.cache);
  void client.invalidateQueries({ refetchType: "none" });
}

/** Keeps the identity and the kept queries on the device as they change, until the returned function is called. */
export function keepSaving(client: QueryClient, userId: string, identity: unknown): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const save = async () => {
    timer = undefined;
    const cache = dehydrate(client, {
      shouldDehydrateQuery: (q) => q.state.status === "success" && keptOnDevice(q.queryKey),
    });
    try {
      await (await device()).put("users", { userId, identity, cache, savedAt: Date.now() });
    } catch {
      // Nothing kept: the app still works online.
    }
  };
  void save();
  const unsubscribe = client.getQueryCache().subscribe((event) => {
    if (event.type === "updated" && !timer) timer = setTimeout(() => void save(), SAVE_EVERY_MS);
  });
  return () => {
    unsubscribe();
    clearTimeout(timer);
  };
}

/** Forgets what was kept for a user who signed out. */
export async function forget(userId: string) {
  await forgetProofDrafts(userId);
  try {
    await (await device()).delete("users", userId);
  } catch {
    // nothing was kept
  }
}

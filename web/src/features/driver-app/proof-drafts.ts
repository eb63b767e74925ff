// The proof a driver has taken for a delivery in progress (the photo, the recipient's signature, the note), kept on
// the device (lib/device.ts, store `drafts`) as it is taken, so that a reload, a crash or a closed tab does not
// lose a signature the recipient gave at the door. Dropped once the completion (or the failure) is queued: from
// then on the queue keeps the files (lib/outbox.ts). And when the driver signs out.
import { device, type ProofDraftRecord } from "../../lib/device.ts";

export type { ProofDraftRecord };

export async function loadProofDraft(deliveryId: string): Promise<ProofDraftRecord | null> {
  try {
    return (await (await device()).get("drafts", deliveryId)) ?? null;
  } catch {
    return null; // a browser without IndexedDB: nothing kept
  }
}

export async function saveProofDraft(record: ProofDraftRecord): Promise<void> {
  try {
    const db = await device();
    if (!record.photo && !record.signature && !record.note) await db.delete("drafts", record.deliveryId);
    else await db.put("drafts", record);
  } catch {
    // Nothing kept: the draft still lives on screen.
  }
}

export async function dropProofDraft(deliveryId: string): Promise<void> {
  try {
    await (await device()).delete("drafts", deliveryId);
  } catch {
    // nothing was kept
  }
}

/** Forgets every draft of a user who signed out (their photos and recipients' signatures). */
export async function forgetProofDrafts(userId: string): Promise<void> {
  try {
    const db = await device();
    for (const key of await db.getAllKeysFromIndex("drafts", "byUser", userId)) await db.delete("drafts", key);
  } catch {
    // nothing was kept
  }
}

// What the app keeps on the device, in one IndexedDB database (through `idb`): the actions waiting to be sent
// (lib/outbox.ts) and, per user, the last data seen and who the user is (lib/persist.ts), so the app opens and
// works with no connection, and the proof a driver has taken for a delivery before completing it (a photo, the
// recipient's signature: features/driver-app/components/ProofCapture.tsx), so that a reload does not lose what the recipient signed. Nothing
// here is the truth: the server is; this is what the driver did and saw.
import { type DBSchema, type IDBPDatabase, openDB } from "idb";

/**
 * A file kept with a queued action, uploaded before it: a completion's proof (photo, signature) or a failed attempt's
 * photo (`failed-{attempt}`, lib/outbox.ts). The kind is the object's name in the delivery's folder, less its extension.
 */
export interface ProofFile {
  kind: "photo" | "signature" | `failed-${number}`;
  blob: Blob;
}

/** An action taken in the app, kept until the server has answered it (see lib/outbox.ts). */
export interface OutboxItem {
  /** A UUID made when the action was taken: the item's key and its `Idempotency-Key`. */
  id: string;
  userId: string;
  deliveryId: string;
  action: string;
  /** The request body, when the action has one. */
  body?: Record<string, unknown>;
  /** Files to upload before the action (a completion's proof, a failed attempt's photo). */
  proof?: ProofFile[];
  /** Proof kinds already uploaded (or refused as already there): not sent again. */
  uploaded: string[];
  /** queued: waiting to be sent; sending: on its way; failed: refused, with the sentence why. */
  state: "queued" | "sending" | "failed";
  /** Times sent without a definite answer (a lost connection): a later refusal may mean it took effect. */
  unanswered: number;
  /** Why it was refused, as a sentence. */
  problem?: string;
  /**
   * The delivery's destination, when `problem` does not name the delivery (a refusal about the action itself,
   * shown on the delivery's card, or with this name once the delivery is off the screen).
   */
  to?: string;
  createdAt: number;
}

export interface SavedUser {
  userId: string;
  /** The identity the app resolved when last online. */
  identity: unknown;
  /** The query cache, dehydrated (TanStack Query's format). */
  cache?: unknown;
  savedAt: number;
}

/** The proof taken for a delivery in progress, not yet handed to the queue: kept until the completion is queued. */
export interface ProofDraftRecord {
  deliveryId: string;
  userId: string;
  photo: File | null;
  /** The signature pad's drawing, as a PNG. */
  signature: Blob | null;
  note: string;
  savedAt: number;
}

interface DeviceSchema extends DBSchema {
  outbox: { key: string; value: OutboxItem; indexes: { byUser: string } };
  users: { key: string; value: SavedUser };
  drafts: { key: string; value: ProofDraftRecord; indexes: { byUser: string } };
}

let opened: Promise<IDBPDatabase<DeviceSchema>> | null = null;

export function device(): Promise<IDBPDatabase<DeviceSchema>> {
  opened ??= openDB<DeviceSchema>("delivery-app", 2, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) {
        db.createObjectStore("outbox", { keyPath: "id" }).createIndex("byUser", "userId");
        db.createObjectStore("users", { keyPath: "userId" });
      }
      if (oldVersion < 2) db.createObjectStore("drafts", { keyPath: "deliveryId" }).createIndex("byUser", "userId");
    },
  });
  return opened;
}

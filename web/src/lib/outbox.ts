// The driver's actions (accept, decline, start, complete with its proof, fail with its reason and photo) survive
// a lost connection and a reload: each is kept on the device (IndexedDB) from the moment it is taken, with a UUID
// made then that is sent as its `Idempotency-Key`, and sent when the connection allows, in the order taken, by one
// tab at a time (a Web Lock per user), so each is sent once. Every tab shows the same queue (a BroadcastChannel
// says when it changed). An answer lost on the way leaves the action queued: it is sent again with the same key,
// and a refusal then is checked against the delivery (an accept whose delivery is now ours took effect). A refusal
// is kept as a sentence for the driver until dismissed.
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { api, ApiError, call, type Delivery, type Page } from "../api/client.ts";
import { errorMessage } from "../api/errors.ts";
import { i18n } from "../i18n/index.ts";
import { reportApiError } from "./auth.tsx";
import { applyDelivery } from "../features/deliveries/api/cache.ts";
import { deliveryKeys } from "../features/deliveries/api/keys.ts";
import { device, type OutboxItem, type ProofFile } from "./device.ts";
import { isOnline, reportAnswer, subscribeOnline } from "./online.ts";
import { supabase } from "./supabase.ts";

export type { OutboxItem };

export const PROOF_BUCKET = "delivery-proofs";
/** The photo of attempt `attempt` (the delivery's `attempts` while in progress) that failed, as the bucket names it. */
export const failurePhotoKind = (attempt: number) => `failed-${attempt}` as const;
const PROOF_EXTENSIONS: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };

/** How an action is sent, and how a delivery shows it took effect (for an action whose answer was lost). */
export interface ActionKind {
  send(deliveryId: string, key: string, body?: Record<string, unknown>): Promise<Delivery>;
  tookEffect(delivery: Delivery, driverId: string): boolean;
  /** A refusal that leaves the driver where the action meant to: the action is done with, nothing to tell. */
  settledBy?(error: ApiError): boolean;
}

const idempotent = (key: string) => ({ "Idempotency-Key": key });
const path = (id: string) => ({ path: { id } });

/** Every action the driver app queues. A new one is one more entry. */
export const ACTIONS: Record<string, ActionKind> = {
  accept: {
    send: (id, key) => call(api.POST("/api/v1/deliveries/{id}/accept", { params: path(id), headers: idempotent(key) })),
    tookEffect: (d, me) => d.driver_id === me && d.status !== "pending",
  },
  start: {
    send: (id, key) => call(api.POST("/api/v1/deliveries/{id}/start", { params: path(id), headers: idempotent(key) })),
    tookEffect: (d, me) => d.driver_id === me && (d.status === "in_progress" || d.status === "completed"),
  },
  complete: {
    send: (id, key, body) =>
      call(api.POST("/api/v1/deliveries/{id}/complete", {
        params: path(id),
        body: body as
          | { note?: string; collected?: { amount: number; method: "cash" | "card" }; code?: string }
          | undefined,
        headers: idempotent(key),
      })),
    tookEffect: (d, me) => d.driver_id === me && d.status === "completed",
  },
  fail: {
    send: (id, key, body) =>
      call(api.POST("/api/v1/deliveries/{id}/fail", {
        params: path(id),
        body: body as { reason: "recipient_absent"; note?: string },
        headers: idempotent(key),
      })),
    tookEffect: (d, me) => d.driver_id === me && d.status === "failed",
  },
  // The goods of a recalled delivery back at the origin (returning → returned).
  return: {
    send: (id, key) => call(api.POST("/api/v1/deliveries/{id}/return", { params: path(id), headers: idempotent(key) })),
    tookEffect: (d, me) => d.driver_id === me && d.status === "returned",
  },
  // Declining an offer (docs/dispatch.md). Kept like the others, so a decline taken with no connection still
  // reaches the company (the next driver is offered the delivery at once instead of at the deadline). When it
  // arrives after the offer expired or was withdrawn, or was already declined by an answer lost on the way (422),
  // or the delivery is out of the driver's sight (404), the driver does not hold the offer, which is what a decline
  // asks: nothing to tell.
  decline: {
    send: (id, key) =>
      call(api.POST("/api/v1/deliveries/{id}/decline", { params: path(id), headers: idempotent(key) })),
    tookEffect: () => false,
    settledBy: (error) => error.status === 404 || error.status === 422,
  },
};

/** What the server says became of an offer the driver accepted too late, as a sentence. */
const OFFER_GONE: [RegExp, "driver.offerExpired" | "driver.offerWithdrawn" | "driver.offerDeclined"][] = [
  [/^the offer of this delivery has expired$/, "driver.offerExpired"],
  [/^the offer of this delivery was withdrawn$/, "driver.offerWithdrawn"],
  [/^the offer of this delivery was (already )?declined$/, "driver.offerDeclined"],
];
function offerGone(error: unknown, to: string): string | null {
  if (!(error instanceof ApiError) || error.status !== 422) return null;
  const detail = (error.body as { detail?: unknown } | null)?.detail;
  const found = OFFER_GONE.find(([pattern]) => typeof detail === "string" && pattern.test(detail));
  return found ? i18n.t(found[1], { to }) : null;
}

/** A failure that may go away by itself: no answer, the server busy or failing, or the first try still running. */
function transient(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status === 0 || error.status === 408 || error.status === 409 || error.status === 429 ||
    error.status >= 500;
}

class Refused extends Error {}

/** Uploads one proof file over any of the same name; the bucket's refusal as its HTTP status (0 for no answer), or null. */
async function upload(name: string, blob: Blob): Promise<{ status: number; message: string } | null> {
  const { error } = await supabase.storage.from(PROOF_BUCKET).upload(name, blob, {
    contentType: blob.type,
    upsert: true,
  });
  if (!error) return null;
  return { status: (error as { status?: number }).status ?? 0, message: error.message };
}

/** Refused by the bucket's policy: not (or no longer) the driver's delivery in progress, or a name taken by the kind. */
const byPolicy = (r: { status: number; message: string }) => r.status === 403 || /row-level security/i.test(r.message);

/** The media type each proof name's extension stands for: the bucket's policy lets no other type under it. */
const EXTENSION_TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
};

/** The image drawn again as `type` (the browser decodes whatever it is and encodes it as asked). */
async function asType(blob: Blob, type: string): Promise<Blob> {
  if (blob.type === type) return blob;
  const bitmap = await createImageBitmap(blob);
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext("2d")!.drawImage(bitmap, 0, 0);
  bitmap.close();
  return await new Promise<Blob>((done, fail) =>
    canvas.toBlob((b) => (b ? done(b) : fail(new Error("the image could not be encoded"))), type, 0.9)
  );
}

/** The name under which a proof of this kind is already stored in the folder (another extension), if any. */
async function storedName(folder: string, kind: string): Promise<string | null> {
  const { data } = await supabase.storage.from(PROOF_BUCKET).list(folder);
  const found = data?.find((o) => o.name.split(".")[0] === kind);
  return found ? `${folder}/${found.name}` : null;
}

/**
 * Uploads the files of an action not uploaded yet (a completion's proof, a failed attempt's photo), each replacing
 * the driver's own earlier one (a retry after a reload, or a new photo): the bucket lets the driver of a delivery in
 * progress replace them until it is completed or fails. A photo stored earlier under another extension is replaced
 * under its name, encoded as the type that name says (the policy ties each extension to its type). When the policy
 * refuses (the delivery is no longer the driver's in progress), the action that follows is the judge, and says why
 * in a sentence.
 */
async function uploadProof(item: OutboxItem, folder: string, save: (item: OutboxItem) => Promise<void>) {
  for (const file of item.proof ?? []) {
    if (item.uploaded.includes(file.kind)) continue;
    let refused = await upload(`${folder}/${file.kind}.${PROOF_EXTENSIONS[file.blob.type] ?? "png"}`, file.blob);
    if (refused && byPolicy(refused)) {
      const stored = await storedName(folder, file.kind);
      const type = stored ? EXTENSION_TYPES[stored.split(".").pop()!] : undefined;
      if (stored && type) {
        const blob = await asType(file.blob, type).catch(() => {
          throw new Refused(i18n.t("proof.wrongType"));
        });
        refused = await upload(stored, blob);
      }
    }
    if (refused && !byPolicy(refused)) {
      const { status, message } = refused;
      if (status === 413 || /maximum allowed size/.test(message)) throw new Refused(i18n.t("proof.tooLarge"));
      if (status === 415 || /mime type/.test(message)) throw new Refused(i18n.t("proof.wrongType"));
      // No answer, the server failing, or a token to renew: another try may go through.
      if (status === 0 || status === 401 || status === 429 || status >= 500) {
        reportAnswer(status !== 0);
        throw new ApiError(status, null);
      }
      throw new Refused(i18n.t(item.action === "fail" ? "lifecycle.photoUploadFailed" : "proof.uploadFailed"));
    }
    item.uploaded = [...item.uploaded, file.kind];
    await save(item);
  }
}

type Snapshot = readonly OutboxItem[];
type Outcome = Delivery | "later" | "settled" | { problem: string; to?: string };

/** The queue of one signed-in driver, in one tab. */
export class Outbox {
  private items: Snapshot = [];
  private readonly listeners = new Set<() => void>();
  private readonly channel: BroadcastChannel | null;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private backoff = 0;
  /** When a try last found no connection (0: never, or it has gone through since). */
  private failedAt = 0;
  private closed = false;
  private readonly unsubscribeOnline: () => void;

  constructor(
    private readonly client: QueryClient,
    private readonly userId: string,
    private readonly driverId: string,
    private readonly companyId: string,
  ) {
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`outbox:${userId}`) : null;
    this.channel?.addEventListener("message", (event: MessageEvent) => {
      const message = event.data as { type: string; delivery?: Delivery };
      if (message.delivery) applyDelivery(this.client, message.delivery);
      void this.reload();
    });
    this.unsubscribeOnline = subscribeOnline(this.online);
    void this.reload().then(() => this.kick());
  }

  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.unsubscribeOnline();
    this.channel?.close();
  }

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  };
  snapshot = (): Snapshot => this.items;

  /** Keeps an action on the device and sends it as soon as the connection allows. */
  async add(action: string, deliveryId: string, extra: { body?: Record<string, unknown>; proof?: ProofFile[] } = {}) {
    const item: OutboxItem = {
      id: crypto.randomUUID(),
      userId: this.userId,
      deliveryId,
      action,
      body: extra.body,
      proof: extra.proof,
      uploaded: [],
      state: "queued",
      unanswered: 0,
      createdAt: Date.now(),
    };
    await this.save(item);
    this.changed();
    this.kick();
  }

  /** The driver has read why an action was refused. */
  async dismiss(id: string) {
    await (await device()).delete("outbox", id);
    this.changed();
  }

  /**
   * The connection looks back: try again soon, but never sooner than 2 s after a try that found none, and without
   * forgetting the backoff (only a try that goes through does). The signal flaps when one request is answered and the
   * next is not (an answered query, then this upload of the stored proof): each flip used to send it again at once.
   */
  private online = () => {
    if (!isOnline()) return;
    const wait = Math.max(0, this.failedAt + 2_000 - Date.now());
    if (wait === 0) return this.kick();
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.kick(), wait);
  };

  private async reload() {
    const all = await (await device()).getAllFromIndex("outbox", "byUser", this.userId);
    this.items = all.sort((a, b) => a.createdAt - b.createdAt);
    for (const listener of this.listeners) listener();
  }

  private changed(delivery?: Delivery) {
    void this.reload();
    this.channel?.postMessage({ type: "changed", delivery });
  }

  private save = async (item: OutboxItem) => void await (await device()).put("outbox", item);

  /**
   * Sends what is queued, under the user's lock (one tab at a time; the others wait their turn). Tried also when
   * the connection seems down (the browser may be wrong either way): a failure costs nothing, and the next try
   * waits longer, up to 30 s.
   */
  kick() {
    clearTimeout(this.retryTimer);
    if (this.closed) return;
    const run = () => this.sendAll();
    if (navigator.locks) void navigator.locks.request(`outbox:${this.userId}`, run);
    else void run();
  }

  private async sendAll() {
    const db = await device();
    while (!this.closed) {
      const queued = (await db.getAllFromIndex("outbox", "byUser", this.userId))
        .filter((i) => i.state !== "failed")
        .sort((a, b) => a.createdAt - b.createdAt);
      const item = queued[0];
      if (!item) return;
      // Left "sending" by a tab closed mid-request (the lock is ours now): its answer was lost.
      if (item.state === "sending") item.unanswered++;
      item.state = "sending";
      await this.save(item);
      this.changed();
      const outcome = await this.send(item);
      if (outcome === "later") {
        item.state = "queued";
        item.unanswered++;
        await this.save(item);
        this.changed();
        this.backoff = Math.min(30_000, Math.max(2_000, this.backoff * 2));
        this.failedAt = Date.now();
        this.retryTimer = setTimeout(() => this.kick(), this.backoff);
        return;
      }
      this.backoff = 0;
      this.failedAt = 0;
      if (outcome === "settled") {
        await db.delete("outbox", item.id);
        void this.client.invalidateQueries({ queryKey: deliveryKeys.lists() });
        this.changed();
      } else if ("problem" in outcome) {
        item.state = "failed";
        item.problem = outcome.problem;
        item.to = outcome.to;
        delete item.proof;
        await this.save(item);
        // What was queued after it on the same delivery cannot follow.
        for (const later of queued.slice(1)) {
          if (later.deliveryId === item.deliveryId) await db.delete("outbox", later.id);
        }
        this.changed();
      } else {
        await db.delete("outbox", item.id);
        applyDelivery(this.client, outcome);
        this.changed(outcome);
      }
    }
  }

  /** A delivery when done, "later" when it may go through on another try, else why it was refused. */
  private async send(item: OutboxItem): Promise<Outcome> {
    const kind = ACTIONS[item.action];
    try {
      if (item.proof?.length) await uploadProof(item, `${this.companyId}/${item.deliveryId}`, this.save);
      return await kind.send(item.deliveryId, item.id, item.body);
    } catch (error) {
      if (error instanceof Refused) return { problem: error.message, to: this.destination(item.deliveryId) };
      reportApiError(error);
      // A refused token is renewed (or the session ends) by lib/auth.tsx: the action waits for it.
      if (transient(error) || (error instanceof ApiError && error.status === 401)) return "later";
      if (error instanceof ApiError && kind.settledBy?.(error)) return "settled";
      return await this.refusal(item, kind, error);
    }
  }

  /** Why the server refused an action, in a sentence; or the delivery, when it shows the action took effect. */
  private async refusal(item: OutboxItem, kind: ActionKind, error: unknown): Promise<Outcome> {
    let current: Delivery | null = null;
    try {
      current = await call(api.GET("/api/v1/deliveries/{id}", { params: path(item.deliveryId) }));
    } catch (lookup) {
      if (transient(lookup)) return "later";
    }
    if (current && item.unanswered > 0 && kind.tookEffect(current, this.driverId)) return current;
    const to = current?.destination_address ?? this.destination(item.deliveryId);
    // The screen was out of date: the delivery as it is now, or (gone from the driver's scope) every list again.
    if (current) applyDelivery(this.client, current);
    else void this.client.invalidateQueries({ queryKey: deliveryKeys.lists() });
    // An offer that expired (an accept kept on the device past the deadline) or was withdrawn meanwhile.
    const gone = item.action === "accept" ? offerGone(error, to) : null;
    if (gone) return { problem: gone };
    if (item.action === "accept" && (!current || current.status !== "pending")) {
      return { problem: i18n.t("driver.lostRace", { to }) };
    }
    if (current?.status === "cancelled") {
      const reason = current.cancel_reason;
      return {
        problem: reason
          ? i18n.t("driver.cancelledMeanwhileWhy", { to, reason })
          : i18n.t("driver.cancelledMeanwhile", { to }),
      };
    }
    if (!current) return { problem: i18n.t("driver.notYours", { to }) };
    return { problem: errorMessage(error), to };
  }

  /** The destination of a delivery this tab has seen. */
  private destination(deliveryId: string): string {
    const seen = this.client.getQueryData<Delivery>(deliveryKeys.one(deliveryId)) ??
      this.client.getQueriesData<Page<Delivery>>({ queryKey: deliveryKeys.lists() })
        .flatMap(([, page]) => page?.items ?? []).find((d) => d.id === deliveryId);
    return seen?.destination_address ?? "";
  }
}

const EMPTY: Snapshot = [];
let current: Outbox | null = null;

/** The signed-in driver's queue in this tab (one at a time); null signs it off. */
export function openOutbox(
  client: QueryClient,
  who: { userId: string; driverId: string; companyId: string } | null,
): Outbox | null {
  current?.close();
  current = who ? new Outbox(client, who.userId, who.driverId, who.companyId) : null;
  for (const listener of opened) listener();
  return current;
}
const opened = new Set<() => void>();

export function outbox(): Outbox | null {
  return current;
}

/**
 * Opens the signed-in driver's queue for as long as the app shows them (a driver is whoever has a driverId). The app's shell calls it, not a lazily
 * loaded screen: a card's button must never be on screen before the queue it adds to (a tap would be lost).
 */
export function useDriverOutbox(who: { userId: string; driverId: string | null; companyId: string | null } | null) {
  const client = useQueryClient();
  const userId = who?.userId;
  const driverId = who?.driverId;
  const companyId = who?.companyId;
  useEffect(() => {
    if (!userId || !driverId || !companyId) return;
    openOutbox(client, { userId, driverId, companyId });
    return () => void openOutbox(client, null);
  }, [client, userId, driverId, companyId]);
}

/** The queued and refused actions, live. */
export function useOutboxItems(): Snapshot {
  const box = useSyncExternalStore(
    (listener) => {
      opened.add(listener);
      return () => void opened.delete(listener);
    },
    () => current,
  );
  return useSyncExternalStore(box?.subscribe ?? noSubscription, box?.snapshot ?? empty);
}
const noSubscription = () => () => {};
const empty = () => EMPTY;

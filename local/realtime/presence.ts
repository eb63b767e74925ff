// Presence as Realtime runs it with Phoenix.Presence: per topic, each joined
// channel may track one payload under its presence key; the state is grouped
// by key (`{key: {metas: [{phx_ref, ...payload}]}}`), and every change goes to
// the topic's channels as a `presence_diff` of joins and leaves. A channel
// that leaves, or whose socket closes, leaves with it.
import type { Payload } from "./protocol.ts";

export interface Meta extends Payload {
  phx_ref: string;
}

export type PresenceState = Record<string, { metas: Meta[] }>;

export interface PresenceDiff {
  joins: PresenceState;
  leaves: PresenceState;
}

interface Entry {
  key: string;
  meta: Meta;
}

/** Phoenix.Tracker's refs are short random base64 strings. */
function newRef(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

function group(entries: Iterable<Entry>): PresenceState {
  const state: PresenceState = {};
  for (const { key, meta } of entries) (state[key] ??= { metas: [] }).metas.push(meta);
  return state;
}

/** The presences of every topic, by the channel (any object) that tracked them. */
export class PresenceTracker<Owner> {
  readonly #topics = new Map<string, Map<Owner, Entry>>();

  constructor(readonly onDiff: (topicKey: string, diff: PresenceDiff) => void) {}

  state(topicKey: string): PresenceState {
    return group(this.#topics.get(topicKey)?.values() ?? []);
  }

  /** Tracks `payload` for `owner`, or updates it (a leave of the old meta and a join of the new one). */
  track(topicKey: string, owner: Owner, key: string, payload: Payload): void {
    const entries = this.#topics.get(topicKey) ?? new Map<Owner, Entry>();
    this.#topics.set(topicKey, entries);
    const previous = entries.get(owner);
    const meta: Meta = { ...payload, phx_ref: newRef() };
    if (previous) meta.phx_ref_prev = previous.meta.phx_ref;
    const entry = { key, meta };
    entries.set(owner, entry);
    this.onDiff(topicKey, { joins: group([entry]), leaves: previous ? group([previous]) : {} });
  }

  /** Whether `owner` tracks exactly this payload already (Realtime then does nothing). */
  tracks(topicKey: string, owner: Owner, payload: Payload): boolean {
    const entry = this.#topics.get(topicKey)?.get(owner);
    if (!entry) return false;
    const { phx_ref: _ref, phx_ref_prev: _prev, ...tracked } = entry.meta;
    return JSON.stringify(tracked) === JSON.stringify(payload);
  }

  untrack(topicKey: string, owner: Owner): void {
    const entries = this.#topics.get(topicKey);
    const entry = entries?.get(owner);
    if (!entries || !entry) return;
    entries.delete(owner);
    if (entries.size === 0) this.#topics.delete(topicKey);
    this.onDiff(topicKey, { joins: {}, leaves: group([entry]) });
  }
}

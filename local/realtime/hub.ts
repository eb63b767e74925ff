// The channels joined to each topic, across connections, the fan-out of a
// broadcast to them, and the presences tracked on each topic.
import { PresenceTracker } from "./presence.ts";
import type { Broadcast, Payload } from "./protocol.ts";
import { type Channel, type Hub, topicKey } from "./session.ts";

export class TopicHub implements Hub {
  readonly #channels = new Map<string, Set<Channel>>();
  // Like Realtime's MessageDispatcher, a presence_diff reaches every channel of the topic.
  readonly #presence = new PresenceTracker<Channel>((key, diff) => {
    for (const channel of this.#channels.get(key) ?? []) channel.deliverPresenceDiff(diff);
  });

  presenceState(channel: Channel) {
    return this.#presence.state(channel.key);
  }

  track(channel: Channel, payload: Payload): void {
    if (this.#presence.tracks(channel.key, channel, payload)) return;
    this.#presence.track(channel.key, channel, channel.presenceKey, payload);
  }

  untrack(channel: Channel): void {
    this.#presence.untrack(channel.key, channel);
  }

  subscribe(channel: Channel): void {
    const channels = this.#channels.get(channel.key) ?? new Set();
    this.#channels.set(channel.key, channels.add(channel));
  }

  /** A channel that goes leaves its presence behind, as Phoenix.Tracker reports a closed channel's leave. */
  unsubscribe(channel: Channel): void {
    const channels = this.#channels.get(channel.key);
    if (channels?.delete(channel) && channels.size === 0) this.#channels.delete(channel.key);
    this.untrack(channel);
  }

  /** Whether anyone, public or private, listens to a topic (spares the fetch of unheard messages). */
  isHeard(subTopic: string): boolean {
    return this.#channels.has(topicKey(subTopic, true)) || this.#channels.has(topicKey(subTopic, false));
  }

  publish(key: string, broadcast: Broadcast, except?: Channel): void {
    for (const channel of this.#channels.get(key) ?? []) {
      if (channel !== except) channel.deliver(broadcast);
    }
  }
}

// The channels joined to each topic, across connections, and the fan-out of a
// broadcast to them.
import type { Broadcast } from "./protocol.ts";
import { type Channel, type Hub, topicKey } from "./session.ts";

export class TopicHub implements Hub {
  readonly #channels = new Map<string, Set<Channel>>();

  subscribe(channel: Channel): void {
    const channels = this.#channels.get(channel.key) ?? new Set();
    this.#channels.set(channel.key, channels.add(channel));
  }

  unsubscribe(channel: Channel): void {
    const channels = this.#channels.get(channel.key);
    if (channels?.delete(channel) && channels.size === 0) this.#channels.delete(channel.key);
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

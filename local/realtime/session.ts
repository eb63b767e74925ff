// One WebSocket connection and the channels joined on it: the server side of
// RealtimeWeb.RealtimeChannel for Broadcast. Messages of a connection are
// handled one at a time, in order, as Phoenix's socket process does.
import type postgres from "postgres";
import type { Claims } from "../../common/jwt.ts";
import { authorize, authorizeWrite, type Policies } from "./authorization.ts";
import { bindingId, type ChangeMessage, type ChangeSubscriber, type PostgresChanges } from "./changes.ts";
import { log } from "./log.ts";
import type { PresenceDiff, PresenceState } from "./presence.ts";
import {
  type Broadcast,
  type Codec,
  type Frame,
  isPayload,
  isUserBroadcast,
  type Message,
  type Payload,
  reply,
} from "./protocol.ts";
import { type ReplayedMessage, replayedMessages, type ReplayRequest, replayRequest } from "./replay.ts";
import { type ChannelClaims, confirmToken, joinRefusal, shutdownMessage } from "./tokens.ts";

/** Where channels register to receive the broadcasts of their topic. */
export interface Hub {
  subscribe(channel: Channel): void;
  unsubscribe(channel: Channel): void;
  publish(key: string, broadcast: Broadcast, except?: Channel): void;
  presenceState(channel: Channel): PresenceState;
  track(channel: Channel, payload: Payload): void;
  untrack(channel: Channel): void;
}

export interface SessionOptions {
  sql: postgres.Sql;
  verifyToken: (token: string) => Promise<Claims>;
  /** The connection's API key: the access token of a join that brings none. */
  apiKey: string;
  headers: Record<string, string>;
  hub: Hub;
  /** postgres_changes: the subscriptions of joined channels and the changes they receive. */
  changes: PostgresChanges;
  /** The project allows private channels only (Realtime's tenant setting `private_only`). */
  privateOnly: boolean;
}

interface JoinConfig {
  private: boolean;
  self: boolean;
  ack: boolean;
  presenceEnabled: boolean;
  /** The key presences are tracked under: the client's, or a fresh UUID as Realtime gives. */
  presenceKey: string;
  postgresChanges: Payload[];
  /** `broadcast.replay`: whether the join names it, and what it asks (replay.ts). */
  replay: { asked: boolean; request: ReplayRequest };
}

/** Why a private channel may not be read: a phx_reply reason is `code: text`, a shutdown message is `text`. */
interface Denial {
  code: string;
  text: string;
}

// Realtime re-confirms a channel's token at least this often, and at its expiry.
const TOKEN_RECHECK_MS = 5 * 60_000;

/** Channels of public and private joins of one topic never see each other's messages. */
export function topicKey(subTopic: string, isPrivate: boolean): string {
  return `${isPrivate ? "private" : "public"}:${subTopic}`;
}

/** Realtime's FlexibleBoolean: true, false, or those words as strings; anything else is false. */
function flexibleBoolean(value: unknown): boolean {
  if (typeof value === "string") return value.toLowerCase() === "true";
  return value === true;
}

function parseJoinConfig(payload: unknown): JoinConfig {
  const config = isPayload(payload) && isPayload(payload.config) ? payload.config : {};
  const broadcast = isPayload(config.broadcast) ? config.broadcast : {};
  const presence = isPayload(config.presence) ? config.presence : {};
  return {
    private: flexibleBoolean(config.private),
    self: flexibleBoolean(broadcast.self),
    ack: flexibleBoolean(broadcast.ack),
    // Realtime takes only a JSON boolean here, unlike the other flags.
    presenceEnabled: presence.enabled === true,
    presenceKey: typeof presence.key === "string" && presence.key !== "" ? presence.key : crypto.randomUUID(),
    postgresChanges: Array.isArray(config.postgres_changes) ? config.postgres_changes.filter(isPayload) : [],
    replay: replayRequest(broadcast),
  };
}

/** The token a join acts with: its own, or the connection's API key (also for opaque `sb_` keys). */
function joinToken(payload: unknown, apiKey: string): string {
  const params = isPayload(payload) ? payload : {};
  const given = params.access_token ?? params.user_token;
  if (typeof given === "string" && given.startsWith("sb_")) return apiKey;
  if (typeof params.user_token === "string") return params.user_token;
  if (typeof params.access_token === "string") return params.access_token;
  return apiKey;
}

function asBroadcast(payload: unknown): Broadcast | null {
  if (isUserBroadcast(payload)) return payload;
  return isPayload(payload) ? { kind: "json", payload } : null;
}

const revoked = (before: boolean | null | undefined, after: boolean | null) => before === true && after === false;

export class Channel implements ChangeSubscriber {
  readonly key: string;
  policies: Policies | null = null;
  tokenTimer: ReturnType<typeof setTimeout> | undefined;
  /** Changes that arrived before the join's reply went out, sent right after it. */
  #heldChanges: ChangeMessage[] | null = [];
  /** The ids of the messages replayed at the join, which the channel does not get a second time. */
  replayedIds = new Set<string>();

  constructor(
    readonly session: Session,
    readonly topic: string,
    readonly subTopic: string,
    readonly joinRef: string | null,
    readonly config: JoinConfig,
    public accessToken: string,
    public claims: ChannelClaims,
  ) {
    this.key = topicKey(subTopic, config.private);
  }

  get presenceKey(): string {
    return this.config.presenceKey;
  }

  /** Like Realtime's dispatcher, a private channel that may not read presence gets no presence_diff. */
  deliverPresenceDiff(diff: PresenceDiff): void {
    if (this.config.private && this.policies?.presenceRead !== true) return;
    this.session.sendPush(this, null, "presence_diff", diff);
  }

  /** A postgres_changes message, as Realtime's MessageDispatcher pushes it (never before the join's reply). */
  deliverChange(message: ChangeMessage): void {
    if (this.#heldChanges) this.#heldChanges.push(message);
    else this.session.sendPush(this, null, "postgres_changes", message);
  }

  /** The join's reply is out: changes flow from now on. */
  releaseChanges(): void {
    const held = this.#heldChanges ?? [];
    this.#heldChanges = null;
    for (const message of held) this.session.sendPush(this, null, "postgres_changes", message);
  }

  /** Like Realtime's dispatcher, a private channel without broadcast read gets no broadcasts. */
  deliver(broadcast: Broadcast): void {
    if (this.config.private && this.policies?.broadcastRead !== true) return;
    if (broadcast.kind === "user" && this.replayedIds.has(String(broadcast.meta?.id))) return;
    this.session.sendBroadcast(this.topic, broadcast);
  }
}

export class Session {
  readonly #channels = new Map<string, Channel>();
  #queue: Promise<void> = Promise.resolve();
  /** When the client last sent anything; a silent connection is closed (see mod.ts). */
  lastSeen = Date.now();

  constructor(readonly socket: WebSocket, readonly codec: Codec, readonly options: SessionOptions) {
    socket.binaryType = "arraybuffer";
    socket.addEventListener("message", (event) => this.#receive(event.data));
    socket.addEventListener("close", () => this.#closed());
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  /** A server push on a channel (Phoenix's push/3, or a fastlaned broadcast when joinRef is null). */
  sendPush(channel: Channel, joinRef: string | null, event: string, payload: unknown): void {
    this.#send({ joinRef, ref: null, topic: channel.topic, event, payload });
  }

  sendBroadcast(topic: string, broadcast: Broadcast): void {
    const frame = this.codec.encodeBroadcast(topic, broadcast);
    // vsn 1.0.0 cannot carry binary payloads, and no version a field over 255 bytes: Realtime drops those too.
    if (frame !== null) this.#sendFrame(frame);
  }

  #receive(data: string | ArrayBuffer): void {
    this.lastSeen = Date.now();
    const message = this.codec.decode(data);
    if (!message) {
      log("undecodable_frame", { vsn: this.codec.vsn });
      return;
    }
    this.#enqueue(() => this.#route(message));
  }

  #enqueue(work: () => Promise<void> | void): void {
    this.#queue = this.#queue.then(work).catch((error) => log("handler_failed", { error: String(error) }));
  }

  async #route(message: Message): Promise<void> {
    if (message.topic === "phoenix" && message.event === "heartbeat") {
      return this.#send(reply(message, null, "ok", {}));
    }
    if (message.event === "phx_join") return await this.#join(message);

    const channel = this.#channels.get(message.topic);
    if (!channel) {
      if (message.event === "phx_leave") return this.#send(reply(message, message.joinRef, "ok", {}));
      return this.#send(reply(message, null, "error", { reason: "unmatched topic" }));
    }
    // A message for an earlier join of this topic raced its close: Phoenix drops it.
    if (message.joinRef !== null && message.joinRef !== channel.joinRef) return;

    // Realtime ignores any event a client sends on a channel other than these.
    switch (message.event) {
      case "phx_leave":
        this.#send(reply(message, channel.joinRef, "ok", {}));
        return this.#close(channel);
      case "access_token":
        return await this.#refreshToken(channel, message.payload);
      case "broadcast":
        return this.#relay(channel, message);
      case "presence":
        return await this.#presence(channel, message);
    }
  }

  async #join(message: Message): Promise<void> {
    // Phoenix replaces an existing join of the same topic, closing it first.
    const previous = this.#channels.get(message.topic);
    if (previous) this.#close(previous);
    if (!message.topic.startsWith("realtime:")) {
      return this.#send(reply(message, null, "error", { reason: "unmatched topic" }));
    }
    const subTopic = message.topic.slice("realtime:".length);
    const refuse = (reason: string) => {
      log("join_refused", { topic: subTopic, reason });
      this.#send(reply(message, message.joinRef, "error", { reason }));
    };
    if (!subTopic) return refuse("TopicNameRequired: You must provide a topic name");

    const config = parseJoinConfig(message.payload);
    const token = joinToken(message.payload, this.options.apiKey);
    const check = await confirmToken(this.options.verifyToken, token);
    if (!check.ok) return refuse(joinRefusal(check.problem));
    // Realtime checks its tenant's private_only once the token is confirmed, in these words.
    if (this.options.privateOnly && !config.private) {
      return refuse("PrivateOnly: This project only allows private channels");
    }

    const channel = new Channel(this, message.topic, subTopic, message.joinRef, config, token, check.claims);
    if (config.private) {
      const result = await this.#readPolicies(channel);
      if ("code" in result) return refuse(`${result.code}: ${result.text}`);
      channel.policies = result;
    }
    const replayed = await this.#replay(channel);
    if (typeof replayed === "string") return refuse(replayed);
    if (this.socket.readyState !== WebSocket.OPEN) return;

    this.#channels.set(channel.topic, channel);
    this.options.hub.subscribe(channel);
    this.#scheduleTokenCheck(channel);
    // Realtime subscribes the bindings after its reply; here before it, so that SUBSCRIBED means every change
    // committed from then on arrives. A binding that cannot be subscribed leaves the channel joined (for
    // Broadcast and Presence) with Realtime's `system` error, as Realtime leaves it.
    const subscribed = config.postgresChanges.length > 0
      ? await this.options.changes.subscribe(channel, config.postgresChanges, channel.claims)
      : null;
    if (!this.#isCurrent(channel)) {
      await this.options.changes.unsubscribe(channel);
      return;
    }
    // Realtime answers with the postgres_changes bindings, each with its id, for the client to match.
    const postgresChanges = config.postgresChanges.map((params) => ({ ...params, id: bindingId(params) }));
    this.#send(reply(message, channel.joinRef, "ok", { postgres_changes: postgresChanges }));
    // Realtime pushes the replayed messages once the join is done, as broadcasts marked `replayed`.
    for (const m of replayed) {
      const meta = { replayed: true, id: m.id };
      if (m.binary_payload) {
        const bytes = { kind: "user", event: m.event ?? "", body: m.binary_payload, encoding: "binary", meta } as const;
        this.sendBroadcast(channel.topic, bytes);
      } else {
        this.sendPush(channel, channel.joinRef, "broadcast", {
          payload: m.payload,
          event: m.event,
          type: "broadcast",
          meta,
        });
      }
    }
    // PresenceHandler.sync: the current state, to public channels and to private ones that may read presence.
    if (config.presenceEnabled && (!config.private || channel.policies?.presenceRead === true)) {
      this.sendPush(channel, channel.joinRef, "presence_state", this.options.hub.presenceState(channel));
    }
    if (subscribed?.ok) {
      this.#pushSystem(channel, "postgres_changes", "Subscribed to PostgreSQL", "ok");
    } else if (subscribed) {
      log("postgres_changes_refused", { topic: subTopic, reason: subscribed.message });
      this.#pushSystem(channel, "postgres_changes", subscribed.message);
    }
    channel.releaseChanges();
  }

  /**
   * The messages a join asked to replay (none when it asked none), or why the join is refused: replay needs a
   * private channel whose broadcasts the caller may read, and whole numbers (replay.ts).
   */
  async #replay(channel: Channel): Promise<ReplayedMessage[] | string> {
    const { asked, request } = channel.config.replay;
    if (!asked) return [];
    if (channel.config.private && channel.policies?.broadcastRead !== true) {
      return `Unauthorized: You do not have permissions to read from this Channel topic: ${channel.subTopic}`;
    }
    if (!channel.config.private) return "UnableToReplayMessages: Replay is not allowed for public channels";
    if (request.kind === "invalid") return "UnableToReplayMessages: Replay params are not valid";
    if (request.kind === "none") return [];
    try {
      const messages = await replayedMessages(this.options.sql, channel.subTopic, request.since, request.limit);
      channel.replayedIds = new Set(messages.map((m) => m.id));
      return messages;
    } catch (error) {
      log("replay_failed", { topic: channel.subTopic, error: String(error) });
      return "UnableToReplayMessages: Realtime was unable to replay messages";
    }
  }

  /** The policies of a private channel, or why it may not be joined (Realtime needs broadcast or presence read). */
  async #readPolicies(channel: Channel): Promise<Policies | Denial> {
    const result = await authorize(this.options.sql, {
      topic: channel.subTopic,
      claims: channel.claims,
      headers: this.options.headers,
      presenceEnabled: channel.config.presenceEnabled,
    });
    if (!result.ok && result.error === "database_unavailable") {
      return { code: "UnableToConnectToProject", text: "Realtime was unable to connect to the project database" };
    }
    if (result.ok && (result.policies.broadcastRead || result.policies.presenceRead)) return result.policies;
    return {
      code: "Unauthorized",
      text: `You do not have permissions to read from this Channel topic: ${channel.subTopic}`,
    };
  }

  /** `access_token`: re-verify and re-authorize with the new token; failing that, the channel is shut down. */
  async #refreshToken(channel: Channel, payload: unknown): Promise<void> {
    const token = isPayload(payload) ? payload.access_token : undefined;
    // Realtime ignores a missing token, the token it already has, and opaque sb_ API keys.
    if (typeof token !== "string" || token === channel.accessToken || token.startsWith("sb_")) return;
    channel.accessToken = token;

    const check = await confirmToken(this.options.verifyToken, token);
    if (!this.#isCurrent(channel)) return;
    if (!check.ok) return this.#shutdown(channel, shutdownMessage(check.problem));
    channel.claims = check.claims;
    // Realtime re-subscribes a channel's postgres_changes with the new claims.
    await this.options.changes.updateClaims(channel, check.claims);

    if (channel.config.private) {
      const result = await this.#readPolicies(channel);
      if (!this.#isCurrent(channel)) return;
      if ("code" in result) return this.#shutdown(channel, result.text);
      const before = channel.policies;
      if (revoked(before?.broadcastRead, result.broadcastRead) || revoked(before?.presenceRead, result.presenceRead)) {
        return this.#shutdown(
          channel,
          `You no longer have permission to read from this Channel topic: ${channel.subTopic}`,
        );
      }
      channel.policies = result;
    }
    this.#scheduleTokenCheck(channel);
  }

  #scheduleTokenCheck(channel: Channel): void {
    clearTimeout(channel.tokenTimer);
    const untilExpiry = channel.claims.exp * 1000 - Date.now();
    const delay = Math.max(0, Math.min(TOKEN_RECHECK_MS, untilExpiry));
    channel.tokenTimer = setTimeout(() => this.#enqueue(() => this.#recheckToken(channel)), delay);
  }

  async #recheckToken(channel: Channel): Promise<void> {
    if (!this.#isCurrent(channel)) return;
    const check = await confirmToken(this.options.verifyToken, channel.accessToken);
    if (!this.#isCurrent(channel)) return;
    if (!check.ok) return this.#shutdown(channel, shutdownMessage(check.problem));
    channel.claims = check.claims;
    this.#scheduleTokenCheck(channel);
  }

  /** A client broadcast: relayed to the topic's other channels (and this one with `self`), never stored. */
  #relay(channel: Channel, message: Message): void {
    const broadcast = asBroadcast(message.payload);
    if (!broadcast) return;
    // Realtime answers nothing, not even a requested ack, when the INSERT policy refuses the send.
    if (channel.config.private && channel.policies?.broadcastWrite !== true) return;
    this.options.hub.publish(channel.key, broadcast, channel.config.self ? undefined : channel);
    if (channel.config.ack) this.#send(reply(message, channel.joinRef, "ok", {}));
  }

  /** `presence` track/untrack (PresenceHandler.handle): a private channel's track needs the presence INSERT policy. */
  async #presence(channel: Channel, message: Message): Promise<void> {
    const payload = isPayload(message.payload) ? message.payload : {};
    const event = typeof payload.event === "string" ? payload.event.toLowerCase() : null;
    const answer = (status: "ok" | "error", response: Payload = {}) =>
      this.#send(reply(message, channel.joinRef, status, response));
    if (event === "untrack") {
      this.options.hub.untrack(channel);
      return answer("ok");
    }
    if (event !== "track") {
      if (event !== null) log("unknown_presence_event", { topic: channel.subTopic, event });
      return event === null ? answer("ok") : answer("error");
    }
    if (channel.config.private && channel.policies && channel.policies.presenceWrite === null) {
      const context = {
        topic: channel.subTopic,
        claims: channel.claims,
        headers: this.options.headers,
        presenceEnabled: true,
      };
      // Presence read is evaluated now if the join left it unevaluated (presence was off then).
      if (channel.policies.presenceRead === null) {
        const read = await authorize(this.options.sql, context);
        if (!this.#isCurrent(channel)) return;
        if (!read.ok) return answer("error");
        channel.policies.presenceRead = read.policies.presenceRead;
      }
      const result = await authorizeWrite(this.options.sql, context);
      if (!this.#isCurrent(channel)) return;
      if (!result.ok) return answer("error");
      channel.policies.presenceWrite = result.presenceWrite;
    }
    if (channel.config.private && channel.policies?.presenceWrite !== true) {
      log("presence_track_refused", { topic: channel.subTopic, role: channel.claims.role });
      return answer("error");
    }
    const tracked = payload.payload ?? {};
    if (!isPayload(tracked)) return answer("error", { reason: "Presence track payload must be a map" });
    this.options.hub.track(channel, tracked);
    answer("ok");
  }

  #isCurrent(channel: Channel): boolean {
    return this.#channels.get(channel.topic) === channel;
  }

  /** Realtime's shutdown_response: a `system` error, then the channel closes. */
  #shutdown(channel: Channel, text: string): void {
    log("channel_shutdown", { topic: channel.subTopic, reason: text });
    this.#pushSystem(channel, "system", text);
    this.#close(channel);
  }

  #pushSystem(channel: Channel, extension: string, text: string, status: "ok" | "error" = "error"): void {
    this.#send({
      joinRef: channel.joinRef,
      ref: null,
      topic: channel.topic,
      event: "system",
      payload: { extension, status, message: text, channel: channel.subTopic },
    });
  }

  #close(channel: Channel): void {
    this.#forget(channel);
    this.#send({
      joinRef: channel.joinRef,
      ref: channel.joinRef,
      topic: channel.topic,
      event: "phx_close",
      payload: {},
    });
  }

  #forget(channel: Channel): void {
    clearTimeout(channel.tokenTimer);
    this.options.hub.unsubscribe(channel);
    void this.options.changes.unsubscribe(channel);
    if (this.#isCurrent(channel)) this.#channels.delete(channel.topic);
  }

  #closed(): void {
    for (const channel of [...this.#channels.values()]) this.#forget(channel);
  }

  #send(message: Message): void {
    this.#sendFrame(this.codec.encode(message));
  }

  #sendFrame(frame: Frame): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(frame);
  }
}

// The Phoenix wire formats that Supabase Realtime speaks, as realtime-js
// encodes and decodes them: vsn 2.0.0 (JSON arrays in text frames, plus the
// binary "user broadcast" frames of realtime-js's serializer) and the older
// vsn 1.0.0 (JSON objects only). Pure functions; no I/O.

export type Payload = Record<string, unknown>;

/** One Phoenix message: `[join_ref, ref, topic, event, payload]` on vsn 2.0.0. */
export interface Message<P = unknown> {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: P;
}

/**
 * A broadcast whose user payload travels as opaque bytes (binary kinds 3 and 4):
 * rows of realtime.messages and the client pushes of realtime-js 2.x.
 */
export interface UserBroadcast {
  kind: "user";
  event: string;
  body: Uint8Array;
  /** How `body` is encoded: JSON text, or raw bytes the client sent as an ArrayBuffer. */
  encoding: "json" | "binary";
  meta: Payload | null;
}

/** A broadcast pushed as a JSON map (`{type, event, payload}`), relayed verbatim. */
export interface JsonBroadcast {
  kind: "json";
  payload: Payload;
}

export type Broadcast = UserBroadcast | JsonBroadcast;

export type Frame = string | Uint8Array;

export interface Codec {
  vsn: string;
  /** The message in a frame, or null when the frame is not one this version understands. */
  decode(frame: string | ArrayBuffer): Message | null;
  encode(message: Message): string;
  /** The frame that delivers a broadcast on `topic`, or null when this version cannot carry it. */
  encodeBroadcast(topic: string, broadcast: Broadcast): Frame | null;
}

// The frame kinds of realtime-js's serializer (src/lib/serializer.ts) and the
// Realtime server's V2 serializer.
const USER_BROADCAST_PUSH = 3;
const USER_BROADCAST = 4;
const BINARY_ENCODING = 0;
const JSON_ENCODING = 1;
const MAX_FIELD_BYTES = 255;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function isPayload(value: unknown): value is Payload {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A client broadcast push decoded from a binary frame (JSON text can never hold a Uint8Array). */
export function isUserBroadcast(value: unknown): value is UserBroadcast {
  return isPayload(value) && value.kind === "user" && value.body instanceof Uint8Array;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function refOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : value == null ? null : String(value);
}

/** Reads the kind-3 frame realtime-js sends for `channel.send({type: "broadcast", ...})`. */
function decodeUserBroadcastPush(buffer: ArrayBuffer): Message<UserBroadcast> | null {
  const bytes = new Uint8Array(buffer);
  const headerLength = 7;
  if (bytes.length < headerLength || bytes[0] !== USER_BROADCAST_PUSH) return null;
  const [, joinRefSize, refSize, topicSize, eventSize, metaSize, encoding] = bytes;
  let offset = headerLength;
  const field = (size: number) => {
    const text = decoder.decode(bytes.subarray(offset, offset + size));
    offset += size;
    return text;
  };
  const joinRef = field(joinRefSize);
  const ref = field(refSize);
  const topic = field(topicSize);
  const event = field(eventSize);
  const metaText = field(metaSize);
  if (offset > bytes.length) return null;
  const meta = metaSize > 0 ? parseJson(metaText) : null;
  return {
    joinRef: joinRef || null,
    ref: ref || null,
    topic,
    event: "broadcast",
    payload: {
      kind: "user",
      event,
      body: bytes.slice(offset),
      encoding: encoding === BINARY_ENCODING ? "binary" : "json",
      meta: isPayload(meta) ? meta : null,
    },
  };
}

/** The kind-4 frame realtime-js decodes into `{type: "broadcast", event, payload, meta}`. */
function encodeUserBroadcast(topic: string, broadcast: UserBroadcast): Uint8Array | null {
  const topicBytes = encoder.encode(topic);
  const eventBytes = encoder.encode(broadcast.event);
  const metaBytes = encoder.encode(broadcast.meta ? JSON.stringify(broadcast.meta) : "");
  if ([topicBytes, eventBytes, metaBytes].some((b) => b.length > MAX_FIELD_BYTES)) return null;
  const header = [
    USER_BROADCAST,
    topicBytes.length,
    eventBytes.length,
    metaBytes.length,
    broadcast.encoding === "json" ? JSON_ENCODING : BINARY_ENCODING,
  ];
  const frame = new Uint8Array(
    header.length + topicBytes.length + eventBytes.length + metaBytes.length + broadcast.body.length,
  );
  let offset = 0;
  for (const part of [Uint8Array.from(header), topicBytes, eventBytes, metaBytes, broadcast.body]) {
    frame.set(part, offset);
    offset += part.length;
  }
  return frame;
}

/** The JSON map a vsn 1.0.0 client (or a JSON push) sees for a broadcast. */
function jsonBroadcastPayload(broadcast: Broadcast): Payload | null {
  if (broadcast.kind === "json") return broadcast.payload;
  if (broadcast.encoding !== "json") return null;
  const payload: Payload = {
    event: broadcast.event,
    payload: parseJson(decoder.decode(broadcast.body)),
    type: "broadcast",
  };
  if (broadcast.meta) payload.meta = broadcast.meta;
  return payload;
}

export const V2: Codec = {
  vsn: "2.0.0",
  decode(frame) {
    if (frame instanceof ArrayBuffer) return decodeUserBroadcastPush(frame);
    const value = parseJson(frame);
    if (!Array.isArray(value) || value.length < 5 || typeof value[2] !== "string" || typeof value[3] !== "string") {
      return null;
    }
    const [joinRef, ref, topic, event, payload] = value;
    return { joinRef: refOrNull(joinRef), ref: refOrNull(ref), topic, event, payload };
  },
  encode: (m) => JSON.stringify([m.joinRef, m.ref, m.topic, m.event, m.payload]),
  encodeBroadcast(topic, broadcast) {
    if (broadcast.kind === "user") return encodeUserBroadcast(topic, broadcast);
    return JSON.stringify([null, null, topic, "broadcast", broadcast.payload]);
  },
};

export const V1: Codec = {
  vsn: "1.0.0",
  decode(frame) {
    if (frame instanceof ArrayBuffer) return null;
    const value = parseJson(frame);
    if (!isPayload(value) || typeof value.topic !== "string" || typeof value.event !== "string") return null;
    return {
      joinRef: refOrNull(value.join_ref),
      ref: refOrNull(value.ref),
      topic: value.topic,
      event: value.event,
      payload: value.payload,
    };
  },
  // Phoenix's V1 serializer sends only these four fields.
  encode: (m) => JSON.stringify({ topic: m.topic, event: m.event, payload: m.payload, ref: m.ref }),
  encodeBroadcast(topic, broadcast) {
    const payload = jsonBroadcastPayload(broadcast);
    return payload && JSON.stringify({ topic, event: "broadcast", payload, ref: null });
  },
};

/** The codec for the `vsn` query parameter; Phoenix assumes 1.0.0 when it is absent. */
export function codecFor(vsn: string | null): Codec | null {
  if (vsn === null || vsn === V1.vsn) return V1;
  return vsn === V2.vsn ? V2 : null;
}

export function reply(to: Message, joinRef: string | null, status: "ok" | "error", response: Payload): Message {
  return { joinRef, ref: to.ref, topic: to.topic, event: "phx_reply", payload: { status, response } };
}

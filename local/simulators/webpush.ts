// A Web Push service simulator (docs/push.md), as FCM or Mozilla's autopush
// stand between the platform and a phone. It keeps subscriptions it made
// itself (`POST /subscriptions`: a browser's subscribe(), answered with the
// endpoint and the browser's keys, the private one too so that a test may
// decrypt on its own), and takes messages at each endpoint as RFC 8030 says
// push services take them: `POST /push/{id}` with `TTL`, `Content-Encoding:
// aes128gcm` (RFC 8291), an optional `Urgency` and `Topic`, and `Authorization:
// vapid t=<JWT>, k=<key>` (RFC 8292: ES256, `aud` this service's origin, `exp`
// within 24 h, a `sub`); answered 201 with a Location. Refusals as push
// services answer them: 401/403 for a missing or bad VAPID token, 400 for a
// missing TTL, 415 for another encoding, 413 beyond 4096 bytes, 404 for an
// endpoint it never had and 410 for a subscription that is gone (the browser
// unsubscribed: `DELETE /subscriptions/{id}`). Unlike a real one it decrypts
// what it accepts with the browser's keys (http_ece) and keeps it, newest
// first, at `GET /messages` (the simulators page shows them). Routed with Hono
// and runtime-neutral (a fetch handler), so the local stack serves it and the
// test suite wraps it in its loopback fake.
import { Buffer } from "node:buffer";
import { createECDH } from "node:crypto";
import ece from "http_ece";
import { Hono } from "hono";
import { decodeProtectedHeader, importJWK, jwtVerify } from "jose";
import { controlled } from "./controls.ts";

export interface PushSubscriptionRecord {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The browser's private key (base64url), which a real push service never has. */
  private_key: string;
  label: string | null;
  gone: boolean;
  created_at: string;
}

export interface PushedMessage {
  id: string;
  subscription_id: string;
  label: string | null;
  received_at: string;
  ttl: number;
  urgency: string;
  topic: string | null;
  /** The VAPID token's `sub` and key: who sent it. */
  vapid_subject: string;
  vapid_key: string;
  /** The encrypted body as received, base64. */
  body: string;
  size: number;
  /** The plaintext the browser's service worker would get; null when it could not be decrypted. */
  payload: string | null;
  decrypt_error: string | null;
}

export interface WebPushSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok"; "fail" answers every push 503 (to be retried). */
  mode: "ok" | "fail";
  delayMs: number;
  subscriptions: Map<string, PushSubscriptionRecord>;
  messages: PushedMessage[];
  /**
   * Where senders reach it: endpoints are made under it, and a VAPID token's `aud` must be its origin. Unset, the
   * request's own URL tells (a server that sees its requests as they were sent).
   */
  publicUrl: string | null;
}

const MAX_KEPT = 500;
const MAX_BODY = 4096;

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

/** A 65-byte uncompressed P-256 point, base64url, as a public JWK. */
function pointJwk(key: string) {
  const point = Buffer.from(key, "base64url");
  if (point.length !== 65 || point[0] !== 4) throw new Error("not an uncompressed P-256 point");
  return { kty: "EC", crv: "P-256", x: base64url(point.subarray(1, 33)), y: base64url(point.subarray(33, 65)) };
}

/** The VAPID token's claims, or why it is refused (RFC 8292 §2, §3). */
async function checkVapid(header: string | null, origin: string) {
  const match = /^vapid\s+(.+)$/i.exec(header ?? "");
  if (!match) return { status: 401, detail: "Authorization: vapid t=..., k=... is required" } as const;
  const params = Object.fromEntries(
    match[1].split(",").map((p) => p.trim().split("=")).map(([k, ...v]) => [k.toLowerCase(), v.join("=")]),
  );
  if (!params.t || !params.k) return { status: 401, detail: "the vapid scheme needs t and k" } as const;
  try {
    if (decodeProtectedHeader(params.t).alg !== "ES256") throw new Error("alg must be ES256");
    const { payload } = await jwtVerify(params.t, await importJWK(pointJwk(params.k), "ES256"), { audience: origin });
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.exp !== "number" || payload.exp > now + 24 * 3600) throw new Error("exp must be within 24 h");
    if (typeof payload.sub !== "string" || !/^(mailto:|https:)/.test(payload.sub)) {
      throw new Error("sub must be a mailto: or https: contact");
    }
    return { status: 201, subject: payload.sub, key: params.k } as const;
  } catch (error) {
    return { status: 403, detail: `the VAPID token is refused: ${(error as Error).message}` } as const;
  }
}

/** Decrypts an aes128gcm body with the browser's keys (RFC 8291). */
export function decryptPush(body: Uint8Array, privateKey: string, auth: string): string {
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(Buffer.from(privateKey, "base64url"));
  const plain = ece.decrypt(Buffer.from(body), { version: "aes128gcm", privateKey: ecdh, authSecret: auth });
  return Buffer.from(plain).toString("utf8");
}

export interface WebPushSimulatorOptions {
  /** The simulator's public URL (the local stack's {API URL}/_sim/webpush): endpoints are made under it. */
  publicUrl?: string;
}

export function createWebPushSimulator(options: WebPushSimulatorOptions = {}): WebPushSimulator {
  const app = new Hono();
  const sim: WebPushSimulator = {
    mode: "ok",
    delayMs: 0,
    subscriptions: new Map(),
    messages: [],
    publicUrl: options.publicUrl ?? null,
    fetch: async (req) => await app.fetch(req),
  };
  const origin = (req: Request) => new URL(sim.publicUrl ?? req.url).origin;
  const base = (req: Request) => sim.publicUrl?.replace(/\/+$/, "") ?? new URL(req.url).origin;
  app.use("*", controlled(sim));

  app.post("/subscriptions", async (c) => {
    const body = await c.req.json().catch(() => ({})) as { label?: unknown };
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const id = crypto.randomUUID().replaceAll("-", "");
    const record: PushSubscriptionRecord = {
      id,
      endpoint: `${base(c.req.raw)}/push/${id}`,
      keys: {
        p256dh: base64url(ecdh.getPublicKey()),
        auth: base64url(crypto.getRandomValues(new Uint8Array(16))),
      },
      private_key: base64url(ecdh.getPrivateKey()),
      label: typeof body.label === "string" ? body.label.slice(0, 100) : null,
      gone: false,
      created_at: new Date().toISOString(),
    };
    sim.subscriptions.set(id, record);
    return c.json(record, 201);
  });
  app.get("/subscriptions", (c) => c.json({ subscriptions: [...sim.subscriptions.values()] }));
  app.delete("/subscriptions/:id", (c) => {
    const record = sim.subscriptions.get(c.req.param("id"));
    if (!record) return c.json({ detail: "no such subscription" }, 404);
    record.gone = true;
    return c.body(null, 204);
  });
  app.get("/messages", (c) => c.json({ messages: sim.messages }));

  app.post("/push/:id", async (c) => {
    const record = sim.subscriptions.get(c.req.param("id"));
    if (!record) return c.json({ reason: "NotFound", detail: "no such push resource" }, 404);
    if (record.gone) return c.json({ reason: "Gone", detail: "the subscription has expired or been removed" }, 410);
    const vapid = await checkVapid(c.req.header("authorization") ?? null, origin(c.req.raw));
    if (vapid.status !== 201) return c.json({ reason: "Unauthorized", detail: vapid.detail }, vapid.status);
    const ttl = Number(c.req.header("ttl"));
    if (!/^\d+$/.test(c.req.header("ttl") ?? "") || !Number.isSafeInteger(ttl)) {
      return c.json({ reason: "BadRequest", detail: "the TTL header is required" }, 400);
    }
    if ((c.req.header("content-encoding") ?? "").toLowerCase() !== "aes128gcm") {
      return c.json({ reason: "UnsupportedMediaType", detail: "Content-Encoding must be aes128gcm" }, 415);
    }
    const urgency = c.req.header("urgency") ?? "normal";
    if (!["very-low", "low", "normal", "high"].includes(urgency)) {
      return c.json({ reason: "BadRequest", detail: "Urgency must be very-low, low, normal or high" }, 400);
    }
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (body.length > MAX_BODY) return c.json({ reason: "PayloadTooLarge", detail: "at most 4096 bytes" }, 413);
    if (sim.mode === "fail") return c.json({ reason: "ServiceUnavailable", detail: "try again later" }, 503);
    let payload: string | null = null;
    let decryptError: string | null = null;
    try {
      payload = decryptPush(body, record.private_key, record.keys.auth);
    } catch (error) {
      decryptError = (error as Error).message;
    }
    const message: PushedMessage = {
      id: crypto.randomUUID(),
      subscription_id: record.id,
      label: record.label,
      received_at: new Date().toISOString(),
      ttl,
      urgency,
      topic: c.req.header("topic") ?? null,
      vapid_subject: vapid.subject,
      vapid_key: vapid.key,
      body: Buffer.from(body).toString("base64"),
      size: body.length,
      payload,
      decrypt_error: decryptError,
    };
    // A message with the Topic of one still kept replaces it (RFC 8030 §5.4), as it would wait on the service.
    if (message.topic) {
      const index = sim.messages.findIndex((m) => m.subscription_id === record.id && m.topic === message.topic);
      if (index >= 0) sim.messages.splice(index, 1);
    }
    sim.messages.unshift(message);
    sim.messages.length = Math.min(sim.messages.length, MAX_KEPT);
    return c.body(null, 201, { location: `${base(c.req.raw)}/messages/${message.id}` });
  });
  app.notFound((c) => c.json({ detail: "Not Found" }, 404));
  return sim;
}

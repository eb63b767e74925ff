// The local stand-in for Supabase Realtime (docs/architecture.md, The local stack): /realtime/v1/websocket
// speaking the Phoenix protocol as realtime-js does, Broadcast and Presence,
// private channels authorized with the realtime.messages policies, and the
// REST broadcast API (/realtime/v1/api/broadcast, realtime-js's httpSend()
// and its send() before subscribing). Real Realtime reads
// new realtime.messages rows from logical replication; here the NOTIFY of
// sql/local/20_realtime.sql wakes us, and we fetch the row by its id.
import { decodeJwt } from "jose";
import postgres from "postgres";
import { authorizeWrite } from "./authorization.ts";
import type { Claims } from "../../functions/_shared/jwt.ts";
import { TopicHub } from "./hub.ts";
import { log } from "./log.ts";
import { type Broadcast, codecFor, isPayload } from "./protocol.ts";
import { Session, topicKey } from "./session.ts";

export interface RealtimeOptions {
  /** A pool connected as a superuser: it inserts the authorization probes and reads the broadcast rows. */
  sql: postgres.Sql;
  /** The same database: a connection of its own LISTENs. */
  databaseUrl: string;
  /** Throws for an invalid, expired or foreign-signed token. */
  verifyToken: (token: string) => Promise<Claims>;
  /** The accepted `apikey` values (anon, service_role). */
  apiKeys: string[];
}

export interface Realtime {
  handle(req: Request): Response | Promise<Response>;
  close(): Promise<void>;
}

const NOTIFY_CHANNEL = "realtime_local_broadcast";
// Phoenix's WebSocket timeout: a client that sends nothing (not even its 25 s heartbeat) for this long is gone.
const IDLE_LIMIT_MS = 60_000;
const IDLE_SWEEP_MS = 5_000;
// After the database goes away, LISTEN again this often until it is back.
const RELISTEN_MS = 1_000;

const encoder = new TextEncoder();

/** Compares API keys in time independent of where they differ. */
function sameSecret(expected: string, given: string): boolean {
  const a = encoder.encode(expected);
  const b = encoder.encode(given);
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ (b[i] ?? 0);
  return difference === 0;
}

function looksLikeJwt(value: string): boolean {
  try {
    decodeJwt(value);
    return true;
  } catch {
    return false;
  }
}

/** Realtime answers a refused WebSocket upgrade with a JSON `{error}`. */
function refusal(status: number, error: string): Response {
  log("connection_refused", { status, error });
  return Response.json({ error }, { status });
}

/** Deno throws for an upgrade it cannot make (no Sec-WebSocket-Key, say). */
function tryUpgrade(req: Request): { socket: WebSocket; response: Response } | null {
  try {
    return Deno.upgradeWebSocket(req);
  } catch {
    return null;
  }
}

/** The x-* headers, which Realtime hands to policies as request.headers. */
function xHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith("x-")));
}

interface Notification {
  id: string;
  topic: string;
}

function parseNotification(raw: string): Notification | null {
  try {
    const value = JSON.parse(raw);
    return typeof value?.id === "string" && typeof value?.topic === "string" ? value : null;
  } catch {
    return null;
  }
}

/** Sends one realtime.messages row to the channels of its topic, as Realtime's replication handler does. */
async function deliver(sql: postgres.Sql, hub: TopicHub, raw: string): Promise<void> {
  const notification = parseNotification(raw);
  if (!notification) return log("notification_malformed", { payload: raw.slice(0, 200) });
  if (!hub.isHeard(notification.topic)) return;
  try {
    const [row] = await sql<{ event: string | null; private: boolean | null; payload: string | null }[]>`
      select event, private, payload::text as payload from realtime.messages where id = ${notification.id} limit 1`;
    // Realtime skips a row without an event or a payload.
    if (!row?.event || row.payload === null) return;
    hub.publish(topicKey(notification.topic, row.private === true), {
      kind: "user",
      event: row.event,
      body: encoder.encode(row.payload),
      encoding: "json",
      meta: { id: notification.id },
    });
  } catch (error) {
    log("broadcast_failed", { topic: notification.topic, error: String(error) });
  }
}

export async function createRealtime(options: RealtimeOptions): Promise<Realtime> {
  const { sql, verifyToken, apiKeys } = options;
  const hub = new TopicHub();
  const sessions = new Set<Session>();
  // One at a time, so that broadcasts of a topic arrive in commit order.
  let deliveries = Promise.resolve();
  // postgres.js's own listen() tries once to LISTEN again after its connection closes, and gives up
  // silently if the database is still away; this connection LISTENs again until the database is back.
  let closing = false;
  let relisten: ReturnType<typeof setTimeout> | undefined;
  let lost = false;
  const listener = postgres(options.databaseUrl, {
    max: 1,
    idle_timeout: 0,
    max_lifetime: 0,
    connect_timeout: 3,
    fetch_types: false,
    onnotice: () => {},
    // Not in postgres.js's types, but the option its own listen() uses.
    ...{
      onnotify: (channel: string, raw: string) => {
        if (channel === NOTIFY_CHANNEL) deliveries = deliveries.then(() => deliver(sql, hub, raw));
      },
    },
    onclose: () => {
      if (closing || relisten) return;
      if (!lost) log("listen_lost", { channel: NOTIFY_CHANNEL });
      lost = true;
      relisten = setTimeout(() => {
        relisten = undefined;
        startListening().catch(() => {/* the closed connection schedules the next try */});
      }, RELISTEN_MS);
    },
  });
  async function startListening(): Promise<void> {
    await listener.unsafe(`listen ${NOTIFY_CHANNEL}`);
    if (lost) log("listen_restored", { channel: NOTIFY_CHANNEL });
    lost = false;
  }
  await startListening();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const session of sessions) {
      if (now - session.lastSeen > IDLE_LIMIT_MS) session.close(1000, "heartbeat timeout");
    }
  }, IDLE_SWEEP_MS);
  function handle(req: Request): Response | Promise<Response> {
    if (new URL(req.url).pathname.startsWith("/realtime/v1/api/")) return broadcastApi(req);
    if (closing) return refusal(503, "Realtime is restarting, please standby");
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") return refusal(400, "Expected a WebSocket upgrade");
    const url = new URL(req.url);
    const codec = codecFor(url.searchParams.get("vsn"));
    if (!codec) return refusal(400, `Unsupported protocol version: ${url.searchParams.get("vsn")}`);
    const apiKey = req.headers.get("x-api-key") ?? url.searchParams.get("apikey");
    if (!apiKey) return refusal(401, "API key is missing");
    if (!apiKeys.some((key) => sameSecret(key, apiKey))) {
      return refusal(
        401,
        looksLikeJwt(apiKey) ? "Failed to validate JWT signature" : "The token provided is not a valid JWT",
      );
    }

    // The request's headers are gone once it is upgraded.
    const headers = xHeaders(req.headers);
    const upgraded = tryUpgrade(req);
    if (!upgraded) return refusal(400, "Expected a WebSocket upgrade");
    const { socket, response } = upgraded;
    const session = new Session(socket, codec, { sql, verifyToken, apiKey, headers, hub });
    sessions.add(session);
    socket.addEventListener("close", () => sessions.delete(session));
    return response;
  }

  /**
   * POST /api/broadcast (a batch) and /api/broadcast/:topic/events/:event (one
   * message), as Realtime's BroadcastController and BroadcastSingleController
   * answer them: 202 once sent; a private message needs the caller's broadcast
   * INSERT policy on its topic (403 for the single message, silently dropped
   * in a batch).
   */
  async function broadcastApi(req: Request): Promise<Response> {
    const cors = { "access-control-allow-origin": "*" };
    const answer = (status: number, body?: unknown) =>
      body === undefined
        ? new Response(null, { status, headers: cors })
        : Response.json(body, { status, headers: cors });
    if (req.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          ...cors,
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-allow-headers": "authorization, apikey, content-type, x-client-info",
        },
      });
    }
    const url = new URL(req.url);
    const single = /^\/realtime\/v1\/api\/broadcast\/([^/]+)\/events\/([^/]+)$/.exec(url.pathname);
    if (req.method !== "POST" || (!single && url.pathname !== "/realtime/v1/api/broadcast")) {
      return answer(404, { message: "Not Found" });
    }
    // The API gateway checks the key; Realtime's AuthTenant then takes the bearer token, or the key itself.
    const apiKey = req.headers.get("apikey");
    if (!apiKey || !apiKeys.some((key) => sameSecret(key, apiKey))) return answer(401, { message: "Unauthorized" });
    const bearer = /^bearer (\S+)$/i.exec(req.headers.get("authorization") ?? "")?.[1];
    let claims: Claims;
    try {
      claims = await verifyToken(bearer ?? apiKey);
    } catch {
      return answer(401, { message: "Unauthorized" });
    }
    if (typeof claims.role !== "string") return answer(401, { message: "Unauthorized" });
    const channelClaims = claims as Claims & { role: string; exp: number };
    const headers = xHeaders(req.headers);
    const mayWrite = async (topic: string) => {
      const result = await authorizeWrite(sql, { topic, claims: channelClaims, headers, presenceEnabled: false });
      return result.ok ? result.broadcastWrite : null;
    };

    const type = req.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
    if (single) {
      const [topic, event] = [decodeURIComponent(single[1]), decodeURIComponent(single[2])];
      const isPrivate = ["true"].includes(url.searchParams.get("private") ?? "");
      let broadcast: Broadcast;
      if (type === "application/octet-stream") {
        broadcast = {
          kind: "user",
          event,
          body: new Uint8Array(await req.arrayBuffer()),
          encoding: "binary",
          meta: null,
        };
      } else if (type === "application/json") {
        const text = await req.text();
        let payload: unknown;
        try {
          payload = JSON.parse(text);
        } catch {
          return answer(400, { message: "Malformed JSON" });
        }
        if (payload === null) return answer(422, { errors: { payload: ["can't be blank"] } });
        broadcast = {
          kind: "user",
          event,
          body: encoder.encode(JSON.stringify(payload)),
          encoding: "json",
          meta: null,
        };
      } else return answer(415, { message: "Unsupported Media Type" });
      if (isPrivate) {
        const allowed = await mayWrite(topic);
        if (allowed === null) return answer(422, { message: "RLS policy error" });
        if (!allowed) return answer(403, { message: "Unauthorized" });
      }
      hub.publish(topicKey(topic, isPrivate), broadcast);
      return answer(202);
    }

    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return answer(400, { message: "Malformed JSON" });
    }
    const messages = isPayload(body) && Array.isArray(body.messages) ? body.messages : null;
    if (!messages || messages.length === 0) return answer(422, { errors: { messages: ["can't be blank"] } });
    const invalid = messages.some((m) =>
      !isPayload(m) || typeof m.topic !== "string" || typeof m.event !== "string" || m.payload === undefined ||
      m.payload === null
    );
    if (invalid) return answer(422, { errors: { messages: [{ topic: ["can't be blank"] }] } });
    const permissions = new Map<string, boolean>();
    for (const message of messages as Record<string, unknown>[]) {
      const topic = message.topic as string;
      const isPrivate = message.private === true || message.private === "true";
      if (isPrivate) {
        if (!permissions.has(topic)) permissions.set(topic, (await mayWrite(topic)) === true);
        if (!permissions.get(topic)) continue;
      }
      const payload: Record<string, unknown> = { payload: message.payload, event: message.event, type: "broadcast" };
      if (typeof message.id === "string") payload.meta = { id: message.id };
      hub.publish(topicKey(topic, isPrivate), { kind: "json", payload });
    }
    return answer(202);
  }

  async function close(): Promise<void> {
    closing = true;
    clearInterval(sweep);
    clearTimeout(relisten);
    for (const session of sessions) session.close(1001, "server shutting down");
    await listener.end({ timeout: 1 }).catch(() => {});
    await deliveries;
  }

  return { handle, close };
}

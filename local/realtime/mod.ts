// The local stand-in for Supabase Realtime (docs/architecture.md, The local stack), routed with Hono:
// /realtime/v1/websocket speaking the Phoenix protocol as realtime-js does, Broadcast and Presence,
// private channels authorized with the realtime.messages policies, postgres_changes with each
// subscriber's RLS (changes.ts), and the REST broadcast API (broadcast-api.ts). Real Realtime reads
// new realtime.messages rows from logical replication; here the NOTIFY of
// sql/local/20_realtime.sql wakes us, and we fetch the row by its id.
import { isApiKey as isProjectKey } from "../api-gateway.ts";
import { Hono } from "hono";
import { decodeJwt } from "jose";
import postgres from "postgres";
import type { Claims } from "../../common/jwt.ts";
import { mountBroadcastApi } from "./broadcast-api.ts";
import { PostgresChanges } from "./changes.ts";
import { TopicHub } from "./hub.ts";
import { log } from "./log.ts";
import { codecFor } from "./protocol.ts";
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
  /**
   * Realtime's `private_only` (config.toml's `[realtime] private_only`; on a hosted project, Realtime's settings:
   * public access to channels off): a join of a public channel is refused.
   */
  privateOnly?: boolean;
}

export interface Realtime {
  fetch(req: Request): Response | Promise<Response>;
  close(): Promise<void>;
}

const NOTIFY_CHANNEL = "realtime_local_broadcast";
// Phoenix's WebSocket timeout: a client that sends nothing (not even its 25 s heartbeat) for this long is gone.
const IDLE_LIMIT_MS = 60_000;
const IDLE_SWEEP_MS = 5_000;
// After the database goes away, LISTEN again this often until it is back.
const RELISTEN_MS = 1_000;

const encoder = new TextEncoder();
const CORS = { "access-control-allow-origin": "*" };

/** Compares API keys in time independent of where they differ. */
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
    const [row] = await sql<
      { event: string | null; private: boolean | null; payload: string | null; binary_payload: Uint8Array | null }[]
    >`
      select event, private, payload::text as payload, binary_payload
      from realtime.messages where id = ${notification.id} limit 1`;
    // Realtime skips a row without an event or a payload; bytes (realtime.send_binary) go as bytes.
    if (!row?.event || (row.payload === null && row.binary_payload === null)) return;
    hub.publish(topicKey(notification.topic, row.private === true), {
      kind: "user",
      event: row.event,
      body: row.binary_payload ?? encoder.encode(row.payload!),
      encoding: row.binary_payload ? "binary" : "json",
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
  const changes = new PostgresChanges(sql, options.databaseUrl);
  await changes.reset();
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

  const isApiKey = (key: string) => isProjectKey(key, apiKeys);

  /** GET /websocket: the Phoenix socket, once its version and API key are accepted. */
  function websocket(req: Request): Response {
    if (closing) return refusal(503, "Realtime is restarting, please standby");
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") return refusal(400, "Expected a WebSocket upgrade");
    const url = new URL(req.url);
    const codec = codecFor(url.searchParams.get("vsn"));
    if (!codec) return refusal(400, `Unsupported protocol version: ${url.searchParams.get("vsn")}`);
    const apiKey = req.headers.get("x-api-key") ?? url.searchParams.get("apikey");
    if (!apiKey) return refusal(401, "API key is missing");
    if (!isApiKey(apiKey)) {
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
    const session = new Session(socket, codec, {
      sql,
      verifyToken,
      apiKey,
      headers,
      hub,
      changes,
      privateOnly: options.privateOnly ?? false,
    });
    sessions.add(session);
    socket.addEventListener("close", () => sessions.delete(session));
    return response;
  }

  const app = new Hono().basePath("/realtime/v1");
  app.all("/websocket", (c) => websocket(c.req.raw));
  mountBroadcastApi(app, { sql, hub, verifyToken, isApiKey, xHeaders });
  app.notFound(() => Response.json({ message: "Not Found" }, { status: 404, headers: CORS }));
  app.onError((error, c) => {
    log("request_failed", { path: new URL(c.req.url).pathname, error: String(error) });
    return Response.json({ message: "Internal Server Error" }, { status: 500, headers: CORS });
  });

  async function close(): Promise<void> {
    closing = true;
    clearInterval(sweep);
    clearTimeout(relisten);
    for (const session of sessions) session.close(1001, "server shutting down");
    await listener.end({ timeout: 1 }).catch(() => {});
    await deliveries;
    await changes.close();
  }

  return { fetch: (req) => app.fetch(req), close };
}

// Realtime's REST broadcast API: POST /api/broadcast (a batch, realtime-js's
// send() before subscribing) and /api/broadcast/:topic/events/:event (one
// message, httpSend()), as Realtime's BroadcastController and
// BroadcastSingleController answer them: 202 once sent; a private message
// needs the caller's broadcast INSERT policy on its topic (403 for the single
// message, silently dropped in a batch). A body is read up to Plug.Parsers'
// limit (8,000,000 bytes) and no further: past it, 413.
import type { Context, Hono } from "hono";
import type { Claims } from "../../common/jwt.ts";
import { BodyTooLargeError, readBody } from "../../common/body.ts";
import type postgres from "postgres";
import { authorizeWrite } from "./authorization.ts";
import type { TopicHub } from "./hub.ts";
import { type Broadcast, isPayload } from "./protocol.ts";
import { topicKey } from "./session.ts";

/** Plug.Parsers' default :length, which Realtime's endpoint keeps. */
export const BROADCAST_BODY_LIMIT = 8_000_000;

export interface BroadcastApiOptions {
  sql: postgres.Sql;
  hub: TopicHub;
  verifyToken: (token: string) => Promise<Claims>;
  /** Whether `key` is one of the project's API keys (compared in constant time). */
  isApiKey: (key: string) => boolean;
  /** The x-* headers, which Realtime hands to policies as request.headers. */
  xHeaders: (headers: Headers) => Record<string, string>;
}

const CORS = { "access-control-allow-origin": "*" };
const encoder = new TextEncoder();

const answer = (status: number, body?: unknown) =>
  body === undefined ? new Response(null, { status, headers: CORS }) : Response.json(body, { status, headers: CORS });

class Refusal {
  constructor(readonly response: Response) {}
}

/** The body, or a Refusal: 413 (Phoenix renders its status text) past the limit. */
async function bodyOf(req: Request): Promise<Uint8Array> {
  try {
    return await readBody(req, BROADCAST_BODY_LIMIT);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new Refusal(answer(413, "Request Entity Too Large"));
    throw error;
  }
}

function parseJson(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

export function mountBroadcastApi(app: Hono, options: BroadcastApiOptions): void {
  const { sql, hub } = options;

  /** The API gateway checks the key; Realtime's AuthTenant then takes the bearer token, or the key itself. */
  async function caller(c: Context): Promise<Claims & { role: string; exp: number }> {
    const apiKey = c.req.header("apikey");
    if (!apiKey || !options.isApiKey(apiKey)) throw new Refusal(answer(401, { message: "Unauthorized" }));
    const bearer = /^bearer (\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    let claims: Claims;
    try {
      claims = await options.verifyToken(bearer ?? apiKey);
    } catch {
      throw new Refusal(answer(401, { message: "Unauthorized" }));
    }
    if (typeof claims.role !== "string") throw new Refusal(answer(401, { message: "Unauthorized" }));
    return claims as Claims & { role: string; exp: number };
  }

  async function mayWrite(c: Context, claims: Claims & { role: string; exp: number }, topic: string) {
    const headers = options.xHeaders(c.req.raw.headers);
    const result = await authorizeWrite(sql, { topic, claims, headers, presenceEnabled: false });
    return result.ok ? result.broadcastWrite : null;
  }

  const refusals = (handler: (c: Context) => Promise<Response>) => async (c: Context) => {
    try {
      return await handler(c);
    } catch (error) {
      if (error instanceof Refusal) return error.response;
      throw error;
    }
  };

  const preflight = () =>
    new Response(null, {
      status: 204,
      headers: {
        ...CORS,
        "access-control-allow-methods": "POST, OPTIONS",
        "access-control-allow-headers": "authorization, apikey, content-type, x-client-info",
      },
    });
  app.options("/api/broadcast", preflight);
  app.options("/api/broadcast/:topic/events/:event", preflight);

  app.post(
    "/api/broadcast/:topic/events/:event",
    refusals(async (c) => {
      const claims = await caller(c);
      const raw = /\/api\/broadcast\/([^/]+)\/events\/([^/]+)$/.exec(new URL(c.req.url).pathname)!;
      let topic: string;
      let event: string;
      try {
        [topic, event] = [decodeURIComponent(raw[1]), decodeURIComponent(raw[2])];
      } catch {
        return answer(400, { message: "Bad Request" });
      }
      const isPrivate = c.req.query("private") === "true";
      const type = c.req.header("content-type")?.split(";")[0].trim().toLowerCase();
      let broadcast: Broadcast;
      if (type === "application/octet-stream") {
        broadcast = { kind: "user", event, body: await bodyOf(c.req.raw), encoding: "binary", meta: null };
      } else if (type === "application/json") {
        const parsed = parseJson(await bodyOf(c.req.raw));
        if (!parsed.ok) return answer(400, { message: "Malformed JSON" });
        if (parsed.value === null) return answer(422, { errors: { payload: ["can't be blank"] } });
        broadcast = {
          kind: "user",
          event,
          body: encoder.encode(JSON.stringify(parsed.value)),
          encoding: "json",
          meta: null,
        };
      } else return answer(415, { message: "Unsupported Media Type" });
      if (isPrivate) {
        const allowed = await mayWrite(c, claims, topic);
        if (allowed === null) return answer(422, { message: "RLS policy error" });
        if (!allowed) return answer(403, { message: "Unauthorized" });
      }
      hub.publish(topicKey(topic, isPrivate), broadcast);
      return answer(202);
    }),
  );

  app.post(
    "/api/broadcast",
    refusals(async (c) => {
      const claims = await caller(c);
      const parsed = parseJson(await bodyOf(c.req.raw));
      if (!parsed.ok) return answer(400, { message: "Malformed JSON" });
      const body = parsed.value;
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
          if (!permissions.has(topic)) permissions.set(topic, (await mayWrite(c, claims, topic)) === true);
          if (!permissions.get(topic)) continue;
        }
        const payload: Record<string, unknown> = { payload: message.payload, event: message.event, type: "broadcast" };
        if (typeof message.id === "string") payload.meta = { id: message.id };
        hub.publish(topicKey(topic, isPrivate), { kind: "json", payload });
      }
      return answer(202);
    }),
  );
}

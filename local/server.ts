// The one HTTP server of the local stack (docs/architecture.md, The local stack), a Hono app composed of the
// services' own: the Edge Functions at /functions/v1/<name> and behind the public paths, the identity provider at
// /auth/v1 (its mailbox at /_mail), PostgREST at /rest/v1, Realtime at /realtime/v1, Storage at /storage/v1, the
// external-service simulators at /_sim/gateway, /_sim/routing, /_sim/cep, /_sim/geocoding, /_sim/whatsapp and
// /_sim/webpush (a Web Push service), the
// simulators page's helpers at /_sim/web, and the web app at `/`.
import { type Context, Hono, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import type postgres from "postgres";
import { bearerToken, createVerifier } from "../common/jwt.ts";
import { type ClientInfo, createAuth } from "./auth/mod.ts";
import type { Mailbox } from "./auth/mailbox.ts";
import { type FunctionConfig, projectRoot, type StackConfig } from "./config.ts";
import type { LocalKeys } from "./keys.ts";
import { createRealtime } from "./realtime/mod.ts";
import { createRest } from "./rest/mod.ts";
import { createGatewaySimulator } from "./simulators/gateway.ts";
import { localOnly } from "./simulators/local-only.ts";
import { createCepSimulator } from "./simulators/cep.ts";
import { createGeocodingSimulator } from "./simulators/geocoding.ts";
import { createRoutingSimulator } from "./simulators/routing.ts";
import { createWhatsAppSimulator } from "./simulators/whatsapp.ts";
import { createWebPushSimulator } from "./simulators/webpush.ts";
import { createStorage } from "./storage/mod.ts";
import { createWebApp } from "./web.ts";

type Handler = (req: Request) => Response | Promise<Response>;

export interface ServerOptions {
  config: StackConfig;
  keys: LocalKeys;
  sql: postgres.Sql;
  databaseUrl: string;
  apiUrl: string;
  /** The mailbox the stack's SMTP listener delivers to (local/start.ts); Auth's mail and WhatsApp's copies go there too. */
  mailbox: Mailbox;
}

export interface Server {
  close(): Promise<void>;
}

/** Supabase's API gateway answers browsers' CORS for Auth and Storage; the local stack does the same. */
function withCors(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set("access-control-allow-origin", "*");
  headers.set(
    "access-control-allow-headers",
    "authorization, apikey, content-type, x-client-info, x-supabase-api-version, x-upsert, cache-control, x-metadata",
  );
  headers.set("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS");
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

async function gatewayCors(c: Context, next: Next): Promise<Response | void> {
  if (c.req.method === "OPTIONS") return withCors(new Response(null));
  await next();
  c.res = withCors(c.res);
}

/** Bodies the simulators and the mailbox read: 1 MiB at most, like the API's (413 beyond, never read whole). */
const MAX_LOCAL_BODY_BYTES = 1 << 20;
const localBodyLimit = bodyLimit({
  maxSize: MAX_LOCAL_BODY_BYTES,
  onError: (c) => c.json({ detail: `The body is larger than ${MAX_LOCAL_BODY_BYTES} bytes` }, 413),
});

async function loadFunctions(functions: FunctionConfig[]): Promise<Map<string, FunctionConfig & { fetch: Handler }>> {
  const loaded = new Map<string, FunctionConfig & { fetch: Handler }>();
  for (const fn of functions) {
    const module = await import(fn.entrypoint.href);
    loaded.set(fn.name, { ...fn, fetch: (req: Request) => module.default.fetch(req) });
  }
  return loaded;
}

export async function startServer(options: ServerOptions): Promise<Server> {
  const { config, keys, sql } = options;
  const verify = createVerifier({ jwtSecret: keys.jwtSecret, jwks: keys.jwks });
  const functions = await loadFunctions(config.functions);
  const auth = createAuth({ sql, keys, issuer: `${options.apiUrl}/auth/v1`, ...config.auth, mailbox: options.mailbox });
  const realtime = await createRealtime({
    sql,
    databaseUrl: options.databaseUrl,
    verifyToken: verify,
    apiKeys: [keys.anonKey, keys.serviceRoleKey],
    privateOnly: config.realtime.privateOnly,
  });
  const rest = await createRest({ sql, keys, configUrl: new URL("supabase/config.toml", projectRoot) });
  const storage = createStorage({
    sql,
    verifyToken: verify,
    jwtSecret: keys.jwtSecret,
    dataDir: config.env.DATA_DIR,
    apiKeys: [keys.anonKey, keys.serviceRoleKey],
  });
  const gateway = createGatewaySimulator({ pngQrCodes: true });
  const routing = createRoutingSimulator();
  const cep = createCepSimulator();
  const geocoding = createGeocodingSimulator();
  // Each WhatsApp message the simulator accepts is also a message in the local mailbox.
  const whatsapp = createWhatsAppSimulator({
    onMessage: (m) =>
      options.mailbox.send({
        from: { Name: "WhatsApp (simulador)", Address: "whatsapp@simulator.local" },
        to: `${m.to}@whatsapp.local`,
        subject: `WhatsApp: ${m.template}`,
        text: m.text,
        html: `<p>${m.text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>`,
      }),
  });
  const webpush = createWebPushSimulator({ publicUrl: `${options.apiUrl}/_sim/webpush` });
  const web = createWebApp({
    apiUrl: options.apiUrl,
    anonKey: keys.anonKey,
    platformWebhookSecret: config.env.GATEWAY_PLATFORM_WEBHOOK_SECRET,
    gateway,
  });

  /**
   * The caller's address appended to X-Forwarded-For, as Supabase's API gateway does before a function sees the
   * request: the last hop is the one the platform vouches for (any before it is the client's own writing).
   */
  function forwardedFor(c: Context<{ Bindings: ClientInfo }>, req: Request, url: string | URL = req.url): Request {
    const peer = c.env?.remoteAddr?.hostname;
    if (!peer && url === req.url) return req;
    const headers = new Headers(req.headers);
    const prior = headers.get("x-forwarded-for");
    if (peer) headers.set("x-forwarded-for", prior ? `${prior}, ${peer}` : peer);
    // Built from its parts, not `new Request(req, ...)`: a request following the incoming one's abort signal (no
    // function reads it) made Deno build an AbortError for every request once answered.
    return new Request(url, { method: req.method, headers, body: req.body, redirect: req.redirect });
  }

  /** The edge runtime's JWT check for functions deployed with verify_jwt = true. */
  async function invoke(fn: FunctionConfig & { fetch: Handler }, req: Request): Promise<Response> {
    // Like `supabase functions serve`, a CORS preflight reaches the function without a token.
    if (fn.verifyJwt && req.method !== "OPTIONS") {
      const token = bearerToken(req.headers.get("authorization"));
      if (!token) return Response.json({ code: 401, message: "Missing authorization header" }, { status: 401 });
      try {
        await verify(token);
      } catch {
        return Response.json({ code: 401, message: "Invalid JWT" }, { status: 401 });
      }
    }
    return await fn.fetch(req);
  }

  /** /functions/v1/<name>/...: like the edge runtime, the function sees its own name as the first path segment. */
  function functionsPath(c: Context<{ Bindings: ClientInfo }>): Promise<Response> | Response {
    const url = new URL(c.req.url);
    const [, name, rest] = /^\/functions\/v1\/([^/]+)(\/.*)?$/.exec(url.pathname)!;
    const fn = functions.get(name);
    if (!fn) return c.json({ code: "NOT_FOUND", message: "Requested function was not found" }, 404);
    return invoke(fn, forwardedFor(c, c.req.raw, new URL(`/${name}${rest ?? ""}${url.search}`, url)));
  }

  /** A public path served by a function (docs/contract.md); the path reaches the function unchanged. */
  const byFunction = (name: string) => (c: Context<{ Bindings: ClientInfo }>) => {
    const fn = functions.get(name);
    return fn ? invoke(fn, forwardedFor(c, c.req.raw)) : c.notFound();
  };

  // Not strict: a trailing slash reaches the same route (/health/, /api/v1/prices/).
  const app = new Hono<{ Bindings: ClientInfo }>({ strict: false });

  app.use("/auth/v1/*", gatewayCors);
  app.route("/auth/v1", auth.app);
  // Realtime gets the request itself: upgrading to a websocket needs the original.
  app.all("/realtime/v1/*", (c) => realtime.fetch(c.req.raw));
  app.all("/rest/v1", (c) => rest.handle(c.req.raw));
  app.all("/rest/v1/*", (c) => rest.handle(c.req.raw));
  app.all("/storage/v1/*", (c) => storage.fetch(c.req.raw));

  app.use("/_mail/*", localOnly, localBodyLimit);
  app.route("/_mail/api/v1", auth.mailbox);
  app.use("/_sim/*", localOnly, localBodyLimit);
  app.all("/_sim/gateway/*", (c) => gateway.fetch(c.req.raw));
  app.mount("/_sim/routing", routing.fetch);
  app.mount("/_sim/cep", cep.fetch);
  app.mount("/_sim/geocoding", geocoding.fetch);
  app.mount("/_sim/whatsapp", whatsapp.fetch);
  app.mount("/_sim/webpush", webpush.fetch);
  app.route("/_sim/web", web.simulators);

  app.all("/functions/v1/:name", functionsPath);
  app.all("/functions/v1/:name/*", functionsPath);
  app.all("/api/v1/webhooks/gateway", byFunction("gateway-webhook"));
  app.all("/api/v1/webhooks/gateway/*", byFunction("gateway-webhook"));
  app.all("/api/v1", byFunction("api"));
  app.all("/api/v1/*", byFunction("api"));
  app.all("/health", byFunction("api"));

  app.route("/", web.app);

  app.notFound((c) => c.json({ detail: "Not Found" }, 404));
  app.onError((error, c) => {
    console.error(
      JSON.stringify({ event: "unhandled_error", path: new URL(c.req.url).pathname, error: String(error) }),
    );
    return c.json({ detail: "Internal Server Error" }, 500);
  });

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: config.env.API_PORT, onListen: () => {} },
    (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr }),
  );

  return {
    async close() {
      await realtime.close();
      await rest.close();
      await server.shutdown();
      auth.close();
    },
  };
}

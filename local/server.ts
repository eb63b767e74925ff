// The one HTTP server of the local stack (docs/architecture.md, The local stack): the Edge Functions at
// /functions/v1/<name> and behind the public paths, the identity provider at
// /auth/v1 (its mailbox at /_mail), PostgREST at /rest/v1, Realtime at /realtime/v1, and the external-service
// simulators at /_sim/gateway and /_sim/routing.
import type postgres from "postgres";
import { bearerToken, createVerifier } from "../functions/_shared/jwt.ts";
import { createAuth } from "./auth/mod.ts";
import { type FunctionConfig, projectRoot, type StackConfig } from "./config.ts";
import type { LocalKeys } from "./keys.ts";
import { createRealtime } from "./realtime/mod.ts";
import { createRest } from "./rest/mod.ts";
import { createGatewaySimulator } from "./simulators/gateway.ts";
import { createRoutingSimulator } from "./simulators/routing.ts";
import { createStorage } from "./storage/mod.ts";
import { createWebApp } from "./web.ts";

type Handler = (req: Request) => Response | Promise<Response>;

export interface ServerOptions {
  config: StackConfig;
  keys: LocalKeys;
  sql: postgres.Sql;
  databaseUrl: string;
  apiUrl: string;
}

export interface Server {
  close(): Promise<void>;
}

/** Supabase's API gateway answers browsers' CORS for Auth; the local stack does the same. */
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

/** Public paths served by a function, in order (docs/contract.md); the path reaches the function unchanged. */
const PUBLIC_ROUTES: { pattern: RegExp; fn: string }[] = [
  { pattern: /^\/api\/v1\/webhooks\/gateway(\/|$)/, fn: "gateway-webhook" },
  { pattern: /^\/api\/v1(\/|$)/, fn: "api" },
  { pattern: /^\/health\/?$/, fn: "api" },
];

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
  const auth = createAuth({
    sql,
    keys,
    issuer: `${options.apiUrl}/auth/v1`,
    ...config.auth,
    configUrl: new URL("supabase/config.toml", projectRoot),
  });
  const realtime = await createRealtime({
    sql,
    databaseUrl: options.databaseUrl,
    verifyToken: verify,
    apiKeys: [keys.anonKey, keys.serviceRoleKey],
  });
  const rest = await createRest({ sql, keys, configUrl: new URL("supabase/config.toml", projectRoot) });
  const storage = createStorage({ sql, verifyToken: verify, jwtSecret: keys.jwtSecret, dataDir: config.env.DATA_DIR });
  const gateway = createGatewaySimulator({ pngQrCodes: true });
  const routing = createRoutingSimulator();
  const web = createWebApp({
    apiUrl: options.apiUrl,
    anonKey: keys.anonKey,
    platformWebhookSecret: config.env.GATEWAY_PLATFORM_WEBHOOK_SECRET,
    gateway,
  });

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

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path.startsWith("/auth/v1/")) return withCors(req.method === "OPTIONS" ? new Response(null) : await auth(req));
    if (path.startsWith("/realtime/v1/")) return await realtime.fetch(req);
    if (path === "/rest/v1" || path.startsWith("/rest/v1/")) return await rest.handle(req);
    if (path.startsWith("/_mail/api/v1/")) return auth.mailbox(req);
    if (path.startsWith("/storage/v1/")) return await storage.fetch(req);
    if (path.startsWith("/_sim/gateway/")) return await gateway.fetch(req);
    if (path.startsWith("/_sim/routing/")) return await routing.fetch(req);

    const fnMatch = /^\/functions\/v1\/([^/]+)(\/.*)?$/.exec(path);
    if (fnMatch) {
      const fn = functions.get(fnMatch[1]);
      if (!fn) {
        return Response.json({ code: "NOT_FOUND", message: "Requested function was not found" }, { status: 404 });
      }
      // Like the edge runtime, the function sees its own name as the first path segment.
      const inner = new URL(`/${fnMatch[1]}${fnMatch[2] ?? ""}${url.search}`, url);
      return await invoke(fn, new Request(inner, req));
    }
    for (const { pattern, fn } of PUBLIC_ROUTES) {
      const target = functions.get(fn);
      if (pattern.test(path) && target) return await invoke(target, req);
    }
    return (await web(req)) ?? Response.json({ detail: "Not Found" }, { status: 404 });
  }

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: config.env.API_PORT, onListen: () => {} },
    async (req) => {
      try {
        return await route(req);
      } catch (error) {
        console.error(
          JSON.stringify({ event: "unhandled_error", path: new URL(req.url).pathname, error: String(error) }),
        );
        return Response.json({ detail: "Internal Server Error" }, { status: 500 });
      }
    },
  );

  return {
    async close() {
      await realtime.close();
      await rest.close();
      await server.shutdown();
    },
  };
}

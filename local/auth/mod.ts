// The local identity provider: a stand-in for Supabase Auth (GoTrue) behind
// Supabase's API gateway, serving /auth/v1/* with the endpoints, bodies,
// error codes and messages auth-js relies on. Tables: sql/local/10_auth.sql.
import { adminCreateUser, adminDeleteUser, adminGetUser, adminUpdateUser } from "./admin.ts";
import type { AuthOptions, Handler } from "./context.ts";
import { AuthError, errorResponse, errors, gatewayError, requestedApiVersion } from "./errors.ts";
import { token } from "./grants.ts";
import { log } from "./log.ts";
import { health, jwks, settings } from "./meta.ts";
import { createTokenVerifier } from "./tokens.ts";
import { getUser, logout } from "./user.ts";

export type { AuthOptions } from "./context.ts";

/** The server mounts this module for every path under it. */
const PREFIX = "/auth/v1";

interface Route {
  method: string;
  /** Matched against the path after /auth/v1; groups become `params`. */
  path: RegExp;
  handler: Handler;
  /** Served without an API key, as the gateway's open routes are. */
  open?: boolean;
}

const ROUTES: Route[] = [
  { method: "GET", path: /^\/health$/, handler: health, open: true },
  { method: "GET", path: /^\/\.well-known\/jwks\.json$/, handler: jwks, open: true },
  { method: "GET", path: /^\/settings$/, handler: settings },
  { method: "POST", path: /^\/token$/, handler: token },
  { method: "GET", path: /^\/user$/, handler: getUser },
  { method: "POST", path: /^\/logout$/, handler: logout },
  { method: "POST", path: /^\/admin\/users$/, handler: adminCreateUser },
  { method: "GET", path: /^\/admin\/users\/([^/]+)$/, handler: adminGetUser },
  { method: "PUT", path: /^\/admin\/users\/([^/]+)$/, handler: adminUpdateUser },
  { method: "DELETE", path: /^\/admin\/users\/([^/]+)$/, handler: adminDeleteUser },
];

export function createAuth(options: AuthOptions): (req: Request) => Promise<Response> {
  const verifyToken = createTokenVerifier(options.keys);
  const apiKeys = [options.keys.anonKey, options.keys.serviceRoleKey];

  return async (req) => {
    const url = new URL(req.url);
    const path = url.pathname.slice(PREFIX.length);
    const onPath = ROUTES.filter((route) => route.path.test(path));
    const route = onPath.find((candidate) => candidate.method === req.method);

    if (!route?.open) {
      const refusal = await checkApiKey(req, url, apiKeys);
      if (refusal) return refusal;
    }
    try {
      if (!route) throw onPath.length ? errors.methodNotAllowed() : errors.notFound();
      const params = route.path.exec(path)!.slice(1);
      return await route.handler({ req, url, params, options, verifyToken });
    } catch (error) {
      return failure(error, req, path);
    }
  };
}

/** The gateway in front of GoTrue: the `apikey` header (or query parameter) must be the anon or service_role key. */
async function checkApiKey(req: Request, url: URL, apiKeys: string[]): Promise<Response | null> {
  const presented = req.headers.get("apikey") ?? url.searchParams.get("apikey");
  if (!presented) return gatewayError("missing_api_key");
  const matches = await Promise.all(apiKeys.map((key) => constantTimeEqual(presented, key)));
  return matches.includes(true) ? null : gatewayError("invalid_api_key");
}

/** Compares digests, so the time taken reveals neither the key nor how much of it matched. */
async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i] ^ y[i];
  return difference === 0;
}

function failure(error: unknown, req: Request, path: string): Response {
  if (error instanceof AuthError) return errorResponse(error, requestedApiVersion(req));
  log("unexpected_error", { method: req.method, path, error: error instanceof Error ? error.message : String(error) });
  return errorResponse(errors.unexpected(), requestedApiVersion(req));
}

// The local identity provider: a stand-in for Supabase Auth (GoTrue) behind
// Supabase's API gateway, serving /auth/v1/* with the endpoints, bodies,
// error codes and messages auth-js relies on. Tables: sql/local/10_auth.sql.
import { timingSafeEqual } from "../../functions/_shared/crypto.ts";
import { adminCreateUser, adminDeleteUser, adminGetUser, adminListUsers, adminUpdateUser } from "./admin.ts";
import type { AuthOptions, Handler } from "./context.ts";
import { AuthError, errorResponse, errors, gatewayError, requestedApiVersion } from "./errors.ts";
import { token } from "./grants.ts";
import { log } from "./log.ts";
import { Mailbox } from "./mailbox.ts";
import { health, jwks, settings } from "./meta.ts";
import { type AuthProject, loadAuthProject } from "./project.ts";
import { recover, verify } from "./recovery.ts";
import { signup } from "./signup.ts";
import { createTokenVerifier } from "./tokens.ts";
import { getUser, logout, updateCurrentUser } from "./user.ts";

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
  { method: "POST", path: /^\/signup$/, handler: signup },
  { method: "POST", path: /^\/recover$/, handler: recover },
  // Open at the gateway: the link in a recovery mail reaches it from a browser without a key.
  { method: "GET", path: /^\/verify$/, handler: verify, open: true },
  { method: "POST", path: /^\/verify$/, handler: verify, open: true },
  { method: "GET", path: /^\/user$/, handler: getUser },
  { method: "PUT", path: /^\/user$/, handler: updateCurrentUser },
  { method: "POST", path: /^\/logout$/, handler: logout },
  { method: "GET", path: /^\/admin\/users$/, handler: adminListUsers },
  { method: "POST", path: /^\/admin\/users$/, handler: adminCreateUser },
  { method: "GET", path: /^\/admin\/users\/([^/]+)$/, handler: adminGetUser },
  { method: "PUT", path: /^\/admin\/users\/([^/]+)$/, handler: adminUpdateUser },
  { method: "DELETE", path: /^\/admin\/users\/([^/]+)$/, handler: adminDeleteUser },
];

export interface Auth {
  (req: Request): Promise<Response>;
  /** The local mailbox, Mailpit's API, which the server mounts at /_mail/api/v1. */
  mailbox(req: Request): Response;
}

export function createAuth(options: AuthOptions & { configUrl: URL }): Auth {
  const verifyToken = createTokenVerifier(options.keys);
  const apiKeys = [options.keys.anonKey, options.keys.serviceRoleKey];
  const mailbox = new Mailbox();
  let project: Promise<AuthProject> | undefined;

  const handle = async (req: Request) => {
    const url = new URL(req.url);
    const path = url.pathname.slice(PREFIX.length);
    const onPath = ROUTES.filter((route) => route.path.test(path));
    const route = onPath.find((candidate) => candidate.method === req.method);

    if (!route?.open) {
      const refusal = checkApiKey(req, url, apiKeys);
      if (refusal) return refusal;
    }
    try {
      if (!route) throw onPath.length ? errors.methodNotAllowed() : errors.notFound();
      const params = route.path.exec(path)!.slice(1);
      project ??= loadAuthProject(options.configUrl);
      return await route.handler({ req, url, params, options, verifyToken, project: await project, mailbox });
    } catch (error) {
      return failure(error, req, path);
    }
  };
  return Object.assign(handle, { mailbox: (req: Request) => mailbox.handle(req) });
}

/** The gateway in front of GoTrue: the `apikey` header (or query parameter) must be the anon or service_role key. */
function checkApiKey(req: Request, url: URL, apiKeys: string[]): Response | null {
  const presented = req.headers.get("apikey") ?? url.searchParams.get("apikey");
  if (!presented) return gatewayError("missing_api_key");
  const matches = apiKeys.map((key) => timingSafeEqual(presented, key));
  return matches.includes(true) ? null : gatewayError("invalid_api_key");
}

function failure(error: unknown, req: Request, path: string): Response {
  if (error instanceof AuthError) return errorResponse(error, requestedApiVersion(req));
  log("unexpected_error", { method: req.method, path, error: error instanceof Error ? error.message : String(error) });
  return errorResponse(errors.unexpected(), requestedApiVersion(req));
}

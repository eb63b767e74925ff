// The local identity provider: a stand-in for Supabase Auth (GoTrue) behind
// Supabase's API gateway, serving /auth/v1/* with the endpoints, bodies,
// error codes and messages auth-js relies on. A Hono app, mounted by
// local/server.ts at /auth/v1. Tables: sql/local/10_auth.sql.
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import postgres from "postgres";
import {
  adminCreateUser,
  adminDeleteUser,
  adminGetUser,
  adminListUsers,
  adminUpdateUser,
  adminUserFactors,
  adminUserPasskeys,
} from "./admin.ts";
import type { AuthOptions, Handler, RequestContext } from "./context.ts";
import {
  authorize,
  challengeFactor,
  enrollFactor,
  identities,
  oauthServer,
  passkeys,
  singleSignOn,
  unenrollFactor,
} from "./disabled.ts";
import { AuthError, errorResponse, errors, requestedApiVersion } from "./errors.ts";
import { checkApiKey } from "../api-gateway.ts";
import { token } from "./grants.ts";
import { createLimiters, type LimitedGroup } from "./limits.ts";
import { generateLink, invite } from "./links.ts";
import { log } from "./log.ts";
import { createMailboxApp, Mailbox } from "./mailbox.ts";
import { health, jwks, settings } from "./meta.ts";
import { magicLink, otp } from "./otp.ts";
import { bcryptPool } from "./passwords.ts";
import { recover } from "./recovery.ts";
import { resend } from "./resend.ts";
import { signup } from "./signup.ts";
import { createTokenVerifier } from "./tokens.ts";
import { getUser, logout, reauthenticate, updateCurrentUser } from "./user.ts";
import { verify } from "./verify.ts";

export type { AuthOptions } from "./context.ts";

/** GoTrue reads at most 1 MiB of a request body (limitRequestBody), and answers 413 beyond. */
export const MAX_BODY_BYTES = 1 << 20;

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface Route {
  method: Method;
  /** Hono's syntax, under /auth/v1. */
  path: string;
  handler: Handler;
  /** Served without an API key, as the gateway's open routes are (Kong's auth-v1-open*). */
  open?: boolean;
  /** The rate limit GoTrue applies before the handler (others apply theirs inside it). */
  limit?: LimitedGroup;
}

const ROUTES: Route[] = [
  { method: "GET", path: "/health", handler: health, open: true },
  { method: "GET", path: "/.well-known/jwks.json", handler: jwks, open: true },
  { method: "GET", path: "/settings", handler: settings },
  { method: "POST", path: "/token", handler: token },
  { method: "POST", path: "/signup", handler: signup },
  { method: "POST", path: "/recover", handler: recover, limit: "recover" },
  { method: "POST", path: "/resend", handler: resend, limit: "resend" },
  { method: "POST", path: "/magiclink", handler: magicLink, limit: "otp" },
  { method: "POST", path: "/otp", handler: otp, limit: "otp" },
  // Open at the gateway: the link in a mail reaches it from a browser without a key.
  { method: "GET", path: "/verify", handler: verify, open: true, limit: "verify" },
  { method: "POST", path: "/verify", handler: verify, open: true, limit: "verify" },
  { method: "GET", path: "/authorize", handler: authorize, open: true },
  { method: "GET", path: "/user", handler: getUser },
  { method: "PUT", path: "/user", handler: updateCurrentUser },
  { method: "GET", path: "/reauthenticate", handler: reauthenticate },
  { method: "POST", path: "/logout", handler: logout },
  { method: "GET", path: "/user/identities/authorize", handler: identities },
  { method: "DELETE", path: "/user/identities/:identity_id", handler: identities },
  { method: "POST", path: "/factors", handler: enrollFactor },
  { method: "POST", path: "/factors/:factor_id/challenge", handler: challengeFactor },
  { method: "POST", path: "/factors/:factor_id/verify", handler: challengeFactor },
  { method: "DELETE", path: "/factors/:factor_id", handler: unenrollFactor },
  { method: "POST", path: "/sso", handler: singleSignOn },
  { method: "GET", path: "/sso/saml/metadata", handler: singleSignOn },
  { method: "POST", path: "/sso/saml/acs", handler: singleSignOn },
  { method: "POST", path: "/invite", handler: invite },
  { method: "GET", path: "/admin/users", handler: adminListUsers },
  { method: "POST", path: "/admin/users", handler: adminCreateUser },
  { method: "GET", path: "/admin/users/:user_id", handler: adminGetUser },
  { method: "PUT", path: "/admin/users/:user_id", handler: adminUpdateUser },
  { method: "DELETE", path: "/admin/users/:user_id", handler: adminDeleteUser },
  { method: "GET", path: "/admin/users/:user_id/factors", handler: adminUserFactors },
  { method: "PUT", path: "/admin/users/:user_id/factors/:factor_id", handler: adminUserFactors },
  { method: "DELETE", path: "/admin/users/:user_id/factors/:factor_id", handler: adminUserFactors },
  { method: "GET", path: "/admin/users/:user_id/passkeys", handler: adminUserPasskeys },
  { method: "DELETE", path: "/admin/users/:user_id/passkeys/:passkey_id", handler: adminUserPasskeys },
  { method: "POST", path: "/admin/generate_link", handler: generateLink },
  ...(["GET", "POST", "PATCH", "DELETE"] as const).flatMap((method) => [
    { method, path: "/passkeys", handler: passkeys },
    { method, path: "/passkeys/*", handler: passkeys },
    { method, path: "/oauth/*", handler: oauthServer },
    { method, path: "/user/oauth/*", handler: oauthServer },
    { method, path: "/admin/oauth/*", handler: oauthServer },
    { method, path: "/admin/custom-providers", handler: oauthServer },
    { method, path: "/admin/custom-providers/*", handler: oauthServer },
  ]),
];

export interface Auth {
  /** Serves /auth/v1; mount it there. */
  app: Hono;
  /** The local mailbox, Mailpit's API; mount it at /_mail/api/v1. */
  mailbox: Hono;
  close(): void;
}

/** The client's address, for the rate limits: local/server.ts passes Deno.serve's connection info as Hono's env. */
export interface ClientInfo {
  remoteAddr?: { hostname?: string };
}

export function createAuth(options: AuthOptions): Auth {
  const verifyToken = createTokenVerifier(options.keys);
  const apiKeys = [options.keys.anonKey, options.keys.serviceRoleKey];
  const mailbox = options.mailbox ?? new Mailbox();
  const limiters = createLimiters(options.project.rateLimits);
  const app = new Hono<{ Bindings: ClientInfo }>();

  const serve = (route: Route) => async (c: Context<{ Bindings: ClientInfo }>) => {
    const client = c.env?.remoteAddr?.hostname ?? "unknown";
    const ctx: RequestContext = {
      req: c.req.raw,
      url: new URL(c.req.url),
      params: c.req.param() as Record<string, string>,
      options,
      verifyToken,
      project: options.project,
      mailbox,
      limiters,
      limit(group) {
        if (!limiters.take(group, client)) {
          log("rate_limited", { group, path: ctx.url.pathname });
          throw errors.overRequestRateLimit();
        }
      },
    };
    try {
      if (route.limit) ctx.limit(route.limit);
      return await route.handler(ctx);
    } catch (error) {
      return failure(error, c.req.raw);
    }
  };

  /** The gateway in front of GoTrue: the `apikey` header (or query parameter) must be the anon or service_role key. */
  const apiKey = (open: boolean) => async (c: Context, next: () => Promise<void>) => {
    if (open) return await next();
    const refusal = checkApiKey(c.req.raw, apiKeys);
    if (refusal) return refusal;
    await next();
  };
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => errorResponse(errors.requestTooLarge(MAX_BODY_BYTES), requestedApiVersion(c.req.raw)),
  });

  const methods = new Map<string, Set<string>>();
  for (const route of ROUTES) {
    app.on(route.method, route.path, apiKey(route.open ?? false), limitBody, serve(route));
    methods.set(route.path, (methods.get(route.path) ?? new Set()).add(route.method));
  }
  // A known path called with another method: 405, after the gateway's key check (registered last, so a route wins).
  for (const [path, allowed] of methods) {
    const open = ROUTES.some((r) => r.path === path && r.open);
    app.all(path, apiKey(open), (c) => {
      if (allowed.has(c.req.method)) return c.notFound();
      return errorResponse(errors.methodNotAllowed(), requestedApiVersion(c.req.raw));
    });
  }
  // Any other path: the gateway's key check, then GoTrue's 404 (a route, not notFound, so it holds once mounted).
  app.all(
    "*",
    (c) => checkApiKey(c.req.raw, apiKeys) ?? errorResponse(errors.notFound(), requestedApiVersion(c.req.raw)),
  );
  app.onError((error, c) => failure(error, c.req.raw));

  return {
    app: app as unknown as Hono,
    mailbox: createMailboxApp(mailbox),
    close: () => bcryptPool.close(),
  };
}

function failure(error: unknown, req: Request): Response {
  if (error instanceof AuthError) return errorResponse(error, requestedApiVersion(req));
  // Class 22 (data exception) is the value's fault, never the server's: 400, as GoTrue's validation answers.
  if (isDataException(error)) return errorResponse(errors.unstorableValue(), requestedApiVersion(req));
  log("unexpected_error", {
    method: req.method,
    path: new URL(req.url).pathname,
    error: error instanceof Error ? error.message : String(error),
  });
  return errorResponse(errors.unexpected(), requestedApiVersion(req));
}

function isDataException(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.code.startsWith("22");
}

// POST /token: the password, refresh_token and pkce grants (GoTrue's token.go
// and token_refresh.go), answering GoTrue's AccessTokenResponse; the id_token
// and web3 grants answer as GoTrue does for providers this project does not
// turn on. Every grant but an unknown one takes from the `token_refresh`
// rate limit first, as GoTrue's Token does.
import { decodeJwt } from "jose";
import { z } from "zod";
import type postgres from "postgres";
import type { AuthOptions, Handler, RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import { readJson } from "./request.ts";
import { exchangeCodeForSession } from "./pkce.ts";
import { exchangeRefreshToken, MIN_REFRESH_TOKEN_LENGTH, startSession } from "./sessions.ts";
import { type AccessToken, type AuthenticationMethod, issueAccessToken } from "./tokens.ts";
import {
  findUserByEmail,
  findUserById,
  isBanned,
  type User,
  userJson,
  type UserRow,
  verifyPassword,
  withIdentities,
} from "./users.ts";

const PasswordGrantBody = z.object({
  email: z.string().optional(),
  phone: z.string().optional(),
  password: z.string().optional(),
});

const RefreshTokenGrantBody = z.object({ refresh_token: z.string().optional() });

const GRANTS: Record<string, (ctx: RequestContext) => Promise<Response>> = {
  password: passwordGrant,
  refresh_token: refreshTokenGrant,
  pkce: exchangeCodeForSession,
  id_token: idTokenGrant,
  web3: () => Promise.reject(errors.web3Disabled()),
};

export const token: Handler = async (ctx) => {
  const grant = GRANTS[ctx.url.searchParams.get("grant_type") ?? ""];
  if (!grant) throw errors.unsupportedGrantType();
  ctx.limit("token");
  return await grant(ctx);
};

const IdTokenGrantBody = z.looseObject({ provider: z.string().nullish(), id_token: z.string().nullish() });

/** Issuers of the OIDC providers GoTrue knows by name (internal/api/provider). */
const ISSUERS: Record<string, string> = {
  google: "https://accounts.google.com",
  facebook: "https://www.facebook.com",
  kakao: "https://kauth.kakao.com",
  snapchat: "https://accounts.snapchat.com/accounts/oauth2/token",
  keycloak: "",
};

/** signInWithIdToken: no OAuth provider is turned on in this project, so each is refused as GoTrue refuses it. */
async function idTokenGrant({ req }: RequestContext): Promise<Response> {
  const body = await readJson(req, IdTokenGrantBody);
  const provider = body.provider ?? "";
  if (provider in ISSUERS) throw errors.idTokenProviderDisabled(ISSUERS[provider]);
  if (provider === "apple" || provider === "azure") {
    let issuer: unknown;
    try {
      issuer = decodeJwt(body.id_token ?? "").iss;
    } catch { /* the token is not a JWT */ }
    if (typeof issuer !== "string") {
      throw errors.idTokenIssuerUndetected(provider === "apple" ? "Apple" : "Azure");
    }
    throw errors.idTokenProviderDisabled(issuer);
  }
  if (provider.startsWith("custom:")) throw errors.customOAuthDisabled();
  throw errors.idTokenProviderNotAllowed(provider);
}

export interface IssuedSession {
  accessToken: AccessToken;
  refreshToken: string;
  /** The user as signed in (last_sign_in_at set), with identities. */
  user: User;
  sessionId: string;
}

/** GoTrue's IssueRefreshToken: a new session for the user, its first refresh token and an access token. */
export async function issueSession(
  tx: postgres.TransactionSql,
  options: AuthOptions,
  req: Request,
  userId: string,
  method: AuthenticationMethod,
): Promise<IssuedSession> {
  const { session, refreshToken } = await startSession(tx, userId, req.headers.get("user-agent"), method);
  const [signedIn] = await tx<UserRow[]>`
    update auth.users set last_sign_in_at = now() where id = ${userId} returning *`;
  const accessToken = await issueAccessToken(tx, options, signedIn, session, method);
  return { accessToken, refreshToken, user: (await withIdentities(tx, signedIn))!, sessionId: session.id };
}

export function sessionResponse(accessToken: AccessToken, refreshToken: string, user: User): Response {
  return Response.json({
    access_token: accessToken.token,
    token_type: "bearer",
    expires_in: accessToken.expiresAt - Math.floor(Date.now() / 1000),
    expires_at: accessToken.expiresAt,
    refresh_token: refreshToken,
    user: userJson(user),
  });
}

/** The checks in GoTrue's order; every way of not knowing the password answers `invalid_credentials`. */
async function passwordGrant({ req, options, project }: RequestContext): Promise<Response> {
  const body = await readJson(req, PasswordGrantBody);
  if (body.email && body.phone) throw errors.emailAndPhone();
  if (body.email && !project.emailEnabled) throw errors.emailLoginsDisabled();
  // Phone sign-in is off, as in supabase/config.toml.
  if (body.phone) throw errors.phoneLoginsDisabled();
  if (!body.email) throw errors.missingEmailOrPhone();

  const user = await findUserByEmail(options.sql, body.email);
  if (user?.encrypted_password && isBanned(user)) throw errors.userBannedAtLogin();
  if (!(await verifyPassword(body.password ?? "", user?.encrypted_password)) || !user) {
    log("sign_in", { grant: "password", result: "invalid_credentials", user_id: user?.id });
    throw errors.invalidCredentials();
  }
  if (!user.email_confirmed_at) throw errors.emailNotConfirmed();

  const issued = await authTransaction(options.sql, (tx) => issueSession(tx, options, req, user.id, "password"));
  const sessionId = issued.sessionId;
  const response = sessionResponse(issued.accessToken, issued.refreshToken, issued.user);
  log("sign_in", { grant: "password", result: "ok", user_id: user.id, session_id: sessionId });
  return response;
}

async function refreshTokenGrant({ req, options }: RequestContext): Promise<Response> {
  const body = await readJson(req, RefreshTokenGrantBody);
  const presented = body.refresh_token ?? "";
  if (presented.length < MIN_REFRESH_TOKEN_LENGTH) throw errors.refreshTokenMalformed();

  const policy = { reuseInterval: options.refreshTokenReuseInterval, rotation: options.refreshTokenRotation };
  // A detected reuse is committed (the session stays ended) before it is answered as an error.
  const outcome = await authTransaction(options.sql, async (tx) => {
    const exchange = await exchangeRefreshToken(tx, presented, policy, req.headers.get("user-agent"));
    if (exchange.result !== "issued") return exchange;
    const user = (await findUserById(tx, exchange.session.user_id))!;
    if (isBanned(user)) throw errors.userBannedAtRefresh();
    const accessToken = await issueAccessToken(tx, options, user, exchange.session, "token_refresh");
    return { ...exchange, response: sessionResponse(accessToken, exchange.refreshToken, user) };
  });

  if (outcome.result === "not_found") throw errors.refreshTokenNotFound();
  const ids = { user_id: outcome.session.user_id, session_id: outcome.session.id };
  if (outcome.result === "reused") {
    log("refresh_token_reused", { ...ids, result: options.refreshTokenRotation ? "session_ended" : "refused" });
    throw errors.refreshTokenAlreadyUsed();
  }
  log("token_refreshed", ids);
  return outcome.response;
}

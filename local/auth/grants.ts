// POST /token: the password and refresh_token grants (GoTrue's token.go and
// token_refresh.go), answering GoTrue's AccessTokenResponse.
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import { readJson } from "./request.ts";
import { exchangeRefreshToken, MIN_REFRESH_TOKEN_LENGTH, startSession } from "./sessions.ts";
import { type AccessToken, issueAccessToken } from "./tokens.ts";
import { findUserByEmail, findUserById, isBanned, type User, userJson, type UserRow, verifyPassword } from "./users.ts";

const PasswordGrantBody = z.object({
  email: z.string().optional(),
  phone: z.string().optional(),
  password: z.string().optional(),
});

const RefreshTokenGrantBody = z.object({ refresh_token: z.string().optional() });

export const token: Handler = async (ctx) => {
  switch (ctx.url.searchParams.get("grant_type")) {
    case "password":
      return await passwordGrant(ctx);
    case "refresh_token":
      return await refreshTokenGrant(ctx);
    default:
      throw errors.unsupportedGrantType();
  }
};

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
async function passwordGrant({ req, options }: RequestContext): Promise<Response> {
  const body = await readJson(req, PasswordGrantBody);
  if (body.email && body.phone) throw errors.emailAndPhone();
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

  const { response, sessionId } = await authTransaction(options.sql, async (tx) => {
    const { session, refreshToken } = await startSession(tx, user.id, req.headers.get("user-agent"));
    const [signedIn] = await tx<UserRow[]>`
      update auth.users set last_sign_in_at = now() where id = ${user.id} returning *`;
    const accessToken = await issueAccessToken(tx, options, signedIn, session, "password");
    const response = sessionResponse(accessToken, refreshToken, { ...signedIn, identities: user.identities });
    return { response, sessionId: session.id };
  });
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

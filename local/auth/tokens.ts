// Access tokens: the claims Supabase Auth puts in them, the custom access
// token hook, ES256 signing with the local signing key, and verification of
// the bearer tokens clients present (user sessions and the API keys).
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from "jose";
import type postgres from "postgres";
import type { LocalKeys } from "../keys.ts";
import type { AuthOptions } from "./context.ts";
import { errors } from "./errors.ts";
import { runAccessTokenHook } from "./hook.ts";
import { sessionAmr, type SessionRow } from "./sessions.ts";
import type { UserRow } from "./users.ts";

/** How the session was authenticated, as GoTrue names it (models.AuthenticationMethod) for the hook and `amr`. */
export type AuthenticationMethod =
  | "password"
  | "token_refresh"
  | "otp"
  | "magiclink"
  | "recovery"
  | "invite"
  | "email/signup"
  | "email_change";

export interface AccessToken {
  token: string;
  /** Unix seconds. */
  expiresAt: number;
}

/** The claims GoTrue issues, in its order; `amr` lists how the session was authenticated, kept across refreshes. */
function standardClaims(
  options: AuthOptions,
  user: UserRow,
  session: SessionRow,
  amr: { method: string; timestamp: number }[],
  issuedAt: number,
  expiresAt: number,
): Record<string, unknown> {
  return {
    iss: options.issuer,
    sub: user.id,
    aud: user.aud,
    exp: expiresAt,
    iat: issuedAt,
    email: user.email ?? "",
    phone: user.phone ?? "",
    app_metadata: user.raw_app_meta_data ?? {},
    user_metadata: user.raw_user_meta_data ?? {},
    role: user.role,
    aal: session.aal ?? "aal1",
    amr,
    session_id: session.id,
    is_anonymous: user.is_anonymous,
  };
}

/** Signs an access token for `session`, passing the claims through the hook when one is configured. */
export async function issueAccessToken(
  tx: postgres.TransactionSql,
  options: AuthOptions,
  user: UserRow,
  session: SessionRow,
  method: AuthenticationMethod,
): Promise<AccessToken> {
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + options.jwtExpiry;
  let claims = standardClaims(options, user, session, await sessionAmr(tx, session.id), issuedAt, expiresAt);
  if (options.hook) {
    claims = await runAccessTokenHook(tx, options.hook, { user_id: user.id, claims, authentication_method: method });
  }
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: options.keys.signingAlg, kid: options.keys.signingKid, typ: "JWT" })
    .sign(options.keys.signingKey);
  return { token, expiresAt };
}

export type TokenVerifier = (token: string) => Promise<JWTPayload & Record<string, unknown>>;

/**
 * Accepts what GoTrue accepts: tokens signed with the published ES256 key
 * (found by `kid`), and HS256 tokens signed with the legacy JWT secret (the
 * anon and service_role keys). Anything else is `bad_jwt`.
 */
export function createTokenVerifier(keys: LocalKeys): TokenVerifier {
  const publicKeys = createLocalJWKSet(keys.jwks);
  const secret = new TextEncoder().encode(keys.jwtSecret);
  return async (token) => {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw errors.badJwt("token is malformed: could not JSON decode header");
    }
    try {
      const { payload } = alg === "HS256"
        ? await jwtVerify(token, secret, { algorithms: ["HS256"] })
        : await jwtVerify(token, publicKeys, { algorithms: ["ES256"] });
      return payload;
    } catch (error) {
      throw errors.badJwt(verificationFailure(error));
    }
  };
}

/** golang-jwt's wording for the failure, which GoTrue appends to its message. */
function verificationFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "token has invalid claims: token is expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `token has invalid claims: ${error.message}`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return "token signature is invalid: signature is invalid";
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JOSEAlgNotAllowed) {
    return "token is unverifiable: error while executing keyfunc: unrecognized JWT kid or algorithm";
  }
  return "token is malformed: could not parse token";
}

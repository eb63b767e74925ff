// Verification of Supabase access tokens and API keys, for HS256 (the legacy
// JWT secret) and for asymmetric keys (ES256/RS256/EdDSA) published as a JWKS.
// `alg: none` and any algorithm not listed here are refused by construction.
// Neutral code (common/): the Edge Functions and the local stand-ins both verify tokens with it.
import { createHash } from "node:crypto";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors as joseErrors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from "jose";

export type Claims = JWTPayload & {
  role?: string;
  company_id?: string;
  email?: string;
  user_metadata?: Record<string, unknown>;
  app_metadata?: Record<string, unknown>;
  session_id?: string;
  is_anonymous?: boolean;
  aal?: string;
};

export interface VerifierOptions {
  /** The legacy shared secret (SUPABASE_JWT_SECRET); enables HS256. */
  jwtSecret?: string;
  /** A JWKS document (SUPABASE_JWKS). */
  jwks?: JSONWebKeySet;
  /** Where to fetch the JWKS from when `jwks` is not given. */
  jwksUrl?: string;
}

export class TokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TokenError";
  }
}

const ASYMMETRIC = ["ES256", "RS256", "EdDSA"];

/** Builds a verifier; the returned function throws TokenError for any token it does not accept. */
export function createVerifier(options: VerifierOptions): (token: string) => Promise<Claims> {
  const secret = options.jwtSecret ? new TextEncoder().encode(options.jwtSecret) : undefined;
  const keySet = options.jwks
    ? createLocalJWKSet(options.jwks)
    : options.jwksUrl
    ? createRemoteJWKSet(new URL(options.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 })
    : undefined;

  return async (token: string): Promise<Claims> => {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new TokenError("invalid JWT: malformed token");
    }
    try {
      if (alg === "HS256" && secret) {
        return (await jwtVerify(token, secret, { algorithms: ["HS256"] })).payload as Claims;
      }
      if (alg && ASYMMETRIC.includes(alg) && keySet) {
        return (await jwtVerify(token, keySet, { algorithms: ASYMMETRIC })).payload as Claims;
      }
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new TokenError("invalid JWT: token is expired");
      throw new TokenError("invalid JWT: unable to verify signature");
    }
    throw new TokenError(`invalid JWT: signing method ${alg ?? "none"} is not accepted`);
  };
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

export interface CacheOptions {
  /** At most this many tokens are remembered; the oldest go first. */
  maxEntries?: number;
  /** The clock, in milliseconds (tests move it). */
  now?: () => number;
}

/** SHA-256 in hex, synchronously: WebCrypto's digest is an asynchronous op, costlier than the hashing of a token. */
function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Remembers what `verify` accepted, so that a token's signature is checked once
 * per its lifetime rather than on every request: keyed by the token's SHA-256
 * (the token itself is never kept), each entry only until the token's `exp`,
 * at most `maxEntries` of them. Refusals are not remembered: a token that fails
 * is verified again (and fails again) each time. A token without `exp` is
 * verified every time.
 */
export function cachingVerifier(
  verify: (token: string) => Promise<Claims>,
  options: CacheOptions = {},
): (token: string) => Promise<Claims> {
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { claims: Claims; expiresAt: number }>();

  return async (token: string): Promise<Claims> => {
    const key = sha256Hex(token);
    const hit = entries.get(key);
    if (hit) {
      if (now() < hit.expiresAt) return hit.claims;
      entries.delete(key);
    }
    const claims = await verify(token);
    if (typeof claims.exp === "number" && now() < claims.exp * 1000) {
      if (entries.size >= maxEntries) {
        for (const [k, e] of entries) if (now() >= e.expiresAt) entries.delete(k);
        // Still full: the oldest entries make room.
        for (const k of entries.keys()) {
          if (entries.size < maxEntries) break;
          entries.delete(k);
        }
      }
      entries.set(key, { claims: Object.freeze(claims), expiresAt: claims.exp * 1000 });
    }
    return claims;
  };
}

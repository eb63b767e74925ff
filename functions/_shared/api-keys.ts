// API keys (docs/integrations.md): `dp_live_` and 43 base64url characters (32
// random bytes), told apart from a JWT by the prefix alone. Only the key's
// SHA-256 reaches the database; each request carrying a key is looked up by
// that hash (public.use_api_key), which also takes one request from the
// company's token bucket in Postgres, so every instance of the API shares the
// limit and a revoked key is refused from the next request on. The key then
// acts with the role the database names for keys (private.integrations()) and
// the key's id as `sub`, narrowed to its scopes here.
import { createHash } from "node:crypto";
import { admitDatabaseRole, asService } from "./db.ts";
import { HttpError, notAuthenticated } from "./errors.ts";
import type { Claims } from "./jwt.ts";

export const API_KEY_PREFIX = "dp_live_";
const API_KEY_PATTERN = /^dp_live_[A-Za-z0-9_-]{43}$/;

/** The scopes a key may have; a route names the one it needs (route.ts). */
export const API_KEY_SCOPES = [
  "deliveries:read",
  "deliveries:write",
  "drivers:read",
  "routes:write",
  "webhooks:manage",
] as const;
export type ApiKeyScope = typeof API_KEY_SCOPES[number];

/** What a scope also allows: writing routes includes reading them. */
const IMPLIED: Partial<Record<string, ApiKeyScope[]>> = { "routes:read": ["routes:write"] };

/** Whether a bearer token is an API key rather than a JWT: its prefix alone. */
export function isApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

/** A new key: the prefix and 32 random bytes in base64url. */
export function newApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return API_KEY_PREFIX + btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The key's SHA-256 in hex: what is stored and looked up (a key has 256 bits of entropy: no salt needed). */
export function apiKeyHash(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** What a person sees of a key after its creation, to tell keys apart. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 4);
}

export interface RateLimit {
  limit: number;
  remaining: number;
  reset: number;
  retryAfter: number;
}

export interface KeyCaller {
  claims: Claims;
  rateLimit: RateLimit;
}

interface UsedKey {
  key_id: string;
  company_id: string;
  role: string;
  scopes: string[];
  allowed: boolean;
  limit: number;
  remaining: number;
  reset: number;
  retry_after: number;
}

/** The RateLimit-* headers of an answer to a key (every answer, a 429 too). */
export function rateLimitHeaders(limit: RateLimit): Record<string, string> {
  return {
    "RateLimit-Limit": String(limit.limit),
    "RateLimit-Remaining": String(limit.remaining),
    "RateLimit-Reset": String(limit.reset),
  };
}

/**
 * The claims a key acts with, and its company's rate limit: 401 for a key
 * that is malformed, unknown or revoked; 429 with Retry-After once the
 * company's bucket is empty (counted before anything else is done).
 */
export async function authenticateApiKey(key: string): Promise<KeyCaller> {
  if (!API_KEY_PATTERN.test(key)) throw notAuthenticated("invalid API key", true);
  const [row] = await asService((tx) => tx`select public.use_api_key(${apiKeyHash(key)}) as used`);
  const used = row.used as UsedKey | null;
  if (!used) throw notAuthenticated("invalid or revoked API key", true);
  const rateLimit = { limit: used.limit, remaining: used.remaining, reset: used.reset, retryAfter: used.retry_after };
  if (!used.allowed) {
    throw new HttpError(429, "Too many requests: this company's API keys are over their rate limit", {
      ...rateLimitHeaders(rateLimit),
      "Retry-After": String(used.retry_after),
    });
  }
  // The role the database gave, admitted as a role a transaction may take (db.ts).
  admitDatabaseRole(used.role);
  return {
    claims: {
      sub: used.key_id,
      role: used.role,
      company_id: used.company_id,
      aud: "authenticated",
      scopes: used.scopes,
      api_key: true,
    } as Claims,
    rateLimit,
  };
}

/** The scopes of claims made from an API key; undefined for a person's token. */
export function keyScopes(claims: Claims): readonly string[] | undefined {
  if ((claims as { api_key?: unknown }).api_key !== true) return undefined;
  return (claims as { scopes?: string[] }).scopes ?? [];
}

/** 403 unless a key's claims hold `scope` (or a scope that implies it); a person's token is not narrowed. */
export function refuseOutsideScope(claims: Claims, scope: string | undefined): void {
  const scopes = keyScopes(claims);
  if (scopes === undefined) return;
  if (!scope) throw new HttpError(403, "API keys may not use this operation");
  if (scopes.includes(scope) || (IMPLIED[scope] ?? []).some((s) => scopes.includes(s))) return;
  throw new HttpError(403, `this API key lacks the scope ${scope}`);
}

// What every Storage route shares: who the caller is (Storage's JWT plugin),
// the request scope its database work runs in, and the path's bucket and
// object key, decoded from the raw URL so that nothing is decoded twice.
import type { Context } from "hono";
import { isApiKey } from "../api-gateway.ts";
import { bearerToken, type Claims } from "../../common/jwt.ts";
import type { Caller, RequestScope, StorageDb } from "./database.ts";
import { ERRORS, validationError } from "./errors.ts";
import type { ObjectFiles } from "./files.ts";

export const BASE_PATH = "/storage/v1";

export interface StorageContext {
  db: StorageDb;
  files: ObjectFiles;
  verifyToken: (token: string) => Promise<Claims>;
  /** The project's API keys: an `apikey` header stands for the bearer only when it is one of them. */
  apiKeys: string[];
  /** The key Storage signs its URL tokens with (the project's JWT secret). */
  urlSigningKey: Uint8Array;
  /** The project's upload limit (config.toml [storage] file_size_limit). */
  fileSizeLimit: number;
  /** How long a signed upload URL lives, in seconds (Storage's default, 2 hours). */
  uploadUrlSeconds: number;
}

const ANON: Caller = { claims: { role: "anon" }, jwt: "", authenticated: false };

/**
 * The caller, as Storage's JWT plugin sees it: the bearer token, or the
 * apikey when it is one of the project's keys and no Authorization was sent.
 * Supabase's gateway runs no key check on /storage/v1 (Storage "manages its
 * own auth": supabase/docker's kong.yml has no key-auth there, only a
 * transformer that makes a known key the bearer), so a missing or unknown
 * apikey is no gateway 401 here: without a bearer it is Storage's 400, with a
 * bearer the bearer alone counts. With `optional` (routes that serve public
 * buckets), a missing or invalid token is the unauthenticated anon.
 */
export async function authenticate(ctx: StorageContext, c: Context, optional = false): Promise<Caller> {
  const authorization = c.req.header("authorization");
  const apikey = c.req.header("apikey");
  const token = bearerToken(authorization) ??
    (authorization ? authorization : apikey && isApiKey(apikey, ctx.apiKeys) ? apikey : "");
  if (!token) {
    if (optional) return ANON;
    throw validationError("headers must have required property 'authorization'");
  }
  try {
    const claims = await ctx.verifyToken(token);
    return {
      claims: { ...claims, role: typeof claims.role === "string" && claims.role ? claims.role : "anon" },
      jwt: token,
      authenticated: true,
    };
  } catch (error) {
    if (optional) return ANON;
    throw ERRORS.accessDenied(error instanceof Error ? error.message : "invalid JWT");
  }
}

export function scopeOf(c: Context, operation: string): RequestScope {
  const url = new URL(c.req.url);
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => (headers[name] = value));
  return { headers, method: c.req.method, path: url.pathname.slice(BASE_PATH.length) + url.search, operation };
}

/** The raw (still percent-encoded) path after `prefix`, e.g. "avatars/a%20b.png" after "/object/". */
function rawTail(c: Context, prefix: string): string {
  return new URL(c.req.url).pathname.slice(BASE_PATH.length + prefix.length);
}

/** `{bucket}/{key...}` after `prefix`, each decoded once. */
export function bucketAndKey(c: Context, prefix: string): { bucket: string; key: string } {
  const tail = rawTail(c, prefix);
  const slash = tail.indexOf("/");
  const bucket = slash < 0 ? tail : tail.slice(0, slash);
  const key = slash < 0 ? "" : tail.slice(slash + 1);
  return { bucket: decodeURIComponent(bucket), key: decodeURIComponent(key) };
}

/** The single path segment after `prefix` (a bucket id). */
export function segment(c: Context, prefix: string): string {
  return decodeURIComponent(rawTail(c, prefix).split("/")[0]);
}

export const isUuid = (value: string | undefined): value is string =>
  !!value && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-5][0-9a-f]{3}-[089ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(value);

// The local PostgREST: a stand-in for /rest/v1 of a Supabase project (the
// version in local/versions.ts), behind the same API-key gateway as the local
// Auth, routed with Hono. Each request runs as PostgREST runs it: one
// transaction on a connection logged in as `authenticator`, `set local role`
// to the token's role, `request.jwt.claims` and the request's method, path
// and headers as settings, read-only for reads.
//
// Its schema cache and configuration follow the database as PostgREST's do:
// loaded at start, then again on `NOTIFY pgrst, 'reload schema'` (which the
// event triggers of sql/local/60_postgrest.sql send after DDL, as on Supabase)
// and `NOTIFY pgrst, 'reload config'` (for the in-database `pgrst.*`
// settings). It is never product code: on Supabase the real PostgREST answers.
import { Hono } from "hono";
import type { Context as HonoContext } from "hono";
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, type JWTPayload, jwtVerify } from "jose";
import postgres from "postgres";
import { BodyTooLargeError } from "../../common/body.ts";
import { isConnectionError } from "../../common/connection.ts";
import { checkApiKey } from "../api-gateway.ts";
import type { LocalKeys } from "../keys.ts";
import { POSTGREST_SERVER } from "../versions.ts";
import { applyDbSettings, readDbSettings, readFileConfig, type RestConfig } from "./config.ts";
import { errorResponse, errors, fromPostgres, RestError } from "./errors.ts";
import { accessible, openApiDocument } from "./openapi.ts";
import { readRelation, writeRelation } from "./relation.ts";
import {
  bodyTooLargeResponse,
  contentType,
  type Context,
  negotiate,
  parsePrefer,
  PREFIX,
  transaction,
} from "./request.ts";
import { callRoutine } from "./rpc.ts";
import { closest, loadSchemaCache, type SchemaCache, table } from "./schema.ts";

export interface RestOptions {
  /** A superuser pool: it reads the catalogs and listens on `pgrst`; requests run on a pool of `authenticator`. */
  sql: postgres.Sql;
  keys: LocalKeys;
  /** supabase/config.toml, for [api] schemas, extra_search_path and max_rows. */
  configUrl: URL;
  log?: (line: string) => void;
}

export interface Rest {
  /** The Hono app serving /rest/v1. */
  app: Hono;
  handle(req: Request): Promise<Response>;
  /** Loads the configuration and the schema cache again now (as `NOTIFY pgrst, 'reload config'` does). */
  reload(): Promise<void>;
  close(): Promise<void>;
}

interface State {
  config: RestConfig;
  cache: SchemaCache;
}

/** PostgREST's CORS (src/PostgREST/Cors.hs): any origin, and the headers clients need to read. */
function corsHeaders(req: Request): Headers {
  return new Headers({
    "access-control-allow-origin": "*",
    "access-control-expose-headers":
      "Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit",
    ...(req.method === "OPTIONS"
      ? {
        "access-control-allow-methods": "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD",
        "access-control-allow-headers": req.headers.get("access-control-request-headers") ??
          "authorization, apikey, content-type, x-client-info, accept-profile, content-profile, prefer, range",
        "access-control-max-age": "86400",
      }
      : {}),
    server: POSTGREST_SERVER,
  });
}

/** At most one reload a second is started by a request naming something the cache lacks but the catalog has. */
const MISS_RELOAD_INTERVAL_MS = 1_000;
/** How long a request waits for a schema cache reload in flight. */
const RELOAD_WAIT_MS = 2_000;

export async function createRest(options: RestOptions): Promise<Rest> {
  const log = options.log ?? ((line: string) => console.log(line));
  const fileConfig = await readFileConfig(options.configUrl);
  const [host] = options.sql.options.host;
  const [port] = options.sql.options.port;
  // authenticator is created by sql/local/00_roles.sql, as Supabase creates it.
  const pool = postgres({
    host,
    port,
    database: options.sql.options.database,
    user: "authenticator",
    password: "postgres",
    max: 10,
    prepare: false,
    onnotice: () => {},
  });
  const verify = createVerifier(options.keys);
  const apiKeys = [options.keys.anonKey, options.keys.serviceRoleKey];

  // --- configuration and schema cache, reloaded on NOTIFY pgrst ----------------
  const warned = new Set<string>();
  async function load(previous: State | null, readConfig: boolean): Promise<State> {
    let config = previous?.config ?? fileConfig;
    if (readConfig || !previous) {
      const settings = await readDbSettings(pool);
      config = applyDbSettings(fileConfig, settings, (line) => {
        if (!warned.has(line)) log(`rest: ${line}`);
        warned.add(line);
      });
    }
    return { config, cache: await loadSchemaCache(options.sql, config, previous?.cache.timezones) };
  }
  let state = await load(null, true);
  let requested = 0;
  let loaded = 0;
  let wantConfig = false;
  let loading: Promise<void> | null = null;
  let lastMissReload = 0;
  /** Queues a reload; reloads asked for while one runs are served by one more run after it. */
  function reload(config: boolean): Promise<void> {
    requested++;
    wantConfig ||= config;
    loading ??= (async () => {
      while (loaded < requested) {
        const target = requested;
        const withConfig = wantConfig;
        wantConfig = false;
        try {
          state = await load(state, withConfig);
        } catch (error) {
          log(`rest: could not reload the schema cache (${(error as Error).message}); keeping the previous one`);
        }
        loaded = target;
      }
    })().finally(() => loading = null);
    return loading;
  }
  /**
   * The state to answer with: a reload in flight (a migration that just committed) is waited for, up to
   * RELOAD_WAIT_MS, so that the answer reflects it; past that (a database that does not answer), the last one.
   */
  const current = async () => {
    if (loading) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([loading, new Promise((r) => (timer = setTimeout(r, RELOAD_WAIT_MS)))]);
      clearTimeout(timer);
    }
    return state;
  };
  const listener = await options.sql.listen("pgrst", (payload) => {
    if (payload === "" || payload === "reload schema") reload(false);
    else if (payload === "reload config") reload(true);
  }, () => {
    // On reconnecting, notifications may have been missed: reload, as PostgREST does.
    if (loaded > 0 || requested > 0) reload(true);
  });

  /** A name the cache lacks but the catalog has (a migration that just committed): reload, then look again. */
  async function knownAfterReload(kind: "relation" | "function", schema: string, name: string): Promise<boolean> {
    const [row] = kind === "relation"
      ? await options.sql`select exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                            where n.nspname = ${schema} and c.relname = ${name}) as found`
      : await options.sql`select exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                            where n.nspname = ${schema} and p.proname = ${name}) as found`;
    if (!row.found) return false;
    if (loading) await current();
    else if (Date.now() - lastMissReload >= MISS_RELOAD_INTERVAL_MS) {
      lastMissReload = Date.now();
      await reload(false);
    }
    return true;
  }

  // --- per request --------------------------------------------------------------
  async function context(c: HonoContext, cors: Headers): Promise<Context> {
    const req = c.req.raw;
    const url = new URL(req.url);
    const { config, cache } = await current();
    const token = bearer(req.headers.get("authorization")) ??
      (req.headers.get("apikey") ?? url.searchParams.get("apikey"))!;
    const claims = await verify(token);
    const role = typeof claims.role === "string" && claims.role ? claims.role : config.anonRole;
    const write = ["POST", "PATCH", "PUT", "DELETE"].includes(req.method);
    const profile = req.headers.get(write ? "content-profile" : "accept-profile");
    if (profile !== null && !config.schemas.includes(profile)) throw errors.unacceptableSchema(profile, config.schemas);
    const ctx: Context = {
      req,
      url,
      config,
      cache,
      schema: profile ?? config.schemas[0],
      profiled: profile !== null || config.schemas.length > 1,
      claims,
      role,
      authed: role !== config.anonRole,
      prefs: parsePrefer(req, config, cache.timezones),
      pool,
      cors,
    };
    c.set("rest" as never, ctx as never);
    return ctx;
  }

  const app = new Hono();
  app.use("*", async (c, next) => {
    const req = c.req.raw;
    const cors = corsHeaders(req);
    c.set("cors" as never, cors as never);
    if (req.method === "OPTIONS" && req.headers.has("access-control-request-method")) {
      return new Response(null, { status: 200, headers: cors });
    }
    const refusal = checkApiKey(req, apiKeys);
    if (refusal) return withHeaders(refusal, cors);
    // A NUL reaches PostgREST's SQL as a parameter or a literal, which Postgres refuses as a value (22021, a 400);
    // here it is refused before it is spliced into a statement (an order's column, say). One in `select` is the
    // select parser's parse error instead (PGRST100, parseSelect), as PostgREST's.
    if (hasNul(new URL(req.url))) return errorResponse(errors.nulCharacter(), cors);
    await next();
  });
  const corsOf = (c: HonoContext) => c.get("cors" as never) as unknown as Headers;

  const root = async (c: HonoContext) => {
    const ctx = await context(c, corsOf(c));
    if (ctx.req.method === "OPTIONS") return info(ctx, "OPTIONS,GET,HEAD");
    if (!["GET", "HEAD"].includes(ctx.req.method)) throw errors.unsupportedMethod(ctx.req.method);
    if (ctx.config.openApiMode === "disabled") throw errors.openApiDisabled();
    negotiate(ctx.req, ["openapi", "json"]);
    const tables = [...(ctx.cache.tables.get(ctx.schema)?.values() ?? [])];
    const routines = [...(ctx.cache.routines.get(ctx.schema)?.values() ?? [])].flat();
    const seen = await transaction(ctx, true, (tx) => accessible(tx, ctx.schema));
    const follow = ctx.config.openApiMode === "follow-privileges";
    const document = openApiDocument(
      ctx.cache,
      follow ? tables.filter((t) => seen.tables.has(t.name)) : tables,
      follow ? routines.filter((r) => seen.functions.has(r.name)) : routines,
      seen.description,
      c.req.header("host") ?? "localhost",
    );
    const headers = new Headers(ctx.cors);
    headers.set("content-type", contentType({ kind: "openapi", stripNulls: false }));
    if (ctx.profiled) headers.set("content-profile", ctx.schema);
    return new Response(ctx.req.method === "HEAD" ? null : JSON.stringify(document), { status: 200, headers });
  };
  app.all(PREFIX, root);
  app.all(`${PREFIX}/`, root);

  app.all(`${PREFIX}/rpc/:name`, async (c) => {
    const ctx = await context(c, corsOf(c));
    const name = c.req.param("name");
    const method = ctx.req.method;
    if (!["GET", "HEAD", "POST", "OPTIONS"].includes(method)) throw errors.invalidRpcMethod(method);
    let overloads = ctx.cache.routines.get(ctx.schema)?.get(name);
    if (!overloads && await knownAfterReload("function", ctx.schema, name)) {
      const fresh = await current();
      Object.assign(ctx, { cache: fresh.cache, config: fresh.config });
      overloads = ctx.cache.routines.get(ctx.schema)?.get(name);
    }
    if (method === "OPTIONS") {
      if (!overloads?.length) throw errors.noRpc(ctx.schema, name, [], null, null);
      return info(ctx, overloads.some((r) => r.volatility === "v") ? "OPTIONS,POST" : "OPTIONS,GET,HEAD,POST");
    }
    return await callRoutine(ctx, name);
  });

  app.all(`${PREFIX}/:relation`, async (c) => {
    const ctx = await context(c, corsOf(c));
    const name = c.req.param("relation");
    let found = table(ctx.cache, ctx.schema, name);
    if (!found && await knownAfterReload("relation", ctx.schema, name)) {
      const fresh = await current();
      Object.assign(ctx, { cache: fresh.cache, config: fresh.config });
      found = table(ctx.cache, ctx.schema, name);
    }
    if (!found) {
      throw errors.tableNotFound(ctx.schema, name, closest(name, ctx.cache.tables.get(ctx.schema)?.keys() ?? []));
    }
    switch (ctx.req.method) {
      case "GET":
      case "HEAD":
        return await readRelation(ctx, found);
      case "POST":
      case "PUT":
      case "PATCH":
      case "DELETE":
        return await writeRelation(ctx, found);
      case "OPTIONS": {
        const hasPk = found.primaryKey.length > 0;
        return info(
          ctx,
          [
            "OPTIONS,GET,HEAD",
            ...(found.insertable ? ["POST"] : []),
            ...(found.insertable && found.updatable && hasPk ? ["PUT"] : []),
            ...(found.updatable ? ["PATCH"] : []),
            ...(found.deletable ? ["DELETE"] : []),
          ].join(","),
        );
      }
      default:
        throw errors.unsupportedMethod(ctx.req.method);
    }
  });
  app.all("*", () => {
    throw errors.invalidResourcePath();
  });

  app.onError((error, c) => {
    const cors = corsOf(c) ?? corsHeaders(c.req.raw);
    if (error instanceof RestError) return errorResponse(error, cors);
    if (error instanceof BodyTooLargeError) return bodyTooLargeResponse(cors);
    if (error instanceof postgres.PostgresError && !isConnectionError(error)) {
      const ctx = c.get("rest" as never) as unknown as Context | undefined;
      return errorResponse(fromPostgres(error, ctx?.authed ?? false), cors);
    }
    if (isConnectionError(error)) return errorResponse(errors.connection(String(error)), cors);
    log(JSON.stringify({ event: "rest_unexpected_error", path: new URL(c.req.url).pathname, error: String(error) }));
    return errorResponse(new RestError(500, "PGRSTX00", "Internal error in the local PostgREST stand-in"), cors);
  });

  return {
    app,
    handle: async (req) => await app.fetch(req),
    reload: () => reload(true),
    async close() {
      await listener.unlisten().catch(() => {});
      await pool.end({ timeout: 1 });
    },
  };
}

function info(ctx: Context, allow: string): Response {
  const headers = new Headers(ctx.cors);
  headers.set("allow", allow);
  return new Response(null, { status: 200, headers });
}

function withHeaders(res: Response, headers: Headers): Response {
  const merged = new Headers(res.headers);
  headers.forEach((value, name) => merged.set(name, value));
  return new Response(res.body, { status: res.status, headers: merged });
}

function bearer(header: string | null): string | null {
  if (header === null) return null;
  const match = /^bearer\s*(.*)$/i.exec(header.trim());
  if (!match) return null;
  if (match[1] === "") throw errors.jwtDecode("Empty JWT is sent in Authorization header");
  return match[1];
}

/** PostgREST's JWT checks (src/PostgREST/Auth.hs) over Supabase's keys: the legacy HS256 secret and the ES256 JWKS. */
function createVerifier(keys: LocalKeys): (token: string) => Promise<JWTPayload & Record<string, unknown>> {
  const secret = new TextEncoder().encode(keys.jwtSecret);
  const keySet = createLocalJWKSet(keys.jwks);
  return async (token) => {
    const parts = token.split(".").length;
    if (parts !== 3) throw errors.jwtDecode(`Expected 3 parts in JWT; got ${parts}`);
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw errors.jwtDecode("JWT couldn't be decoded");
    }
    try {
      const { payload } = alg === "HS256"
        ? await jwtVerify(token, secret, { algorithms: ["HS256"] })
        : await jwtVerify(token, keySet, { algorithms: ["ES256", "RS256"] });
      return payload as JWTPayload & Record<string, unknown>;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw errors.jwtClaims("JWT expired");
      if (error instanceof joseErrors.JWTClaimValidationFailed) throw errors.jwtClaims("Parsing claims failed");
      if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JOSEAlgNotAllowed) {
        throw errors.jwtDecode("No suitable key or wrong key type");
      }
      throw errors.jwtDecode("JWT cryptographic operation failed");
    }
  };
}

function hasNul(url: URL): boolean {
  if (safeDecode(url.pathname).includes("\0")) return true;
  for (const [name, value] of url.searchParams) {
    if (name.includes("\0") || (name !== "select" && value.includes("\0"))) return true;
  }
  return false;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

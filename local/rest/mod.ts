// The local PostgREST: a stand-in for /rest/v1 of a Supabase project, behind
// the same API-key gateway as the local Auth. It speaks the part of PostgREST
// (the version in local/versions.ts) that supabase-js uses: table reads with
// select/embedding/filters/order/range/count, single-object responses, writes
// (which our grants refuse to the API roles), and rpc. Each request runs as
// PostgREST runs it: one transaction on a connection logged in as
// `authenticator`, `set local role` to the token's role, `request.jwt.claims`
// and the request's method, path and headers as settings, read-only for reads.
// It is never product code: on Supabase the real PostgREST answers.
import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, type JWTPayload, jwtVerify } from "jose";
import postgres from "postgres";
import { parse as parseToml } from "smol-toml";
import { gatewayError } from "../auth/errors.ts";
import type { LocalKeys } from "../keys.ts";
import { POSTGREST_SERVER } from "../versions.ts";
import { errorResponse, errors, fromPostgres, RestError } from "./errors.ts";
import { type LogicTree, parseFilterValue, parseLogic, parseOrder, parseSelect, parseTreePath } from "./parse.ts";
import { Builder, ident, type ReadNode, type Relation } from "./query.ts";
import { closest, loadSchemaCache, type Routine, type SchemaCache } from "./schema.ts";

const PREFIX = "/rest/v1";
/** The role of requests whose token has no role claim (PostgREST's db-anon-role, as Supabase sets it). */
const ANON_ROLE = "anon";

export interface RestOptions {
  /** A superuser pool; the stand-in opens its own pool as `authenticator` on the same server. */
  sql: postgres.Sql;
  keys: LocalKeys;
  /** supabase/config.toml, for [api] schemas, extra_search_path and max_rows. */
  configUrl: URL;
}

export interface Rest {
  handle(req: Request): Promise<Response>;
  close(): Promise<void>;
}

interface ApiConfig {
  schemas: string[];
  extraSearchPath: string[];
  maxRows: number | null;
}

async function readApiConfig(url: URL): Promise<ApiConfig> {
  // deno-lint-ignore no-explicit-any
  const api = (parseToml(await Deno.readTextFile(url)) as any).api ?? {};
  return {
    schemas: Array.isArray(api.schemas) && api.schemas.length ? api.schemas : ["public"],
    extraSearchPath: Array.isArray(api.extra_search_path) ? api.extra_search_path : ["public", "extensions"],
    maxRows: typeof api.max_rows === "number" && api.max_rows > 0 ? api.max_rows : null,
  };
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

export async function createRest(options: RestOptions): Promise<Rest> {
  const api = await readApiConfig(options.configUrl);
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
  let cache: Promise<SchemaCache> | undefined;
  const schemaCache = () =>
    cache ??= loadSchemaCache(options.sql, api.schemas[0]).catch((error) => {
      cache = undefined;
      throw error;
    });

  async function handle(req: Request): Promise<Response> {
    const cors = corsHeaders(req);
    if (req.method === "OPTIONS") return new Response(null, { status: 200, headers: cors });
    const url = new URL(req.url);
    const presented = req.headers.get("apikey") ?? url.searchParams.get("apikey");
    if (!presented) return withHeaders(gatewayError("missing_api_key"), cors);
    if (!apiKeys.includes(presented)) return withHeaders(gatewayError("invalid_api_key"), cors);
    let authed = false;
    try {
      const token = bearer(req.headers.get("authorization")) ?? presented;
      const claims = await verify(token);
      const role = typeof claims.role === "string" && claims.role ? claims.role : ANON_ROLE;
      authed = role !== ANON_ROLE;
      const ctx: Context = { req, url, claims, role, authed, api, cache: await schemaCache(), pool, cors };
      return await route(ctx);
    } catch (error) {
      if (error instanceof RestError) return errorResponse(error, cors);
      if (error instanceof postgres.PostgresError) return errorResponse(fromPostgres(error, authed), cors);
      console.error(JSON.stringify({ event: "rest_unexpected_error", path: url.pathname, error: String(error) }));
      return errorResponse(new RestError(500, "PGRSTX00", "Internal error in the local PostgREST stand-in"), cors);
    }
  }

  return {
    handle,
    async close() {
      await pool.end({ timeout: 1 });
    },
  };
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

interface Context {
  req: Request;
  url: URL;
  claims: Record<string, unknown>;
  role: string;
  authed: boolean;
  api: ApiConfig;
  cache: SchemaCache;
  pool: postgres.Sql;
  cors: Headers;
}

type Media = { kind: "array" | "object"; stripNulls: boolean };

/** Accept negotiation over the media types supabase-js asks for. */
function negotiate(req: Request): Media {
  const accept = req.headers.get("accept");
  if (!accept) return { kind: "array", stripNulls: false };
  const offered = accept.split(",").map((part) => part.trim()).filter(Boolean);
  for (const entry of offered) {
    const [type, ...params] = entry.split(";").map((s) => s.trim().toLowerCase());
    const stripNulls = params.includes("nulls=stripped");
    if (type === "application/vnd.pgrst.object+json" || type === "application/vnd.pgrst.object") {
      return { kind: "object", stripNulls };
    }
    if (["application/json", "application/vnd.pgrst.array+json", "*/*", "application/*"].includes(type)) {
      return { kind: "array", stripNulls };
    }
  }
  throw errors.mediaType(offered.map((entry) => entry.split(";")[0].trim()));
}

/** Accept-Profile (reads) / Content-Profile (writes) must name an exposed schema. */
function checkProfile(ctx: Context): void {
  const read = ["GET", "HEAD"].includes(ctx.req.method);
  const profile = ctx.req.headers.get(read ? "accept-profile" : "content-profile");
  if (profile !== null && !ctx.api.schemas.includes(profile)) throw errors.unacceptableSchema(profile, ctx.api.schemas);
}

async function route(ctx: Context): Promise<Response> {
  const path = ctx.url.pathname.slice(PREFIX.length).replace(/^\/+/, "");
  const segments = path === "" ? [] : path.split("/").map(decodeURIComponent);
  checkProfile(ctx);
  if (segments.length === 0) {
    throw errors.notImplemented("The OpenAPI description of the schema is not served by the local stand-in");
  }
  if (segments.length === 2 && segments[0] === "rpc") {
    if (!["GET", "HEAD", "POST"].includes(ctx.req.method)) throw errors.invalidRpcMethod(ctx.req.method);
    return await callRoutine(ctx, segments[1]);
  }
  if (segments.length !== 1) throw errors.invalidResourcePath();
  const table = ctx.cache.tables.get(segments[0]);
  if (!table) {
    throw errors.tableNotFound(ctx.cache.schema, segments[0], closest(segments[0], ctx.cache.tables.keys()));
  }
  const relation: Relation = { name: table.name, columns: table.columns, table };
  switch (ctx.req.method) {
    case "GET":
    case "HEAD":
      return await read(ctx, relation);
    case "POST":
    case "PATCH":
    case "DELETE":
      return await write(ctx, relation);
    default:
      throw errors.unsupportedMethod(ctx.req.method);
  }
}

// --- query parameters -------------------------------------------------------

const RESERVED = new Set(["select", "columns", "on_conflict", "apikey"]);
const EMBEDDABLE = new Set(["order", "limit", "offset", "and", "or"]);

interface QueryParams {
  filters: [string, string][];
  logic: [string, string][];
  order: [string, string][];
  limits: Map<string, number>;
  offsets: Map<string, number>;
  /** RPC arguments given in the query (GET), by name. */
  args: Map<string, string>;
}

function queryParams(url: URL, rpcRead: boolean): QueryParams {
  const out: QueryParams = {
    filters: [],
    logic: [],
    order: [],
    limits: new Map(),
    offsets: new Map(),
    args: new Map(),
  };
  for (const [key, value] of url.searchParams) {
    if (RESERVED.has(key)) continue;
    const last = key.split(".").pop()!;
    if (EMBEDDABLE.has(last)) {
      if (value === "") continue;
      const path = key.split(".").slice(0, -1).join(".");
      if (last === "order") out.order.push([key, value]);
      else if (last === "and" || last === "or") out.logic.push([key, value]);
      else {
        const n = /^-?\d+$/.test(value) ? Number(value) : null;
        if (n === null) continue; // PostgREST ignores a limit or offset that is not a number.
        if (n < 0 && last === "limit") throw errors.negativeLimit();
        (last === "limit" ? out.limits : out.offsets).set(path, Math.max(0, n));
      }
      continue;
    }
    if (rpcRead && parseFilterValue(value, true) === null) out.args.set(key, value);
    else out.filters.push([key, value]);
  }
  return out;
}

/** Filters, logic trees, orders and embedded pages, each put on the node its path names. */
function applyParams(builder: Builder, root: ReadNode, params: QueryParams): void {
  for (const [key, value] of params.filters) {
    const { path, field } = parseTreePath(key);
    const expr = parseFilterValue(value, false)!;
    const node = builder.find(root, path);
    const embed = field.json.length === 0 && !node.relation.columns.has(field.name)
      ? node.embeds.find((e) => e.outName === field.name)
      : undefined;
    if (embed) {
      if (expr.operation.op !== "is" || !["null", "not_null"].includes(expr.operation.value)) {
        throw errors.unacceptableFilter(field.name);
      }
      const isNull = (expr.operation.value === "null") !== expr.negated;
      node.embedNullFilters.push({ name: field.name, isNull });
      continue;
    }
    node.filters.push({ field, expr });
  }
  for (const [key, value] of params.logic) {
    const { path, tree } = parseLogic(key, value);
    builder.find(root, path).logic.push(tree as LogicTree);
  }
  for (const [key, value] of params.order) {
    const path = key.split(".").slice(0, -1);
    builder.find(root, path).order.push(...parseOrder(value));
  }
  for (const [path, limit] of params.limits) {
    if (path !== "") builder.find(root, path.split(".")).limit = limit;
  }
  for (const [path, offset] of params.offsets) {
    if (path !== "") builder.find(root, path.split(".")).offset = offset;
  }
}

/** The top-level page: limit/offset parameters intersected with the Range header, capped by max_rows. */
function topRange(ctx: Context, params: QueryParams, useRangeHeader: boolean): { offset: number; limit?: number } {
  let lower = params.offsets.get("") ?? 0;
  let upper = params.limits.has("") ? lower + params.limits.get("")! - 1 : Infinity;
  const header = useRangeHeader ? ctx.req.headers.get("range") : null;
  const match = header ? /^([0-9]+)-([0-9]*)$/.exec(header.trim()) : null;
  if (match) {
    const [hl, hu] = [Number(match[1]), match[2] === "" ? Infinity : Number(match[2])];
    if (hl > hu) throw errors.lowerGtUpper();
    lower = Math.max(lower, hl);
    upper = Math.min(upper, hu);
  }
  if (ctx.api.maxRows !== null) upper = Math.min(upper, lower + ctx.api.maxRows - 1);
  return { offset: lower, limit: upper === Infinity ? undefined : Math.max(0, upper - lower + 1) };
}

interface Prefer {
  count?: "exact" | "planned" | "estimated";
  returnRepresentation?: "representation" | "minimal" | "headers-only";
  resolution?: "merge-duplicates" | "ignore-duplicates";
  paramsSingleObject: boolean;
}

function prefer(req: Request): Prefer {
  const out: Prefer = { paramsSingleObject: false };
  for (const header of req.headers.get("prefer")?.split(",") ?? []) {
    const [key, value] = header.trim().split("=").map((s) => s.trim());
    if (key === "count" && ["exact", "planned", "estimated"].includes(value)) out.count = value as "exact";
    if (key === "return" && ["representation", "minimal", "headers-only"].includes(value)) {
      out.returnRepresentation = value as "minimal";
    }
    if (key === "resolution" && ["merge-duplicates", "ignore-duplicates"].includes(value)) {
      out.resolution = value as "merge-duplicates";
    }
    if (key === "params" && value === "single-object") out.paramsSingleObject = true;
  }
  return out;
}

// --- execution ---------------------------------------------------------------

interface Outcome {
  total: number | null;
  pageTotal: number;
  body: string;
}

/** One transaction as PostgREST opens it, with the request's settings first. */
async function transaction<T>(ctx: Context, readOnly: boolean, work: (tx: postgres.TransactionSql) => Promise<T>) {
  const headers: Record<string, string> = {};
  ctx.req.headers.forEach((value, name) => headers[name.toLowerCase()] = value);
  const cookies: Record<string, string> = {};
  for (const part of (ctx.req.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) cookies[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  const searchPath = [...new Set([ctx.cache.schema, ...ctx.api.extraSearchPath])].map(ident).join(", ");
  const settings: [string, string][] = [
    ["search_path", searchPath],
    ...(ctx.cache.roleSettings.get(ctx.role) ?? []),
    ["role", ctx.role],
    ["request.jwt.claims", JSON.stringify(ctx.claims)],
    ["request.method", ctx.req.method],
    ["request.path", ctx.url.pathname.slice(PREFIX.length) || "/"],
    ["request.headers", JSON.stringify(headers)],
    ["request.cookies", JSON.stringify(cookies)],
  ];
  const mode = readOnly ? "isolation level read committed read only" : "isolation level read committed";
  return await ctx.pool.begin(mode, async (tx) => {
    const values = settings.flat();
    const calls = settings.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(", ");
    await tx.unsafe(`select ${calls}`, values);
    return await work(tx);
  }) as T;
}

async function checkCasts(tx: postgres.TransactionSql, builder: Builder): Promise<void> {
  for (const cast of builder.casts) {
    const [row] = await tx.unsafe<{ ok: boolean }[]>(
      "select $1 ~ '^[A-Za-z_][A-Za-z0-9_ ]*$' and to_regtype($1) is not null as ok",
      [cast],
    ).catch(() => [{ ok: false }]);
    if (!row.ok) throw new RestError(400, "42704", `type "${cast}" does not exist`);
  }
}

/** Runs `source` (a select of the root node) and aggregates it as PostgREST does. */
async function runRead(
  tx: postgres.TransactionSql,
  builder: Builder,
  source: string,
  countSource: string | null,
  media: Media,
  scalar: "none" | "one" | "set" = "none",
): Promise<Outcome> {
  await checkCasts(tx, builder);
  let body = scalar === "one"
    ? "coalesce((json_agg(_postgrest_t.pgrst_scalar)->0), 'null')"
    : scalar === "set"
    ? "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')"
    : media.kind === "object"
    ? "coalesce((json_agg(_postgrest_t)->0), 'null')"
    : "coalesce(json_agg(_postgrest_t), '[]')";
  if (media.stripNulls) body = `json_strip_nulls(${body})`;
  const text = `with pgrst_source as (${source})
    select ${countSource ? `(${countSource})` : "null::bigint"} as total,
           count(_postgrest_t)::bigint as page_total,
           ${body}::text as body
      from pgrst_source as _postgrest_t`;
  const [row] = await tx.unsafe<{ total: string | null; page_total: string; body: string }[]>(
    text,
    builder.params.values,
  );
  return { total: row.total === null ? null : Number(row.total), pageTotal: Number(row.page_total), body: row.body };
}

function respond(
  ctx: Context,
  outcome: Outcome,
  offset: number,
  media: Media,
  extra: Record<string, string> = {},
): Response {
  const headers = new Headers(ctx.cors);
  const upper = offset + outcome.pageTotal - 1;
  const range = outcome.total !== 0 && offset <= upper ? `${offset}-${upper}` : "*";
  headers.set("content-range", `${range}/${outcome.total ?? "*"}`);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  let status = 200;
  if (outcome.total !== null) {
    if (offset > outcome.total) throw errors.outOfBounds(offset, outcome.total);
    if (outcome.pageTotal < outcome.total) status = 206;
  }
  if (media.kind === "object" && outcome.pageTotal !== 1) throw errors.singularity(outcome.pageTotal);
  headers.set(
    "content-type",
    `${media.kind === "object" ? "application/vnd.pgrst.object+json" : "application/json"}${
      media.stripNulls ? ";nulls=stripped" : ""
    }; charset=utf-8`,
  );
  if (prefer(ctx.req).count) headers.set("preference-applied", `count=${prefer(ctx.req).count}`);
  return new Response(ctx.req.method === "HEAD" ? null : outcome.body, { status, headers });
}

// --- reads ----------------------------------------------------------------------

async function read(ctx: Context, relation: Relation): Promise<Response> {
  const media = negotiate(ctx.req);
  const params = queryParams(ctx.url, false);
  const builder = new Builder(ctx.cache);
  const root = builder.node(relation, relation.name, parseSelect(ctx.url.searchParams.get("select") ?? "*"));
  applyParams(builder, root, params);
  const { offset, limit } = topRange(ctx, params, true);
  root.offset = offset;
  root.limit = limit;
  const wantCount = prefer(ctx.req).count !== undefined;
  const table = relation.table!;
  const from = `${ident(table.schema)}.${ident(table.name)} as ${ident(root.alias)}`;
  const outcome = await transaction(ctx, true, async (tx) => {
    const joins: string[] = [];
    const list = builder.selectList(root, joins);
    const where = builder.where(root);
    const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
    const source = `select ${list} from ${from}${joins.join("")}${whereSql}${builder.orderBy(root)}${
      builder.page(root)
    }`;
    const count = wantCount ? `select count(*) from ${from}${whereSql}` : null;
    return await runRead(tx, builder, source, count, media);
  });
  const canonical = [...ctx.url.searchParams].sort(([a], [b]) => a.localeCompare(b));
  const location = `/${relation.name}${canonical.length ? `?${new URLSearchParams(canonical)}` : ""}`;
  return respond(ctx, outcome, offset, media, { "content-location": location });
}

// --- writes ---------------------------------------------------------------------

async function readBody(req: Request): Promise<unknown> {
  const type = req.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type && type !== "application/json") throw errors.mediaType([type]);
  const text = await req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw errors.invalidBody("Empty or invalid json");
  }
}

/**
 * POST (insert), PATCH (update) and DELETE, built like PostgREST's mutations
 * and run as the caller: Postgres alone decides whether the role may write.
 */
async function write(ctx: Context, relation: Relation): Promise<Response> {
  const method = ctx.req.method;
  const pref = prefer(ctx.req);
  const table = relation.table!;
  const target = `${ident(table.schema)}.${ident(table.name)}`;
  const body = method === "DELETE" ? undefined : await readBody(ctx.req);
  const rows = body === undefined ? [] : Array.isArray(body) ? body : [body];
  if (
    method !== "DELETE" &&
    (body === undefined || rows.some((r) => typeof r !== "object" || r === null || Array.isArray(r)))
  ) {
    throw errors.invalidBody("Empty or invalid json");
  }
  if (method === "PATCH" && Array.isArray(body)) throw errors.invalidBody("Empty or invalid json");
  const columnsParam = ctx.url.searchParams.get("columns");
  const keys = columnsParam
    ? columnsParam.split(",").map((c) => c.trim().replace(/^"(.*)"$/, "$1"))
    : Object.keys((rows[0] ?? {}) as object);
  if (!columnsParam && rows.some((r) => Object.keys(r as object).sort().join(",") !== [...keys].sort().join(","))) {
    throw errors.invalidBody("All object keys must match");
  }
  for (const key of keys) if (!table.columns.has(key)) throw errors.columnNotFound(table.name, key);

  const media = negotiate(ctx.req);
  const params = queryParams(ctx.url, false);
  const builder = new Builder(ctx.cache);
  const root = builder.node(relation, relation.name, parseSelect(ctx.url.searchParams.get("select") ?? "*"));
  applyParams(builder, root, params);
  const mutated = { ...root, filters: [], logic: [], order: [], embedNullFilters: [] } as ReadNode;
  const representation = pref.returnRepresentation === "representation";

  const outcome = await transaction(ctx, false, async (tx) => {
    let mutation: string;
    const cols = keys.map(ident).join(", ");
    if (method === "POST") {
      const payload = builder.params.add(JSON.stringify(rows), "json");
      let conflict = "";
      if (pref.resolution) {
        const onConflict = ctx.url.searchParams.get("on_conflict")?.split(",").map((c) => c.trim()) ?? table.primaryKey;
        for (const c of onConflict) if (!table.columns.has(c)) throw errors.columnNotFound(table.name, c);
        conflict = pref.resolution === "ignore-duplicates"
          ? ` on conflict (${onConflict.map(ident).join(", ")}) do nothing`
          : ` on conflict (${onConflict.map(ident).join(", ")}) do update set ${
            keys.map((k) => `${ident(k)} = excluded.${ident(k)}`).join(", ") ||
            `${ident(onConflict[0])} = excluded.${ident(onConflict[0])}`
          }`;
      }
      mutation = keys.length
        ? `insert into ${target} as ${
          ident(root.alias)
        } (${cols}) select ${cols} from json_populate_recordset(null::${target}, ${payload})${conflict} returning ${
          ident(root.alias)
        }.*`
        : `insert into ${target} as ${ident(root.alias)} default values returning ${ident(root.alias)}.*`;
    } else {
      const where = builder.where(root);
      const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
      if (method === "PATCH") {
        if (!keys.length) throw errors.invalidBody("Empty or invalid json");
        const payload = builder.params.add(JSON.stringify(rows[0]), "json");
        mutation = `update ${target} as ${
          ident(root.alias)
        } set (${cols}) = (select ${cols} from json_populate_record(null::${target}, ${payload}))${whereSql} returning ${
          ident(root.alias)
        }.*`;
      } else {
        mutation = `delete from ${target} as ${ident(root.alias)}${whereSql} returning ${ident(root.alias)}.*`;
      }
    }
    const joins: string[] = [];
    const list = representation ? builder.selectList(mutated, joins) : "";
    await checkCasts(tx, builder);
    const text = `with pgrst_mutation as (${mutation}),
      pgrst_source as (select ${list} from pgrst_mutation as ${ident(root.alias)}${joins.join("")})
      select count(*)::bigint as page_total,
             ${
      media.kind === "object"
        ? "coalesce((json_agg(_postgrest_t)->0), 'null')"
        : "coalesce(json_agg(_postgrest_t), '[]')"
    }::text as body
        from pgrst_source as _postgrest_t`;
    const [row] = await tx.unsafe<{ page_total: string; body: string }[]>(text, builder.params.values);
    const pageTotal = Number(row.page_total);
    // PostgREST rolls a write back when a single object was asked for and not exactly one row changed.
    if (media.kind === "object" && pageTotal !== 1) throw errors.singularity(pageTotal);
    return { pageTotal, body: row.body };
  });

  const headers = new Headers(ctx.cors);
  const count = pref.count ? String(outcome.pageTotal) : "*";
  headers.set("content-range", method === "PATCH" ? `0-${outcome.pageTotal - 1}/${count}` : `*/${count}`);
  if (!representation) return new Response(null, { status: method === "POST" ? 201 : 204, headers });
  headers.set(
    "content-type",
    `${media.kind === "object" ? "application/vnd.pgrst.object+json" : "application/json"}; charset=utf-8`,
  );
  return new Response(outcome.body, { status: method === "POST" ? 201 : 200, headers });
}

// --- rpc ------------------------------------------------------------------------

/** PostgREST's findProc: by name, every given argument a parameter and every required parameter given. */
function findRoutine(ctx: Context, name: string, keys: string[], postJson: boolean, singleObject: boolean): Routine {
  const overloads = ctx.cache.routines.get(name) ?? [];
  const jsonParam = (r: Routine) =>
    r.params.length === 1 && r.params[0].name === "" && ["json", "jsonb"].includes(r.params[0].type);
  let matches = singleObject
    ? overloads.filter((r) => r.params.length === 1 && ["json", "jsonb"].includes(r.params[0].type))
    : overloads.filter((r) => {
      const names = new Set(r.params.map((p) => p.name));
      return keys.every((k) => names.has(k)) && r.params.every((p) => !p.required || keys.includes(p.name));
    });
  if (matches.length === 0 && postJson) matches = overloads.filter(jsonParam);
  const sorted = [...keys].sort();
  if (matches.length === 0) {
    let hint: string | null = null;
    if (overloads.length) {
      hint = `Perhaps you meant to call the function ${ctx.cache.schema}.${name}(${
        overloads[0].params.map((p) => p.name).sort().join(", ")
      })`;
    } else {
      const near = closest(name, ctx.cache.routines.keys());
      if (near) hint = `Perhaps you meant to call the function ${ctx.cache.schema}.${near}`;
    }
    throw errors.noRpc(ctx.cache.schema, name, sorted, postJson, hint);
  }
  if (matches.length > 1) {
    throw errors.ambiguousRpc(
      matches.map((r) => `${r.schema}.${r.name}(${r.params.map((p) => `${p.name} => ${p.type}`).join(", ")})`),
    );
  }
  return matches[0];
}

async function callRoutine(ctx: Context, name: string): Promise<Response> {
  const method = ctx.req.method;
  const read = method !== "POST";
  const pref = prefer(ctx.req);
  const params = queryParams(ctx.url, read);
  let args: Record<string, unknown> = {};
  let rawBody: unknown = undefined;
  if (read) args = Object.fromEntries(params.args);
  else {
    rawBody = (await readBody(ctx.req)) ?? {};
    if (typeof rawBody === "object" && rawBody !== null && !Array.isArray(rawBody)) {
      args = rawBody as Record<string, unknown>;
    } else if (!pref.paramsSingleObject) throw errors.invalidBody("Empty or invalid json");
  }
  const keys = pref.paramsSingleObject ? [] : Object.keys(args);
  const routine = findRoutine(ctx, name, keys, !read, pref.paramsSingleObject);
  const media = negotiate(ctx.req);
  const readOnly = read || routine.volatility !== "v";

  const builder = new Builder(ctx.cache);
  const fn = `${ident(routine.schema)}.${ident(routine.name)}`;
  const single = pref.paramsSingleObject ||
    (routine.params.length === 1 && routine.params[0].name === "" && keys.length > 0);
  let call: string;
  let argsCte = "";
  if (single) {
    call = `${fn}(${builder.params.add(JSON.stringify(rawBody ?? args), routine.params[0].type)})`;
  } else if (keys.length) {
    const given = routine.params.filter((p) => keys.includes(p.name));
    const record = given.map((p) => `${ident(p.name)} ${p.type}`).join(", ");
    const payload = builder.params.add(JSON.stringify(args), "json");
    argsCte = `select * from json_to_record(${payload}) as _(${record})`;
    call = `${fn}(${
      given.map((p) => `${p.variadic ? "variadic " : ""}${ident(p.name)} := pgrst_args.${ident(p.name)}`).join(", ")
    })`;
  } else call = `${fn}()`;
  const fromArgs = argsCte ? `(${argsCte}) as pgrst_args` : "";

  if (routine.returnsVoid || !routine.resultColumns) {
    const outcome = await transaction(ctx, readOnly, (tx) =>
      runRead(
        tx,
        builder,
        `select ${call} as pgrst_scalar${fromArgs ? ` from ${fromArgs}` : ""}`,
        null,
        { kind: "array", stripNulls: media.stripNulls },
        routine.returnsSet ? "set" : "one",
      ));
    if (routine.returnsVoid) return new Response(null, { status: 204, headers: ctx.cors });
    if (media.kind === "object" && routine.returnsSet && outcome.pageTotal !== 1) {
      throw errors.singularity(outcome.pageTotal);
    }
    return respond(ctx, outcome, 0, { kind: "array", stripNulls: media.stripNulls });
  }

  // A composite result reads like a table: select, filters, order, page, and embedding from a table row.
  const relation: Relation = {
    name: routine.resultTable?.name ?? routine.name,
    columns: routine.resultColumns,
    table: routine.resultTable,
  };
  const root = builder.node(relation, routine.name, parseSelect(ctx.url.searchParams.get("select") ?? "*"));
  applyParams(builder, root, params);
  const { offset, limit } = topRange(ctx, params, true);
  root.offset = offset;
  root.limit = limit;
  const from = fromArgs
    ? `${fromArgs} cross join lateral ${call} as ${ident(root.alias)}`
    : `${call} as ${ident(root.alias)}`;
  const outcome = await transaction(ctx, readOnly, async (tx) => {
    const joins: string[] = [];
    const list = builder.selectList(root, joins);
    const where = builder.where(root);
    const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
    const source = `select ${list} from ${from}${joins.join("")}${whereSql}${builder.orderBy(root)}${
      builder.page(root)
    }`;
    const count = pref.count ? `select count(*) from ${from}${whereSql}` : null;
    const objectMedia = routine.returnsSet ? media : { kind: "object" as const, stripNulls: media.stripNulls };
    return await runRead(tx, builder, source, count, objectMedia);
  });
  if (!routine.returnsSet) {
    // A function returning one composite value answers it as an object, not an array.
    return respond(ctx, { ...outcome, pageTotal: outcome.pageTotal }, offset, {
      kind: "array",
      stripNulls: media.stripNulls,
    });
  }
  return respond(ctx, outcome, offset, media);
}

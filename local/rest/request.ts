// One request to the local PostgREST: its context, its `Prefer` header
// (ApiRequest/Preferences.hs), the media types it accepts and sends
// (MediaType.hs), its body (bounded as /api/v1 bounds bodies), its query
// parameters, and the transaction it runs in, opened as PostgREST opens it:
// the request's settings first, then the pre-request function, then the work,
// rolled back instead of committed when `db-tx-end` and `Prefer: tx=` say so.
import type postgres from "postgres";
import { MAX_BODY_BYTES, readBody } from "../../common/body.ts";
import type { RestConfig } from "./config.ts";
import { errors, RestError } from "./errors.ts";
import { parseFilterValue } from "./parse.ts";
import { ident, qualified } from "./query.ts";
import type { SchemaCache } from "./schema.ts";

export const PREFIX = "/rest/v1";

export interface Context {
  req: Request;
  url: URL;
  config: RestConfig;
  cache: SchemaCache;
  /** The request's schema: the profile header's, else the first exposed one. */
  schema: string;
  /** Whether to answer Content-Profile (a profile was asked for, or several schemas are exposed). */
  profiled: boolean;
  claims: Record<string, unknown>;
  role: string;
  authed: boolean;
  prefs: Prefs;
  pool: postgres.Sql;
  cors: Headers;
}

// --- Prefer -------------------------------------------------------------------

export interface Prefs {
  resolution?: "merge-duplicates" | "ignore-duplicates";
  representation?: "representation" | "minimal" | "headers-only";
  count?: "exact" | "planned" | "estimated";
  tx?: "commit" | "rollback";
  missing?: "default" | "null";
  handling?: "strict" | "lenient";
  timezone?: string;
  maxAffected?: number;
  /** What was not understood (refused with handling=strict). */
  invalid: string[];
}

const CHOICES: Record<string, string[]> = {
  resolution: ["merge-duplicates", "ignore-duplicates"],
  return: ["representation", "minimal", "headers-only"],
  count: ["exact", "planned", "estimated"],
  tx: ["commit", "rollback"],
  missing: ["default", "null"],
  handling: ["strict", "lenient"],
};

/** Every `Prefer` header, comma-separated; the first value of each preference wins. */
export function parsePrefer(req: Request, config: RestConfig, timezones: Set<string>): Prefs {
  const prefs: Prefs = { invalid: [] };
  const allowTx = config.txEnd.endsWith("-allow-override");
  const items = (req.headers.get("prefer") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const seen = new Set<string>();
  for (const item of items) {
    const at = item.indexOf("=");
    const [key, value] = at < 0 ? [item, ""] : [item.slice(0, at), item.slice(at + 1)];
    if (key === "timezone") {
      if (timezones.has(value)) {
        if (!seen.has(key)) prefs.timezone = value;
        seen.add(key);
      } else prefs.invalid.push(item);
      continue;
    }
    if (key === "max-affected") {
      if (/^-?\d+$/.test(value)) {
        if (!seen.has(key)) prefs.maxAffected = Number(value);
        seen.add(key);
      } else prefs.invalid.push(item);
      continue;
    }
    if (!CHOICES[key]?.includes(value)) {
      prefs.invalid.push(item);
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    // tx=... is understood either way, applied only where db-tx-end allows an override.
    if (key === "tx" && !allowTx) continue;
    const field = key === "return" ? "representation" : key;
    (prefs as unknown as Record<string, string>)[field] = value;
  }
  return prefs;
}

/** The Preference-Applied header: what this request honoured (Response.hs, responsePreferences). */
export function preferenceApplied(
  prefs: Prefs,
  kind: "read" | "insert" | "upsert" | "update" | "delete" | "rpc",
  resolutionApplied = false,
): string | null {
  const mutation = kind === "insert" || kind === "upsert" || kind === "update" || kind === "delete";
  const values = [
    kind === "insert" && resolutionApplied && prefs.resolution ? `resolution=${prefs.resolution}` : null,
    (kind === "insert" || kind === "update") && prefs.missing ? `missing=${prefs.missing}` : null,
    mutation && prefs.representation ? `return=${prefs.representation}` : null,
    prefs.count ? `count=${prefs.count}` : null,
    prefs.tx ? `tx=${prefs.tx}` : null,
    prefs.handling ? `handling=${prefs.handling}` : null,
    prefs.timezone ? `timezone=${prefs.timezone}` : null,
    (kind === "update" || kind === "delete" || kind === "rpc") && prefs.handling === "strict" &&
      prefs.maxAffected !== undefined
      ? `max-affected=${prefs.maxAffected}`
      : null,
  ].filter((v) => v !== null);
  return values.length ? values.join(", ") : null;
}

/** handling=strict refuses what was not understood (PGRST122). */
export function checkStrict(prefs: Prefs): void {
  if (prefs.handling === "strict" && prefs.invalid.length) throw errors.invalidPreferences(prefs.invalid);
}

// --- media types ----------------------------------------------------------------

export type MediaKind = "json" | "object" | "csv" | "openapi";
export interface Media {
  kind: MediaKind;
  stripNulls: boolean;
  /**
   * `Accept: application/vnd.pgrst.plan[+json|+text]; for="<media>"; options=analyze|...` (db-plan-enabled): the
   * answer is the EXPLAIN of the query that would answer `kind`, not its rows.
   */
  plan?: Plan;
}

export type PlanOption = "analyze" | "verbose" | "settings" | "buffers" | "wal";
export interface Plan {
  format: "json" | "text";
  options: PlanOption[];
}

/** EXPLAIN's options in the order PostgREST writes them (MediaType.hs, getPlan). */
const PLAN_OPTIONS: PlanOption[] = ["analyze", "verbose", "settings", "buffers", "wal"];

interface Accepted {
  type: string;
  params: Map<string, string>;
  q: number;
  order: number;
}

function parseAccept(header: string): Accepted[] {
  return header.split(",").map((part, order) => {
    const [type, ...rest] = part.split(";").map((s) => s.trim());
    const params = new Map(rest.map((p) => {
      const at = p.indexOf("=");
      // A quoted value (`for="application/json"`) is unquoted.
      const value = p.slice(at + 1).trim().toLowerCase().replace(/^"(.*)"$/, "$1");
      return [p.slice(0, at).trim().toLowerCase(), value] as [string, string];
    }));
    const q = Number(params.get("q") ?? 1);
    return { type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 1, order };
  }).filter((a) => a.type !== "")
    // Highest quality first; at equal quality, specific before wildcard, then as listed.
    .sort((a, b) => b.q - a.q || Number(a.type.includes("*")) - Number(b.type.includes("*")) || a.order - b.order);
}

function decode(a: Accepted): Media | null {
  const stripNulls = a.params.get("nulls") === "stripped";
  switch (a.type) {
    case "*/*":
    case "application/json":
      return { kind: "json", stripNulls: false };
    case "application/vnd.pgrst.array+json":
    case "application/vnd.pgrst.array":
      return { kind: "json", stripNulls };
    case "application/vnd.pgrst.object+json":
    case "application/vnd.pgrst.object":
      return { kind: "object", stripNulls };
    case "text/csv":
      return { kind: "csv", stripNulls: false };
    case "application/openapi+json":
      return { kind: "openapi", stripNulls: false };
    case "application/vnd.pgrst.plan":
    case "application/vnd.pgrst.plan+text":
    case "application/vnd.pgrst.plan+json": {
      const target = decode({ type: a.params.get("for") ?? "application/json", params: new Map(), q: 1, order: 0 });
      if (!target || target.kind === "openapi") return null;
      const options = (a.params.get("options") ?? "").split("|");
      return {
        ...target,
        plan: {
          format: a.type.endsWith("+json") ? "json" : "text",
          options: PLAN_OPTIONS.filter((o) => options.includes(o)),
        },
      };
    }
    default:
      return null;
  }
}

/** A media type as PostgREST names it in its answers (MediaType.hs, toMime). */
function toMime(media: Media): string {
  const base = media.kind === "object"
    ? `application/vnd.pgrst.object+json${media.stripNulls ? ";nulls=stripped" : ""}`
    : media.kind === "csv"
    ? "text/csv"
    : media.kind === "openapi"
    ? "application/openapi+json"
    : media.stripNulls
    ? "application/vnd.pgrst.array+json;nulls=stripped"
    : "application/json";
  if (!media.plan) return base;
  const { format, options } = media.plan;
  return `application/vnd.pgrst.plan+${format}; for="${base}"${options.length ? `; options=${options.join("|")}` : ""}`;
}

/**
 * The first acceptable media type the resource offers; 406 PGRST107 when none. A plan is offered for what the
 * resource offers only when `planEnabled` (db-plan-enabled), as PostgREST's negotiateContent.
 */
export function negotiate(req: Request, offered: MediaKind[], planEnabled = false): Media {
  const header = req.headers.get("accept");
  if (!header) return { kind: offered[0], stripNulls: false };
  const accepted = parseAccept(header);
  for (const a of accepted) {
    const media = decode(a);
    if (media?.plan && !planEnabled) continue;
    if (media && offered.includes(media.kind)) return media;
    if (media?.kind === "json" && a.type === "*/*" && offered.includes("openapi")) return { ...media, kind: "openapi" };
  }
  throw errors.mediaType(accepted.map((a) => {
    const media = decode(a);
    return media?.plan ? toMime(media) : a.type;
  }));
}

export function contentType(media: Media): string {
  if (media.plan) return `${toMime(media)}; charset=utf-8`;
  switch (media.kind) {
    case "object":
      return `application/vnd.pgrst.object+json${media.stripNulls ? ";nulls=stripped" : ""}; charset=utf-8`;
    case "csv":
      return "text/csv; charset=utf-8";
    case "openapi":
      return "application/openapi+json; charset=utf-8";
    default:
      return media.stripNulls
        ? "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8"
        : "application/json; charset=utf-8";
  }
}

/**
 * EXPLAIN of `text` (the whole statement answering the request) as the plan media type asks: one JSON document,
 * or the text plan's lines each ended by a newline (MainTx.hs, planRow). With `analyze` the statement runs.
 */
export async function explain(
  tx: postgres.TransactionSql,
  plan: Plan,
  text: string,
  values: string[],
): Promise<string> {
  const options = [`format ${plan.format}`, ...plan.options].join(", ");
  const rows = await tx.unsafe<{ "QUERY PLAN": unknown }[]>(`explain (${options}) ${text}`, values);
  if (plan.format === "json") {
    const value = rows[0]["QUERY PLAN"];
    return typeof value === "string" ? value : JSON.stringify(value);
  }
  return rows.map((row) => `${row["QUERY PLAN"]}\n`).join("");
}

/** The aggregate turning the rows of `_postgrest_t` into the body; `scalar` reads the `pgrst_scalar` column. */
export function bodyExpression(media: Media, shape: "rows" | "row" | "scalar" | "scalars"): string {
  if (media.kind === "csv") {
    // A header of the first row's keys, then each row as Postgres writes a record, without its parentheses.
    return `(select coalesce(string_agg(k, ','), '') from (select json_object_keys(row_to_json(h)) as k
               from (select * from pgrst_source limit 1) h) keys) || E'\\n' ||
            coalesce(string_agg(substr(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), E'\\n'), '')`;
  }
  const strip = (sql: string) => media.stripNulls ? `json_strip_nulls(${sql})` : sql;
  const single = media.kind === "object" || shape === "row" || shape === "scalar";
  const column = shape === "scalar" || shape === "scalars" ? "_postgrest_t.pgrst_scalar" : "_postgrest_t";
  return single
    ? `coalesce(${strip(`json_agg(${column})->0`)}, 'null')`
    : `coalesce(${strip(`json_agg(${column})`)}, '[]')`;
}

// --- body -----------------------------------------------------------------------

/** Request bodies are bounded like /api/v1's: refused (413) as they arrive past the limit, never read whole. */
export const MAX_REST_BODY_BYTES = MAX_BODY_BYTES;

/** The body; a body over the limit throws BodyTooLargeError, the gateway's 413 (it never reaches PostgREST). */
export function readRawBody(req: Request): Promise<Uint8Array> {
  return readBody(req, MAX_REST_BODY_BYTES);
}

export function bodyTooLargeResponse(cors: Headers): Response {
  const headers = new Headers(cors);
  headers.set("content-type", "application/json; charset=utf-8");
  return new Response(
    JSON.stringify({
      message: "Payload Too Large",
      hint: `The request body is larger than ${MAX_REST_BODY_BYTES} bytes`,
    }),
    { status: 413, headers },
  );
}

/** The media type of the request body; none means JSON. */
export function contentMedia(req: Request): string {
  return (req.headers.get("content-type")?.split(";")[0].trim().toLowerCase()) || "application/json";
}

/** Text of a body that must be UTF-8 (PostgREST hands JSON and text to Postgres, which refuses anything else). */
export function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw errors.invalidBody("Empty or invalid json");
  }
}

/**
 * A JSON payload as PostgREST reads it (ApiRequest/Payload.hs): an object, or
 * an array of objects sharing the same keys (unless `columns` names them);
 * anything else is an empty array. The text goes to Postgres unchanged.
 */
export interface JsonPayload {
  text: string;
  isObject: boolean;
  keys: string[];
}

export function jsonPayload(text: string, columns: string[] | null, emptyAsObject: boolean): JsonPayload {
  if (text.trim() === "" && emptyAsObject) return { text: "{}", isObject: true, keys: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.invalidBody("Empty or invalid json");
  }
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  if (columns) return { text, isObject, keys: columns };
  if (isObject) return { text, isObject, keys: Object.keys(value as object) };
  if (!Array.isArray(value) || value.length === 0) return { text: "[]", isObject: false, keys: [] };
  const first = value[0];
  if (typeof first !== "object" || first === null || Array.isArray(first)) {
    throw errors.invalidBody("All object keys must match");
  }
  const keys = Object.keys(first);
  const canonical = [...keys].sort().join("\u0000");
  for (const row of value) {
    if (
      typeof row !== "object" || row === null || Array.isArray(row) ||
      Object.keys(row).sort().join("\u0000") !== canonical
    ) {
      throw errors.invalidBody("All object keys must match");
    }
  }
  return { text, isObject: false, keys };
}

/** A CSV body (`Content-Type: text/csv`): a header line of columns, then rows; `NULL` is null. */
export function csvPayload(text: string): JsonPayload {
  const rows = parseCsv(text);
  if (rows.length === 0) return { text: "[]", isObject: false, keys: [] };
  const [header, ...lines] = rows;
  if (lines.some((line) => line.length !== header.length)) {
    throw errors.invalidBody("All lines must have same number of fields");
  }
  const objects = lines.map((line) =>
    Object.fromEntries(header.map((h, i) => [h, line[i] === "NULL" ? null : line[i]]))
  );
  return { text: JSON.stringify(objects), isObject: false, keys: header };
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const endField = () => {
    row.push(field);
    field = "";
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === "") quoted = true;
    else if (c === ",") endField();
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endField();
      rows.push(row);
      row = [];
    } else field += c;
    i++;
  }
  if (quoted) throw errors.invalidBody("parse error (unexpected end of input in a quoted field)");
  if (field !== "" || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}

// --- query parameters -------------------------------------------------------

const RESERVED = new Set(["select", "columns", "on_conflict"]);
const EMBEDDABLE = new Set(["order", "limit", "offset", "and", "or"]);

export interface QueryParams {
  filters: [string, string][];
  logic: [string, string][];
  order: [string, string][];
  limits: Map<string, number>;
  offsets: Map<string, number>;
  /** Arguments of a function called with GET: parameters whose value is not an operator expression. */
  args: [string, string][];
}

export function queryParams(url: URL, rpcRead: boolean): QueryParams {
  const out: QueryParams = { filters: [], logic: [], order: [], limits: new Map(), offsets: new Map(), args: [] };
  for (const [key, value] of url.searchParams) {
    // The gateway's own parameter, never PostgREST's.
    if (RESERVED.has(key) || key === "apikey") continue;
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
    if (value === "") continue;
    if (rpcRead && parseFilterValue(value, true) === null) out.args.push([key, value]);
    else out.filters.push([key, value]);
  }
  return out;
}

// --- the transaction ----------------------------------------------------------

/** Thrown inside a transaction to roll it back while keeping its result. */
class Rollback<T> {
  constructor(readonly result: T) {}
}

/**
 * One transaction as PostgREST opens it, with the request's settings first
 * (search_path, the role's settings, role, claims, method, path, headers,
 * cookies, the timezone preference) and the pre-request function; rolled
 * back at the end when db-tx-end or `Prefer: tx=rollback` say so.
 */
export async function transaction<T>(
  ctx: Context,
  readOnly: boolean,
  work: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  const headers: Record<string, string> = {};
  ctx.req.headers.forEach((value, name) => {
    if (name !== "cookie") headers[name.toLowerCase()] = value;
  });
  const cookies: Record<string, string> = {};
  for (const part of (ctx.req.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) cookies[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  const searchPath = [...new Set([ctx.schema, ...ctx.config.extraSearchPath])].map(ident).join(", ");
  const settings: [string, string][] = [
    ["search_path", searchPath],
    ...(ctx.cache.roleSettings.get(ctx.role) ?? []),
    ["role", ctx.role],
    ["request.jwt.claims", JSON.stringify(ctx.claims)],
    ["request.method", ctx.req.method],
    ["request.path", ctx.url.pathname.slice(PREFIX.length) || "/"],
    ["request.headers", JSON.stringify(headers)],
    ["request.cookies", JSON.stringify(cookies)],
    ...(ctx.prefs.timezone ? [["timezone", ctx.prefs.timezone] as [string, string]] : []),
  ];
  const rollback = ctx.prefs.tx === "rollback" ||
    (ctx.config.txEnd.startsWith("rollback") && ctx.prefs.tx !== "commit");
  const mode = readOnly ? "isolation level read committed read only" : "isolation level read committed";
  try {
    return await ctx.pool.begin(mode, async (tx) => {
      const values = settings.flat();
      const calls = settings.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(", ");
      await tx.unsafe(`select ${calls}`, values);
      if (ctx.config.preRequest) await tx.unsafe(`select ${preRequestCall(ctx.config.preRequest)}()`);
      const result = await work(tx);
      if (rollback) {
        // Deferred constraints are checked now, so that the answer says whether the write would have committed.
        await tx.unsafe("set constraints all immediate");
        throw new Rollback(result);
      }
      return result;
    }) as T;
  } catch (error) {
    if (error instanceof Rollback) return error.result as T;
    throw error;
  }
}

/** `schema.function` or `function` as written in db-pre-request, quoted. */
function preRequestCall(name: string): string {
  const parts = name.split(".");
  return parts.length === 2 ? qualified(parts[0], parts[1]) : ident(name);
}

/** A cast named in `select=col::type` must be a type Postgres knows (checked before the query, as its error would be). */
export async function checkCasts(tx: postgres.TransactionSql, casts: Set<string>): Promise<void> {
  for (const cast of casts) {
    const [row] = await tx.unsafe<{ ok: boolean }[]>(
      "select $1 ~ '^[A-Za-z_][A-Za-z0-9_ ]*$' and to_regtype($1) is not null as ok",
      [cast],
    ).catch(() => [{ ok: false }]);
    if (!row.ok) throw new RestError(400, "42704", `type "${cast}" does not exist`);
  }
}

/** Headers and status a function set with `set_config('response.headers' | 'response.status', ...)`. */
export interface GucResponse {
  headers: string | null;
  status: string | null;
}

export const GUC_COLUMNS = `nullif(current_setting('response.headers', true), '') as response_headers,
       nullif(current_setting('response.status', true), '') as response_status`;

/** Applies response.headers / response.status as PostgREST does: the function's headers replace its own. */
export function applyGuc(status: number, headers: Headers, guc: GucResponse): number {
  if (guc.headers !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(guc.headers);
    } catch {
      parsed = null;
    }
    const valid = Array.isArray(parsed) &&
      parsed.every((h) =>
        typeof h === "object" && h !== null && Object.keys(h).length === 1 &&
        typeof Object.values(h)[0] === "string"
      );
    if (!valid) {
      throw new RestError(
        500,
        "PGRST111",
        "response.headers guc must be a JSON array composed of objects with a single key and a string value",
      );
    }
    for (const h of parsed as Record<string, string>[]) {
      const [[name, value]] = Object.entries(h);
      headers.set(name, value);
    }
  }
  if (guc.status !== null) {
    const n = Number(guc.status);
    if (!Number.isInteger(n) || n < 100 || n > 999) {
      throw new RestError(500, "PGRST112", "response.status guc must be a valid status code");
    }
    return n;
  }
  return status;
}

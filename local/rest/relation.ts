// GET/HEAD, POST, PUT, PATCH and DELETE on /rest/v1/<table or view>, built
// like PostgREST's read and mutate plans (Plan.hs, QueryBuilder.hs) and run as
// the caller: Postgres alone decides whether the role may read or write. The
// answers follow Response.hs: statuses (201/200 for an upsert by whether a row
// was inserted), Content-Range, Location, Preference-Applied.
import type postgres from "postgres";
import { errors } from "./errors.ts";
import {
  type LogicTree,
  parseColumns,
  parseFilterValue,
  parseLogic,
  parseOrder,
  parseSelect,
  parseTreePath,
  type SelectItem,
} from "./parse.ts";
import { Builder, ident, qualified, type ReadNode, type Relation, usesAggregates } from "./query.ts";
import {
  applyGuc,
  bodyExpression,
  checkCasts,
  checkStrict,
  contentMedia,
  contentType,
  type Context,
  csvPayload,
  explain,
  GUC_COLUMNS,
  type GucResponse,
  type JsonPayload,
  jsonPayload,
  type Media,
  negotiate,
  preferenceApplied,
  type QueryParams,
  queryParams,
  readRawBody,
  transaction,
  utf8,
} from "./request.ts";
import type { Table } from "./schema.ts";

export function relationOf(table: Table): Relation {
  return { name: table.name, columns: table.columns, table };
}

/**
 * `select=` as given; empty means every column, as in PostgREST. Aggregate functions are refused (PGRST123)
 * unless db-aggregates-enabled is on.
 */
export function selectItems(ctx: Context): SelectItem[] {
  const items = parseSelect(ctx.url.searchParams.get("select") ?? "*");
  if (!ctx.config.aggregatesEnabled && usesAggregates(items)) throw errors.aggregatesNotAllowed();
  return items.length ? items : [{ kind: "field", field: { name: "*", json: [] } }];
}

export function searchPath(ctx: Context): string[] {
  return [ctx.schema, ...ctx.config.extraSearchPath];
}

/** Filters, logic trees, orders and embedded pages, each put on the node its path names. */
export function applyParams(builder: Builder, root: ReadNode, params: QueryParams): void {
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
    builder.base(node, field.name);
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

/** The top-level page: limit/offset intersected with the Range header (GET only, as RFC 9110 says), capped by max-rows. */
export function topRange(ctx: Context, params: QueryParams): { offset: number; limit?: number } {
  let lower = params.offsets.get("") ?? 0;
  let upper = params.limits.has("") ? lower + params.limits.get("")! - 1 : Infinity;
  const header = ctx.req.method === "GET" ? ctx.req.headers.get("range") : null;
  const match = header ? /^([0-9]+)-([0-9]*)$/.exec(header.trim()) : null;
  if (match) {
    const [hl, hu] = [Number(match[1]), match[2] === "" ? Infinity : Number(match[2])];
    if (hl > hu) throw errors.lowerGtUpper();
    lower = Math.max(lower, hl);
    upper = Math.min(upper, hu);
  }
  if (ctx.config.maxRows !== null) upper = Math.min(upper, lower + ctx.config.maxRows - 1);
  return { offset: lower, limit: upper === Infinity ? undefined : Math.max(0, upper - lower + 1) };
}

export interface Outcome {
  total: number | null;
  pageTotal: number;
  body: string;
  guc: GucResponse;
  /** The answer was the statement's plan (the body), not its rows. */
  plan?: boolean;
}

/**
 * Reads the rows of `root` (a relation or a function's result, `from`), with its embeddings, filters, order and page,
 * through runRead.
 */
export async function readNode(
  ctx: Context,
  tx: postgres.TransactionSql,
  builder: Builder,
  root: ReadNode,
  from: string,
  media: Media,
  shape: "rows" | "row" = "rows",
): Promise<Outcome> {
  const joins: string[] = [];
  const list = builder.selectList(root, joins);
  const where = builder.where(root);
  const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
  const source = `select ${list} from ${from}${joins.join("")}${whereSql}${builder.groupBy(root)}${
    builder.orderBy(root)
  }${builder.page(root)}`;
  return await runRead(ctx, tx, builder, source, ctx.prefs.count ? `from ${from}${whereSql}` : null, media, shape);
}

/**
 * Runs `source` (a select of the root node, named pgrst_source) and aggregates
 * it for `media`; counts the whole set as `Prefer: count=` asks: exact, planned
 * (the planner's estimate) or estimated (exact up to max-rows, the estimate beyond).
 */
export async function runRead(
  ctx: Context,
  tx: postgres.TransactionSql,
  builder: Builder,
  source: string,
  countFrom: string | null,
  media: Media,
  shape: "rows" | "row" | "scalar" | "scalars" = "rows",
): Promise<Outcome> {
  await checkCasts(tx, builder.casts);
  const count = ctx.prefs.count;
  const maxRows = ctx.config.maxRows;
  let countSql = "null::bigint";
  if (countFrom && count === "exact") countSql = `(select count(*) from (select 1 ${countFrom}) _c)`;
  if (countFrom && count === "estimated") {
    countSql = `(select count(*) from (select 1 ${countFrom}${maxRows !== null ? ` limit ${maxRows + 1}` : ""}) _c)`;
  }
  const text = `with pgrst_source as (${source})
    select ${countSql} as total, count(_postgrest_t)::bigint as page_total,
           ${bodyExpression(media, shape)}::text as body, ${GUC_COLUMNS}
      from pgrst_source as _postgrest_t`;
  if (media.plan) {
    const body = await explain(tx, media.plan, text, builder.params.values);
    return { total: null, pageTotal: 0, body, guc: { headers: null, status: null }, plan: true };
  }
  const [row] = await tx.unsafe<
    { total: string | null; page_total: string; body: string; response_headers: string; response_status: string }[]
  >(text, builder.params.values);
  let total = row.total === null ? null : Number(row.total);
  // Without max-rows PostgREST's comparison (a Haskell `Just n > Nothing`) is always true: estimated takes the larger.
  if (countFrom && (count === "planned" || (count === "estimated" && (maxRows === null || total! > maxRows)))) {
    const planned = await plannedRows(tx, `select 1 ${countFrom}`, builder.params.values);
    total = count === "planned" ? planned : Math.max(total!, planned);
  }
  return {
    total,
    pageTotal: Number(row.page_total),
    body: row.body,
    guc: { headers: row.response_headers, status: row.response_status },
  };
}

async function plannedRows(tx: postgres.TransactionSql, query: string, values: string[]): Promise<number> {
  const [row] = await tx.unsafe<{ "QUERY PLAN": unknown }[]>(`explain (format json) ${query}`, values);
  const plan = typeof row["QUERY PLAN"] === "string" ? JSON.parse(row["QUERY PLAN"]) : row["QUERY PLAN"];
  return Number(plan?.[0]?.Plan?.["Plan Rows"] ?? 0);
}

/** PostgREST's Content-Range: `lower-upper/total`, `*` for an empty range or an unknown total. */
export function contentRange(lower: number, upper: number, total: number | null): string {
  const range = total !== 0 && lower <= upper ? `${lower}-${upper}` : "*";
  return `${range}/${total ?? "*"}`;
}

/** The headers every answer of a request carries: CORS, Content-Profile, Preference-Applied. */
export function baseHeaders(ctx: Context, applied: string | null): Headers {
  const headers = new Headers(ctx.cors);
  if (applied) headers.set("preference-applied", applied);
  return headers;
}

export function withProfile(ctx: Context, headers: Headers): void {
  if (ctx.profiled) headers.set("content-profile", ctx.schema);
}

/** The answer to a read (of a relation or a function's result): 200, 206 or 416 by the count. */
export function respondRead(
  ctx: Context,
  outcome: Outcome,
  offset: number,
  media: Media,
  applied: string | null,
  extra: Record<string, string> = {},
): Response {
  if (outcome.plan) return planResponse(ctx, media, outcome.body);
  const headers = baseHeaders(ctx, applied);
  const upper = offset + outcome.pageTotal - 1;
  headers.set("content-range", contentRange(offset, upper, outcome.total));
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  let status = 200;
  if (outcome.total !== null) {
    if (offset > outcome.total) throw errors.outOfBounds(offset, outcome.total);
    if (outcome.pageTotal < outcome.total) status = 206;
  }
  headers.set("content-type", contentType(media));
  withProfile(ctx, headers);
  status = applyGuc(status, headers, outcome.guc);
  return new Response(ctx.req.method === "HEAD" ? null : outcome.body, { status, headers });
}

/** A plan's answer: 200, the plan media type, the plan (Response.hs, DbPlanResult). */
function planResponse(ctx: Context, media: Media, body: string): Response {
  const headers = new Headers(ctx.cors);
  headers.set("content-type", contentType(media));
  withProfile(ctx, headers);
  return new Response(ctx.req.method === "HEAD" ? null : body, { status: 200, headers });
}

// --- reads ----------------------------------------------------------------------

export async function readRelation(ctx: Context, table: Table): Promise<Response> {
  const media = negotiate(ctx.req, ["json", "object", "csv"], ctx.config.planEnabled);
  checkStrict(ctx.prefs);
  const params = queryParams(ctx.url, false);
  const builder = new Builder(ctx.cache, ctx.schema, searchPath(ctx));
  const root = builder.node(relationOf(table), table.name, selectItems(ctx));
  applyParams(builder, root, params);
  const { offset, limit } = topRange(ctx, params);
  root.offset = offset;
  root.limit = limit;
  const from = `${qualified(table.schema, table.name)} as ${ident(root.alias)}`;
  const outcome = await transaction(ctx, true, async (tx) => {
    const outcome = await readNode(ctx, tx, builder, root, from, media);
    if (media.kind === "object" && !outcome.plan && outcome.pageTotal !== 1) {
      throw errors.singularity(outcome.pageTotal);
    }
    return outcome;
  });
  const canonical = [...ctx.url.searchParams].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
  const location = `/${table.name}${canonical.length ? `?${new URLSearchParams(canonical)}` : ""}`;
  return respondRead(ctx, outcome, offset, media, preferenceApplied(ctx.prefs, "read"), {
    "content-location": location,
  });
}

// --- writes ---------------------------------------------------------------------

/** The body of a write, in whichever media type PostgREST reads: JSON, CSV or a form. */
async function writePayload(ctx: Context, columns: string[] | null): Promise<JsonPayload> {
  const bytes = await readRawBody(ctx.req);
  const type = contentMedia(ctx.req);
  if (type === "application/json") return jsonPayload(utf8(bytes), columns, false);
  if (type === "text/csv") {
    const csv = csvPayload(utf8(bytes));
    return columns ? { ...csv, keys: columns } : csv;
  }
  if (type === "application/x-www-form-urlencoded") {
    const form = Object.fromEntries(new URLSearchParams(utf8(bytes)));
    return { text: JSON.stringify(form), isObject: true, keys: columns ?? Object.keys(form) };
  }
  throw errors.invalidBody(`Content-Type not acceptable: ${type}`);
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The rows of the body as a relation `pgrst_body` of the given columns (with defaults for missing keys, if asked). */
function bodySource(builder: Builder, table: Table, payload: JsonPayload, keys: string[], defaults: boolean): string {
  const typed = keys.map((k) => `${ident(k)} ${table.columns.get(k)!.type}`).join(", ");
  if (!keys.length) {
    return payload.isObject
      ? "(values (1)) as pgrst_body"
      : `json_array_elements(${builder.params.add(payload.text, "json")}) as pgrst_body`;
  }
  if (!defaults) {
    const p = builder.params.add(payload.text, "json");
    return `${payload.isObject ? "json_to_record" : "json_to_recordset"}(${p}) as pgrst_body(${typed})`;
  }
  const withDefaults = keys.filter((k) => table.columns.get(k)!.default !== null);
  const defs = `jsonb_build_object(${
    withDefaults.map((k) => `${literal(k)}, ${table.columns.get(k)!.default}`).join(", ")
  })`;
  const p = builder.params.add(payload.text, "jsonb");
  return payload.isObject
    ? `jsonb_to_record(${defs} || ${p}) as pgrst_body(${typed})`
    : `jsonb_to_recordset((select coalesce(jsonb_agg(${defs} || e), '[]') from jsonb_array_elements(${p}) e))
         as pgrst_body(${typed})`;
}

/** Counts rows as an upsert inserts them (+1 per row offered, -1 per row that updated instead). */
const countInserted = (delta: 1 | -1) =>
  `set_config('pgrst.inserted', (coalesce(nullif(current_setting('pgrst.inserted', true), '')::int, 0) ${
    delta > 0 ? "+" : "-"
  } 1)::text, true) is not null`;

export async function writeRelation(ctx: Context, table: Table): Promise<Response> {
  const method = ctx.req.method;
  const kind = method === "POST" ? "insert" : method === "PUT" ? "upsert" : method === "PATCH" ? "update" : "delete";
  const prefs = ctx.prefs;
  const columnsParam = ctx.url.searchParams.get("columns");
  const columns = columnsParam !== null && kind !== "delete" && kind !== "upsert"
    ? parseColumns(columnsParam, "columns")
    : null;
  const payload = kind === "delete" ? null : await writePayload(ctx, columns);
  const keys = payload?.keys ?? [];
  for (const key of keys) if (!table.columns.has(key)) throw errors.columnNotFound(table.name, key);

  const params = queryParams(ctx.url, false);
  const builder = new Builder(ctx.cache, ctx.schema, searchPath(ctx));
  const root = builder.node(relationOf(table), table.name, selectItems(ctx));
  applyParams(builder, root, params);
  if (kind === "upsert") checkPut(table, root, params);
  checkStrict(prefs);
  const media = negotiate(ctx.req, ["json", "object", "csv"], ctx.config.planEnabled);

  const alias = ident(root.alias);
  const target = `${qualified(table.schema, table.name)} as ${alias}`;
  const representation = prefs.representation === "representation";
  /** return=headers-only on an insert: the Location of the row, by its primary key. */
  const locate = prefs.representation === "headers-only" && kind === "insert" && table.primaryKey.length > 0;
  const returning = representation ? builder.returning(root) : locate ? table.primaryKey : [];
  const returningSql = returning === "*"
    ? `returning ${alias}.*`
    : returning.length
    ? `returning ${returning.map((c) => `${alias}.${ident(c)}`).join(", ")}`
    : "returning 1";
  const defaults = prefs.missing === "default";
  const cols = keys.map(ident).join(", ");

  let mutation: string;
  let resolutionApplied = false;
  let countsInserted = false;
  if (kind === "insert" || kind === "upsert") {
    const source = bodySource(builder, table, payload!, keys, defaults && kind === "insert");
    let conflict = "";
    let where = "";
    if (kind === "upsert") {
      const bodyNode: ReadNode = { ...root, alias: "pgrst_body", filters: root.filters, logic: [] };
      const conditions = root.filters.map((f) => builder.filter(bodyNode, f));
      where = ` where ${[countInserted(1), ...conditions].join(" and ")}`;
      conflict = ` on conflict (${table.primaryKey.map(ident).join(", ")}) do update set ${
        keys.map((k) => `${ident(k)} = excluded.${ident(k)}`).join(", ")
      } where ${countInserted(-1)}`;
      countsInserted = true;
    } else if (prefs.resolution) {
      const onConflictParam = ctx.url.searchParams.get("on_conflict");
      const onConflict = onConflictParam !== null ? parseColumns(onConflictParam, "on_conflict") : table.primaryKey;
      for (const c of onConflict) if (!table.columns.has(c)) throw errors.columnNotFound(table.name, c);
      if (onConflict.length) {
        resolutionApplied = true;
        const on = ` on conflict (${onConflict.map(ident).join(", ")})`;
        if (prefs.resolution === "ignore-duplicates" || !keys.length) conflict = `${on} do nothing`;
        else {
          conflict = `${on} do update set ${keys.map((k) => `${ident(k)} = excluded.${ident(k)}`).join(", ")} where ${
            countInserted(-1)
          }`;
          where = ` where ${countInserted(1)}`;
          countsInserted = prefs.resolution === "merge-duplicates";
        }
      }
    }
    const selected = keys.length ? keys.map((k) => `pgrst_body.${ident(k)}`).join(", ") : "";
    mutation = `insert into ${target}${
      keys.length ? ` (${cols})` : ""
    } select ${selected} from ${source}${where}${conflict} ${returningSql}`;
  } else {
    const where = builder.where({ ...root, embeds: [] });
    const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
    if (kind === "update") {
      if (!keys.length) {
        const listed = returning === "*" || returning.length === 0 ? "*" : returning.map(ident).join(", ");
        mutation = `select ${listed} from ${qualified(table.schema, table.name)} where false`;
      } else {
        const source = bodySource(builder, table, payload!, keys, defaults);
        const set = keys.map((k) => `${ident(k)} = pgrst_body.${ident(k)}`).join(", ");
        mutation = `update ${target} set ${set} from ${source}${whereSql} ${returningSql}`;
      }
    } else mutation = `delete from ${target}${whereSql} ${returningSql}`;
  }

  const outcome = await transaction(ctx, false, async (tx) => {
    await checkCasts(tx, builder.casts);
    const mutated: ReadNode = { ...root, filters: [], logic: [], order: [], embedNullFilters: [] };
    const joins: string[] = [];
    const list = representation
      ? builder.selectList(mutated, joins)
      : locate
      ? table.primaryKey.map((c) => `${alias}.${ident(c)}`).join(", ")
      : null;
    const text = `with pgrst_mutation as (${mutation}),
      pgrst_source as (${
      list !== null
        ? `select ${list} from pgrst_mutation as ${alias}${joins.join("")}${builder.groupBy(mutated)}`
        : "select * from pgrst_mutation"
    })
      select count(*)::bigint as page_total,
             ${
      representation
        ? bodyExpression(media, "rows")
        : locate
        ? bodyExpression({ kind: "json", stripNulls: false }, "rows")
        : "''"
    }::text as body, ${GUC_COLUMNS}
        from pgrst_source as _postgrest_t`;
    if (media.plan) {
      return { plan: await explain(tx, media.plan, text, builder.params.values), pageTotal: 0, body: "" };
    }
    const [row] = await tx.unsafe<
      { page_total: string; body: string; response_headers: string | null; response_status: string | null }[]
    >(text, builder.params.values);
    const pageTotal = Number(row.page_total);
    if (kind === "upsert" && pageTotal !== 1) throw errors.putMatchingPk();
    // PostgREST rolls a write back when a single object was asked for and not exactly one row changed.
    if (media.kind === "object" && pageTotal !== 1) throw errors.singularity(pageTotal);
    if (
      (kind === "update" || kind === "delete") && prefs.handling === "strict" && prefs.maxAffected !== undefined &&
      pageTotal > prefs.maxAffected
    ) {
      throw errors.maxAffected(pageTotal);
    }
    let inserted: number | null = null;
    if (countsInserted) {
      const [counted] = await tx.unsafe<{ inserted: number | null }[]>(
        "select nullif(current_setting('pgrst.inserted', true), '')::int as inserted",
      );
      inserted = counted.inserted ?? 0;
    }
    return {
      pageTotal,
      body: row.body,
      inserted,
      guc: { headers: row.response_headers, status: row.response_status },
    };
  });

  if (outcome.plan !== undefined) return planResponse(ctx, media, outcome.plan);
  const applied = preferenceApplied(prefs, kind, resolutionApplied);
  const headers = baseHeaders(ctx, applied);
  const count = prefs.count === "exact" || prefs.count === "estimated" ? outcome.pageTotal : null;
  if (kind === "update") headers.set("content-range", contentRange(0, outcome.pageTotal - 1, count));
  else if (kind !== "upsert") headers.set("content-range", contentRange(1, 0, count));
  let status: number;
  if (kind === "insert") {
    status = countsInserted && (outcome.inserted ?? 0) <= 0 ? 200 : 201;
    if (locate && outcome.pageTotal === 1) {
      const [row] = JSON.parse(outcome.body) as Record<string, unknown>[];
      const query = table.primaryKey.map((k) => `${encodeURIComponent(k)}=eq.${encodeURIComponent(String(row[k]))}`);
      headers.set("location", `/${table.name}?${query.join("&")}`);
    }
  } else if (kind === "upsert") status = representation ? (outcome.inserted! > 0 ? 201 : 200) : 204;
  else status = representation ? 200 : 204;
  if (!representation) {
    status = applyGuc(status, headers, outcome.guc);
    return new Response(null, { status, headers });
  }
  headers.set("content-type", contentType(media));
  withProfile(ctx, headers);
  status = applyGuc(status, headers, outcome.guc);
  return new Response(outcome.body, { status, headers });
}

/** PUT replaces one row named by its whole primary key: `?pk=eq.v` filters only, no page (PostgREST's rules). */
function checkPut(table: Table, root: ReadNode, params: QueryParams): void {
  if (params.limits.has("") || params.offsets.has("")) throw errors.putLimitNotAllowed();
  const fields = new Set(params.filters.map(([k]) => k));
  const pk = new Set(table.primaryKey);
  const eqOnly = root.filters.every((f) =>
    !f.expr.negated && f.expr.operation.op === "quant" && f.expr.operation.operator === "eq" &&
    !f.expr.operation.quantifier
  );
  if (
    params.logic.length || pk.size === 0 || fields.size !== pk.size || ![...pk].every((c) => fields.has(c)) ||
    !eqOnly
  ) {
    throw errors.invalidFilters();
  }
}

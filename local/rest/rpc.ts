// /rest/v1/rpc/<function>: the function is found as PostgREST's findProc
// finds it (by name and by the argument names given: required ones all there,
// optional ones among the rest; else a function with a single unnamed json,
// jsonb, text, xml or bytea parameter the body fills whole), called as the
// caller (GET read-only; POST read-only unless the function is volatile), and
// its result read like a table: select, filters, order, page and embedding
// from a table's rows.
import { errors } from "./errors.ts";
import { parseColumns } from "./parse.ts";
import { Builder, ident, qualified, type Relation } from "./query.ts";
import {
  applyParams,
  readNode,
  relationOf,
  respondRead,
  runRead,
  searchPath,
  selectItems,
  topRange,
} from "./relation.ts";
import {
  checkStrict,
  contentMedia,
  type Context,
  type JsonPayload,
  jsonPayload,
  negotiate,
  preferenceApplied,
  queryParams,
  readRawBody,
  transaction,
  utf8,
} from "./request.ts";
import { closest, type Routine } from "./schema.ts";

type RawType = "json" | "text" | "xml" | "bytea";

/** What a POST body becomes: JSON (named arguments or one unnamed json/jsonb), raw text/xml/bytes, or a form. */
type Arguments =
  | { kind: "query"; values: Map<string, string[]> }
  | { kind: "json"; payload: JsonPayload }
  | { kind: "raw"; type: RawType; text: string | null; bytes: Uint8Array };

async function readArguments(ctx: Context, read: boolean, args: [string, string][]): Promise<Arguments> {
  if (read) {
    const values = new Map<string, string[]>();
    for (const [key, value] of args) values.set(key, [...(values.get(key) ?? []), value]);
    return { kind: "query", values };
  }
  const bytes = await readRawBody(ctx.req);
  const type = contentMedia(ctx.req);
  const columns = ctx.url.searchParams.get("columns");
  switch (type) {
    case "application/json":
      return {
        kind: "json",
        payload: jsonPayload(utf8(bytes), columns !== null ? parseColumns(columns, "columns") : null, true),
      };
    case "text/plain":
      return { kind: "raw", type: "text", text: utf8(bytes), bytes };
    case "text/xml":
      return { kind: "raw", type: "xml", text: utf8(bytes), bytes };
    case "application/octet-stream":
      return { kind: "raw", type: "bytea", text: null, bytes };
    case "application/x-www-form-urlencoded": {
      const values = new Map<string, string[]>();
      for (const [key, value] of new URLSearchParams(utf8(bytes))) values.set(key, [value]);
      return { kind: "query", values };
    }
    default:
      throw errors.invalidBody(`Content-Type not acceptable: ${type}`);
  }
}

/** PostgREST's findProc over the overloads of `name` in the request's schema. */
function findRoutine(ctx: Context, name: string, keys: string[], post: boolean, raw: RawType | null): Routine {
  // Fewer parameters first, then by their types, as PostgREST orders overloads.
  const signature = (r: Routine) => r.params.map((p) => `${p.name}:${p.type}`).join(",");
  const overloads = [...(ctx.cache.routines.get(ctx.schema)?.get(name) ?? [])]
    .sort((a, b) => a.params.length - b.params.length || (signature(a) < signature(b) ? -1 : 1));
  const given = new Set(keys);
  const sameSet = (a: Set<string>, b: string[]) => a.size === new Set(b).size && b.every((x) => a.has(x));
  const matches = (r: Routine) => {
    if (r.params.length === 0) return given.size === 0 && !(post && raw !== null && raw !== "json");
    const required = r.params.filter((p) => p.required).map((p) => p.name);
    const optional = r.params.filter((p) => !p.required).map((p) => p.name);
    if (!optional.length) return sameSet(given, required);
    if (!required.length) return [...given].every((k) => optional.includes(k));
    return sameSet(new Set([...given].filter((k) => !optional.includes(k))), required);
  };
  const unnamedFits = (r: Routine) =>
    post && r.params.length === 1 && r.params[0].name === "" && raw !== null &&
    (raw === "json" ? ["json", "jsonb"].includes(r.params[0].type) : r.params[0].type === raw);
  const named = overloads.filter(matches);
  const fallback = overloads.filter((r) => !matches(r) && unnamedFits(r));
  const found = named.length ? named : fallback;
  if (found.length === 1) return found[0];
  if (found.length > 1) {
    throw errors.ambiguousRpc(
      found.map((r) => `${r.schema}.${r.name}(${r.params.map((p) => `${p.name} => ${p.type}`).join(", ")})`),
    );
  }
  const sorted = [...keys].sort();
  let hint: string | null = null;
  if (overloads.length) {
    const lists = overloads.map((r) => `(${r.params.map((p) => p.name).sort().join(", ")})`);
    const near = closest(`(${sorted.join(", ")})`, lists, 0.33);
    if (near) hint = `Perhaps you meant to call the function ${ctx.schema}.${name}${near}`;
  } else {
    const near = closest(name, ctx.cache.routines.get(ctx.schema)?.keys() ?? []);
    if (near) hint = `Perhaps you meant to call the function ${ctx.schema}.${near}`;
  }
  throw errors.noRpc(ctx.schema, name, sorted, post ? raw : null, hint);
}

export async function callRoutine(ctx: Context, name: string): Promise<Response> {
  const read = ctx.req.method !== "POST";
  const params = queryParams(ctx.url, read);
  const args = await readArguments(ctx, read, params.args);
  const keys = args.kind === "query" ? [...args.values.keys()] : args.kind === "json" ? args.payload.keys : [];
  const raw: RawType | null = args.kind === "json" ? "json" : args.kind === "raw" ? args.type : null;
  const routine = findRoutine(ctx, name, keys, !read, raw);
  const media = negotiate(ctx.req, ["json", "object", "csv"], ctx.config.planEnabled);
  checkStrict(ctx.prefs);
  if (ctx.prefs.handling === "strict" && ctx.prefs.maxAffected !== undefined && !routine.returnsSet) {
    throw errors.maxAffectedRpc();
  }

  const builder = new Builder(ctx.cache, ctx.schema, searchPath(ctx));
  const fn = qualified(routine.schema, routine.name);
  let call: string;
  let bodyRelation = "";
  const [only] = routine.params;
  if (routine.params.length === 1 && only.name === "") {
    // One unnamed parameter: the body is the argument, whole.
    const value = args.kind === "raw"
      ? args.type === "bytea"
        ? `\\x${[...args.bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`
        : args.text!
      : args.kind === "json"
      ? args.payload.text
      : JSON.stringify(Object.fromEntries([...args.values].map(([k, v]) => [k, v[v.length - 1]])));
    call = `${fn}(${builder.params.add(value, only.type)})`;
  } else {
    const specified = routine.params.filter((p) => keys.includes(p.name));
    if (specified.length && args.kind === "json") {
      const typed = specified.map((p) => `${ident(p.name)} ${p.castType}`).join(", ");
      const p = builder.params.add(args.payload.text, "json");
      bodyRelation = args.payload.isObject
        ? `json_to_record(${p}) as pgrst_body(${typed})`
        : `(select * from json_to_recordset(${p}) as _(${typed}) limit 1) as pgrst_body`;
      call = `${fn}(${
        specified.map((p) => `${p.variadic ? "variadic " : ""}${ident(p.name)} := pgrst_body.${ident(p.name)}`).join(
          ", ",
        )
      })`;
    } else if (specified.length && args.kind === "query") {
      call = `${fn}(${
        specified.map((p) => {
          const values = args.values.get(p.name)!;
          const value = p.variadic
            ? builder.params.add(
              `{${values.map((v) => `"${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`).join(",")}}`,
              `text[]::${p.castType}`,
            )
            : builder.params.add(values[values.length - 1], p.castType);
          return `${p.variadic ? "variadic " : ""}${ident(p.name)} := ${value}`;
        }).join(", ")
      })`;
    } else call = `${fn}()`;
  }

  const readOnly = read || routine.volatility !== "v";
  const applied = preferenceApplied(ctx.prefs, "rpc");
  const strictMax = ctx.prefs.handling === "strict" ? ctx.prefs.maxAffected : undefined;

  if (routine.returns !== "composite") {
    // A scalar (or void) result: `pgrst_scalar`, one value or a set of them.
    const source = `select ${call} as pgrst_scalar${bodyRelation ? ` from ${bodyRelation}` : ""}`;
    const shape = routine.returnsSet ? "scalars" : "scalar";
    const outcome = await transaction(ctx, readOnly, async (tx) => {
      const counted = ctx.prefs.count ? `from (${source}) as pgrst_call` : null;
      const outcome = await runRead(ctx, tx, builder, source, counted, media, shape);
      if (outcome.plan) return outcome;
      if (media.kind === "object" && outcome.pageTotal !== 1) throw errors.singularity(outcome.pageTotal);
      if (strictMax !== undefined && outcome.pageTotal > strictMax) throw errors.maxAffected(outcome.pageTotal);
      return outcome;
    });
    if (routine.returns === "void" && !outcome.plan) {
      const headers = new Headers(ctx.cors);
      if (applied) headers.set("preference-applied", applied);
      return new Response(null, { status: 204, headers });
    }
    return respondRead(ctx, { ...outcome, total: outcome.total }, 0, media, applied);
  }

  // A composite result reads like a table, and embeds from a table's rows.
  const relation: Relation = routine.resultTable
    ? relationOf(routine.resultTable)
    : { name: routine.name, columns: routine.resultColumns ?? new Map(), table: null };
  const root = builder.node(relation, routine.resultTable?.name ?? routine.name, selectItems(ctx));
  applyParams(builder, root, params);
  const { offset, limit } = topRange(ctx, params);
  root.offset = offset;
  root.limit = limit;
  const from = bodyRelation
    ? `${bodyRelation} cross join lateral ${call} as ${ident(root.alias)}`
    : `${call} as ${ident(root.alias)}`;
  const outcome = await transaction(ctx, readOnly, async (tx) => {
    const outcome = await readNode(ctx, tx, builder, root, from, media, routine.returnsSet ? "rows" : "row");
    if (outcome.plan) return outcome;
    if (media.kind === "object" && outcome.pageTotal !== 1) throw errors.singularity(outcome.pageTotal);
    if (strictMax !== undefined && outcome.pageTotal > strictMax) throw errors.maxAffected(outcome.pageTotal);
    return outcome;
  });
  return respondRead(ctx, outcome, offset, media, applied);
}

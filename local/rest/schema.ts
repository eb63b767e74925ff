// The schema cache, as PostgREST builds it from pg_catalog
// (src/PostgREST/SchemaCache.hs): the exposed schemas' tables and views with
// their columns, defaults and primary keys; the relationships embedding
// follows (foreign keys in both directions, one-to-one, many-to-many through
// a junction table whose primary key holds both keys, the same keys followed
// through views, and computed relationships: functions taking a row); the
// computed fields (functions taking a row and returning a value); and the
// functions callable through /rpc with their parameters and results.
// It is loaded at start and again on `NOTIFY pgrst` (local/rest/mod.ts).
import type postgres from "postgres";
import type { RestConfig } from "./config.ts";
import { viewColumnOrigins } from "./view-origins.ts";

export interface Column {
  name: string;
  /** The type values are cast to: without a type modifier for built-in types, as PostgREST's data_type. */
  type: string;
  /** format_type() with the modifier, for the OpenAPI document. */
  nominalType: string;
  nullable: boolean;
  /** The default's SQL expression (used by `Prefer: missing=default`). */
  default: string | null;
  maxLength: number | null;
  enum: string[];
  description: string | null;
}

/** A function taking one row of a table and returning a value: selectable and filterable like a column. */
export interface ComputedField {
  schema: string;
  name: string;
  type: string;
}

export interface Table {
  schema: string;
  name: string;
  oid: number;
  isView: boolean;
  insertable: boolean;
  updatable: boolean;
  deletable: boolean;
  primaryKey: string[];
  columns: Map<string, Column>;
  /** Computed fields by name, in search order (the request's schema first). */
  computed: Map<string, ComputedField[]>;
  description: string | null;
}

export type Cardinality = "many-to-one" | "one-to-many" | "one-to-one" | "many-to-many";

export interface Junction {
  table: Table;
  /** The junction's foreign key to the relationship's table, and to its target. */
  constraint1: string;
  constraint2: string;
  /** [column of the table, column of the junction] */
  sourceColumns: [string, string][];
  /** [column of the target, column of the junction] */
  targetColumns: [string, string][];
}

export interface Relationship {
  table: Table;
  target: Table;
  cardinality: Cardinality;
  isSelf: boolean;
  tableIsView: boolean;
  targetIsView: boolean;
  /** The foreign key's name (for many-to-many, the junction table's). */
  constraint: string;
  /** [column of table, column of target] (empty for many-to-many and computed relationships). */
  columns: [string, string][];
  junction?: Junction;
  /** A computed relationship: the function called with the parent row. */
  computed?: { schema: string; name: string };
}

export interface Param {
  name: string;
  /** The parameter's type (regtype). */
  type: string;
  /** The type with char/bit widened to varying, which accepts any length (the type arguments are cast to). */
  castType: string;
  required: boolean;
  variadic: boolean;
}

export interface Routine {
  schema: string;
  name: string;
  description: string | null;
  params: Param[];
  volatility: "i" | "s" | "v";
  returnsSet: boolean;
  returns: "void" | "scalar" | "composite";
  /** The composite result's columns (a table's, a type's, or the OUT/TABLE parameters). */
  resultColumns: Map<string, Column> | null;
  /** The exposed table or view the result is a row of: embedding from it follows its relationships. */
  resultTable: Table | null;
}

export interface SchemaCache {
  schemas: string[];
  tables: Map<string, Map<string, Table>>;
  /** Relationships by origin table. */
  relationships: Map<Table, Relationship[]>;
  routines: Map<string, Map<string, Routine[]>>;
  /** Settings of the roles the authenticator may become (ALTER ROLE ... SET), applied per request. */
  roleSettings: Map<string, [string, string][]>;
  timezones: Set<string>;
}

export function table(cache: SchemaCache, schema: string, name: string): Table | undefined {
  return cache.tables.get(schema)?.get(name);
}

interface TableRow {
  oid: number;
  schema: string;
  name: string;
  is_view: boolean;
  insertable: boolean;
  updatable: boolean;
  deletable: boolean;
  description: string | null;
  pk: string[];
  columns: {
    name: string;
    type: string;
    nominal_type: string;
    nullable: boolean;
    default: string | null;
    max_length: number | null;
    enum: string[] | null;
    description: string | null;
  }[];
}

interface ForeignKeyRow {
  name: string;
  table_oid: number;
  target_oid: number;
  cols: string[];
  fcols: string[];
  attnums: number[];
  fattnums: number[];
  one_to_one: boolean;
}

/** An end of a base relationship: any relation, exposed or not (views may expose it). */
interface Endpoint {
  oid: number;
  isView: boolean;
}

interface BaseRel {
  table: Endpoint;
  target: Endpoint;
  constraint: string;
  columns: [string, string][];
  oneToOne: boolean;
  tableIsView: boolean;
  targetIsView: boolean;
}

/**
 * Lists travel as JSON text, never as array parameters: postgres.js serializes an array by types it
 * fetches on a fresh connection, and these queries open several at once.
 */
export async function loadSchemaCache(
  sql: postgres.Sql,
  config: RestConfig,
  /** Time zone names, which do not change while the server runs: read once. */
  knownTimezones?: Set<string>,
): Promise<SchemaCache> {
  const schemas = config.schemas;
  const viewSchemas = [...new Set([...schemas, ...config.extraSearchPath])];
  const [tableRows, foreignKeys, primaryKeys, views, functionRows, settings, timezones] = await Promise.all([
    sql<TableRow[]>`
      select c.oid::int as oid, n.nspname as schema, c.relname as name, c.relkind in ('v', 'm') as is_view,
             (c.relkind in ('r', 'p') or (c.relkind in ('v', 'f') and (pg_relation_is_updatable(c.oid, true) & 8) = 8))
               as insertable,
             (c.relkind in ('r', 'p') or (c.relkind in ('v', 'f') and (pg_relation_is_updatable(c.oid, true) & 4) = 4))
               as updatable,
             (c.relkind in ('r', 'p') or (c.relkind in ('v', 'f') and (pg_relation_is_updatable(c.oid, true) & 16) = 16))
               as deletable,
             obj_description(c.oid, 'pg_class') as description,
             coalesce((select array_agg(a.attname::text order by a.attname)
                         from pg_constraint k join pg_attribute a on a.attrelid = k.conrelid and a.attnum = any(k.conkey)
                        where k.conrelid = c.oid and k.contype = 'p'), '{}') as pk,
             coalesce((select json_agg(json_build_object(
                         'name', a.attname,
                         'type', case
                                   when t.typtype = 'd' and b.typnamespace = 'pg_catalog'::regnamespace
                                     then format_type(t.typbasetype, null)
                                   when t.typnamespace = 'pg_catalog'::regnamespace then format_type(a.atttypid, null)
                                   else format_type(a.atttypid, a.atttypmod) end,
                         'nominal_type', format_type(a.atttypid, a.atttypmod),
                         'nullable', not (a.attnotnull or (t.typtype = 'd' and t.typnotnull)),
                         'default', case
                                      when a.attgenerated <> '' then null
                                      when a.attidentity = 'd' then
                                        format('nextval(%L)', pg_get_serial_sequence(c.oid::regclass::text, a.attname))
                                      when ad.adbin is not null then pg_get_expr(ad.adbin, ad.adrelid)
                                      when t.typtype = 'd' then pg_get_expr(t.typdefaultbin, 0) end,
                         'max_length', case when a.atttypid in ('varchar'::regtype, 'bpchar'::regtype) and a.atttypmod > 4
                                         then a.atttypmod - 4 end,
                         'enum', (select array_agg(e.enumlabel order by e.enumsortorder) from pg_enum e
                                   where e.enumtypid = coalesce(nullif(t.typbasetype, 0), t.oid)),
                         'description', col_description(c.oid, a.attnum)
                       ) order by a.attnum)
                         from pg_attribute a
                         join pg_type t on t.oid = a.atttypid
                         left join pg_type b on b.oid = t.typbasetype
                         left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
                        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]') as columns
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname in (select jsonb_array_elements_text(${JSON.stringify(schemas)}::text::jsonb))
         and c.relkind in ('r', 'v', 'm', 'f', 'p') and not c.relispartition`,
    sql<ForeignKeyRow[]>`
      select k.conname as name, k.conrelid::int as table_oid, k.confrelid::int as target_oid,
             array(select a.attname::text from unnest(k.conkey) with ordinality u(n, o)
                     join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n order by u.o) as cols,
             array(select a.attname::text from unnest(k.confkey) with ordinality u(n, o)
                     join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.n order by u.o) as fcols,
             k.conkey::int[] as attnums, k.confkey::int[] as fattnums,
             exists (select from pg_constraint u
                      where u.conrelid = k.conrelid and u.contype in ('p', 'u')
                        and (select array_agg(x order by x) from unnest(u.conkey) x)
                          = (select array_agg(x order by x) from unnest(k.conkey) x)) as one_to_one
        from pg_constraint k
       where k.contype = 'f' and k.conparentid = 0 and k.connamespace <> 'pg_catalog'::regnamespace
       order by k.conrelid, k.conname`,
    sql<{ oid: number; attnums: number[] }[]>`
      select conrelid::int as oid, conkey::int[] as attnums from pg_constraint
       where contype = 'p' and connamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)`,
    sql<{ oid: number; definition: string }[]>`
      select c.oid::int as oid, r.ev_action::text as definition
        from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_rewrite r on r.ev_class = c.oid
       where c.relkind in ('v', 'm') and n.nspname in (select jsonb_array_elements_text(${
      JSON.stringify(viewSchemas)
    }::text::jsonb))`,
    loadFunctions(sql, [...new Set([...schemas, ...config.extraSearchPath])]),
    sql<{ role: string; config: string[] }[]>`
      select r.rolname as role, s.setconfig as config
        from pg_db_role_setting s join pg_roles r on r.oid = s.setrole
       where s.setdatabase in (0, (select oid from pg_database where datname = current_database()))
         and r.oid in (select roleid from pg_auth_members where member = 'authenticator'::regrole)
       order by s.setdatabase`,
    knownTimezones ? [] : sql<{ name: string }[]>`select name from pg_timezone_names`,
  ]);

  // Tables and views of the exposed schemas.
  const tables = new Map<string, Map<string, Table>>(schemas.map((s) => [s, new Map()]));
  const byOid = new Map<number, Table>();
  for (const row of tableRows) {
    const columns = new Map<string, Column>();
    for (const c of row.columns) {
      columns.set(c.name, {
        name: c.name,
        type: c.type,
        nominalType: c.nominal_type,
        nullable: c.nullable,
        default: c.default,
        maxLength: c.max_length,
        enum: c.enum ?? [],
        description: c.description,
      });
    }
    const t: Table = {
      schema: row.schema,
      name: row.name,
      oid: row.oid,
      isView: row.is_view,
      insertable: row.insertable,
      updatable: row.updatable,
      deletable: row.deletable,
      primaryKey: row.pk,
      columns,
      computed: new Map(),
      description: row.description,
    };
    tables.get(row.schema)!.set(row.name, t);
    byOid.set(row.oid, t);
  }

  // The origins of view columns, through views over views.
  const viewOids = new Set(views.map((v) => v.oid));
  const direct = new Map<number, Map<number, [number, number]>>();
  for (const view of views) {
    const map = new Map<number, [number, number]>();
    for (const o of viewColumnOrigins(view.definition)) map.set(o.position, [o.relation, o.column]);
    direct.set(view.oid, map);
  }
  const viewColumns = await viewColumnNames(sql, [...viewOids]);
  /** For a view: "relation:attnum" of every relation a column reads unchanged (at every level) → the view's columns. */
  const origins = new Map<number, Map<string, string[]>>();
  for (const view of views) {
    const found = new Map<string, string[]>();
    for (const [position, first] of direct.get(view.oid)!) {
      const name = viewColumns.get(view.oid)?.[position - 1];
      if (!name) continue;
      let [relation, column] = first;
      const seen = new Set<number>();
      for (;;) {
        const key = `${relation}:${column}`;
        found.set(key, [...(found.get(key) ?? []), name]);
        if (!viewOids.has(relation) || seen.has(relation)) break;
        seen.add(relation);
        const next = direct.get(relation)?.get(column);
        if (!next) break;
        [relation, column] = next;
      }
    }
    origins.set(view.oid, found);
  }
  /** Each way a view exposes every one of `attnums` of `relation`: lists of view columns, in key order. */
  const viewKeys = (viewOid: number, relation: number, attnums: number[]): string[][] => {
    const found = origins.get(viewOid)!;
    const choices = attnums.map((n) => found.get(`${relation}:${n}`) ?? []);
    if (choices.some((c) => c.length === 0)) return [];
    return choices.reduce<string[][]>((acc, options) => acc.flatMap((prefix) => options.map((o) => [...prefix, o])), [
      [],
    ]);
  };

  // Views' primary keys: the keys of the tables they expose whole (the first reference of each column).
  const pkByOid = new Map(primaryKeys.map((p) => [p.oid, p.attnums]));
  for (const t of byOid.values()) {
    if (!t.isView || !origins.has(t.oid)) continue;
    const pk: string[] = [];
    for (const [relation, attnums] of pkByOid) {
      const keys = viewKeys(t.oid, relation, attnums);
      if (keys.length) pk.push(...keys[0]);
    }
    t.primaryKey = pk;
  }

  // Many-to-one and one-to-one relationships, then the same through views.
  const endpoint = (oid: number): Endpoint => ({ oid, isView: viewOids.has(oid) });
  const base: BaseRel[] = foreignKeys.map((fk) => ({
    table: endpoint(fk.table_oid),
    target: endpoint(fk.target_oid),
    constraint: fk.name,
    columns: fk.cols.map((c, i) => [c, fk.fcols[i]]),
    oneToOne: fk.one_to_one,
    tableIsView: false,
    targetIsView: false,
  }));
  const derived: BaseRel[] = [];
  for (const fk of foreignKeys) {
    const rel = base.find((r) => r.constraint === fk.name && r.table.oid === fk.table_oid)!;
    const viewsOfTable = [...origins.keys()].flatMap((v) =>
      viewKeys(v, fk.table_oid, fk.attnums).map((cols) => ({ v, cols }))
    );
    const viewsOfTarget = [...origins.keys()].flatMap((v) =>
      viewKeys(v, fk.target_oid, fk.fattnums).map((cols) => ({ v, cols }))
    );
    for (const { v, cols } of viewsOfTable) {
      derived.push({
        ...rel,
        table: endpoint(v),
        columns: cols.map((c, i) => [c, fk.fcols[i]]),
        tableIsView: true,
        targetIsView: false,
      });
    }
    for (const { v, cols } of viewsOfTarget) {
      derived.push({
        ...rel,
        target: endpoint(v),
        columns: fk.cols.map((c, i) => [c, cols[i]]),
        tableIsView: false,
        targetIsView: true,
      });
    }
    for (const a of viewsOfTable) {
      for (const b of viewsOfTarget) {
        derived.push({
          ...rel,
          table: endpoint(a.v),
          target: endpoint(b.v),
          columns: a.cols.map((c, i) => [c, b.cols[i]]),
          tableIsView: true,
          targetIsView: true,
        });
      }
    }
  }
  const toOne = [...base, ...derived];

  // Only relationships between exposed relations reach the cache.
  const relationships = new Map<Table, Relationship[]>();
  const add = (rel: Relationship) => {
    if (!relationships.has(rel.table)) relationships.set(rel.table, []);
    relationships.get(rel.table)!.push(rel);
  };
  const isSelf = (r: BaseRel) => r.table.oid === r.target.oid;
  for (const r of toOne) {
    const [t, f] = [byOid.get(r.table.oid), byOid.get(r.target.oid)];
    if (!t || !f) continue;
    const common = { isSelf: isSelf(r), constraint: r.constraint };
    add({
      ...common,
      table: t,
      target: f,
      cardinality: r.oneToOne ? "one-to-one" : "many-to-one",
      columns: r.columns,
      tableIsView: r.tableIsView,
      targetIsView: r.targetIsView,
    });
    add({
      ...common,
      table: f,
      target: t,
      cardinality: r.oneToOne ? "one-to-one" : "one-to-many",
      columns: r.columns.map(([a, b]) => [b, a]),
      tableIsView: r.targetIsView,
      targetIsView: r.tableIsView,
    });
  }
  // Many-to-many: a junction with two foreign keys whose columns are all in its primary key.
  for (const r1 of toOne) {
    if (r1.oneToOne) continue;
    const junction = byOid.get(r1.table.oid);
    if (!junction) continue;
    for (const r2 of toOne) {
      if (r2.oneToOne || r2.table.oid !== r1.table.oid || r2.constraint === r1.constraint) continue;
      const [t, f] = [byOid.get(r1.target.oid), byOid.get(r2.target.oid)];
      if (!t || !f) continue;
      const keyColumns = [...r1.columns, ...r2.columns].map(([c]) => c);
      if (!keyColumns.every((c) => junction.primaryKey.includes(c))) continue;
      add({
        table: t,
        target: f,
        cardinality: "many-to-many",
        isSelf: t === f,
        tableIsView: r1.targetIsView,
        targetIsView: r2.targetIsView,
        constraint: junction.name,
        columns: [],
        junction: {
          table: junction,
          constraint1: r1.constraint,
          constraint2: r2.constraint,
          sourceColumns: r1.columns.map(([j, c]) => [c, j]),
          targetColumns: r2.columns.map(([j, c]) => [c, j]),
        },
      });
    }
  }

  // Functions: computed fields and relationships (taking a row), and the RPC-callable ones.
  const routines = new Map<string, Map<string, Routine[]>>(schemas.map((s) => [s, new Map()]));
  for (const fn of functionRows) {
    const rowArg = fn.args.length === 1 && fn.arg_relation !== null ? byOid.get(fn.arg_relation) : undefined;
    if (rowArg && fn.returns_relation !== null && schemas.includes(fn.schema)) {
      // A computed relationship: it overrides a detected one of the same name.
      const target = byOid.get(fn.returns_relation);
      if (target) {
        const list = relationships.get(rowArg) ?? [];
        relationships.set(
          rowArg,
          list.filter((r) => r.computed || r.target.schema !== fn.schema || r.target.name !== fn.name),
        );
        add({
          table: rowArg,
          target,
          cardinality: !fn.returns_set || fn.rows === 1 ? "many-to-one" : "one-to-many",
          isSelf: rowArg === target,
          tableIsView: rowArg.isView,
          targetIsView: target.isView,
          constraint: fn.name,
          columns: [],
          computed: { schema: fn.schema, name: fn.name },
        });
      }
    } else if (rowArg && !fn.returns_set && fn.return_kind !== "void") {
      const fields = rowArg.computed.get(fn.name) ?? [];
      fields.push({ schema: fn.schema, name: fn.name, type: fn.return_type });
      rowArg.computed.set(fn.name, fields);
    }
    if (!schemas.includes(fn.schema) || !fn.callable) continue;
    const routine: Routine = {
      schema: fn.schema,
      name: fn.name,
      description: fn.description,
      params: fn.args.map((a) => ({
        name: a.name,
        type: a.type,
        castType: a.cast_type,
        required: a.required,
        variadic: a.variadic,
      })),
      volatility: fn.volatility,
      returnsSet: fn.returns_set,
      returns: fn.return_kind,
      resultColumns: fn.result_columns
        ? new Map(
          fn.result_columns.map((c) => [
            c.name,
            {
              name: c.name,
              type: c.type,
              nominalType: c.type,
              nullable: true,
              default: null,
              maxLength: null,
              enum: [],
              description: null,
            },
          ]),
        )
        : null,
      resultTable: fn.returns_relation !== null ? byOid.get(fn.returns_relation) ?? null : null,
    };
    const byName = routines.get(fn.schema)!;
    byName.set(fn.name, [...(byName.get(fn.name) ?? []), routine]);
  }
  // Computed fields are looked up through the request's search path: its schema, then the extra ones.
  for (const t of byOid.values()) {
    for (const [name, fields] of t.computed) {
      const order = [t.schema, ...config.extraSearchPath];
      t.computed.set(name, fields.sort((a, b) => rank(order, a.schema) - rank(order, b.schema)));
    }
  }

  const roleSettings = new Map<string, [string, string][]>();
  for (const { role, config: items } of settings) {
    const pairs = items.map((item) => {
      const at = item.indexOf("=");
      return [item.slice(0, at), item.slice(at + 1)] as [string, string];
    });
    roleSettings.set(role, [...(roleSettings.get(role) ?? []), ...pairs]);
  }

  return {
    schemas,
    tables,
    relationships,
    routines,
    roleSettings,
    timezones: knownTimezones ?? new Set(timezones.map((t) => t.name)),
  };
}

function rank(order: string[], schema: string): number {
  const at = order.indexOf(schema);
  return at < 0 ? order.length : at;
}

async function viewColumnNames(sql: postgres.Sql, oids: number[]): Promise<Map<number, string[]>> {
  if (!oids.length) return new Map();
  const rows = await sql<{ oid: number; names: string[] }[]>`
    select a.attrelid::int as oid, array_agg(a.attname::text order by a.attnum) as names
      from pg_attribute a
     where a.attrelid in (select jsonb_array_elements_text(${JSON.stringify(oids)}::text::jsonb)::oid)
       and a.attnum > 0 and not a.attisdropped
     group by a.attrelid`;
  return new Map(rows.map((r) => [r.oid, r.names]));
}

interface FunctionRow {
  schema: string;
  name: string;
  description: string | null;
  args: { name: string; type: string; cast_type: string; required: boolean; variadic: boolean }[];
  /** The relation whose row type the single argument is, if it is one. */
  arg_relation: number | null;
  volatility: "i" | "s" | "v";
  returns_set: boolean;
  rows: number;
  return_kind: "void" | "scalar" | "composite";
  return_type: string;
  returns_relation: number | null;
  result_columns: { name: string; type: string }[] | null;
  callable: boolean;
}

/**
 * The functions of `schemas`, with PostgREST's rules: only plain functions,
 * not returning triggers; callable through /rpc when every parameter is named,
 * or when the only one is unnamed and of type bytea, json, jsonb, text or xml.
 */
function loadFunctions(sql: postgres.Sql, schemas: string[]) {
  return sql<FunctionRow[]>`
    with recursive spaces as (
      select oid from pg_namespace where nspname in (select jsonb_array_elements_text(${
    JSON.stringify(schemas)
  }::text::jsonb))
    ),
    bases as (
      select oid, oid as base from pg_type where typbasetype = 0
      union all
      select t.oid, b.base from pg_type t join bases b on t.typbasetype = b.oid
    ),
    inputs as (
      select p.oid, a.name, a.type, a.mode,
             row_number() over (partition by p.oid order by a.idx) as position,
             p.pronargs, p.pronargdefaults
        from pg_proc p,
             unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargnames, p.proargmodes)
               with ordinality as a(type, name, mode, idx)
       where coalesce(a.mode, 'i') in ('i', 'b', 'v') and p.pronamespace in (select oid from spaces)
    ),
    args as (
      select oid,
             json_agg(json_build_object(
               'name', coalesce(name, ''),
               'type', type::regtype::text,
               'cast_type', case type
                              when 'bit'::regtype then 'bit varying'
                              when 'bit[]'::regtype then 'bit varying[]'
                              when 'character'::regtype then 'character varying'
                              when 'character[]'::regtype then 'character varying[]'
                              else type::regtype::text end,
               'required', position <= pronargs - pronargdefaults,
               'variadic', coalesce(mode = 'v', false)
             ) order by position) as args,
             case count(*) - count(nullif(name, ''))
               when 0 then true
               when 1 then (array_agg(type))[1] in
                 ('bytea'::regtype, 'json'::regtype, 'jsonb'::regtype, 'text'::regtype, 'xml'::regtype)
               else false end as callable
        from inputs
       group by oid
    )
    select n.nspname as schema, p.proname as name, obj_description(p.oid, 'pg_proc') as description,
           coalesce(a.args, '[]') as args,
           case when p.pronargs = 1 then (select c.oid::int from pg_class c
                                           where c.reltype = p.proargtypes[0] and c.relkind in ('r', 'v', 'm', 'f', 'p'))
             end as arg_relation,
           p.provolatile::text as volatility, p.proretset as returns_set, p.prorows::int as rows,
           case when p.prorettype = 'void'::regtype then 'void'
                when t.typtype = 'c' or coalesce(p.proargmodes::text[] && '{t,b,o}', false) then 'composite'
                else 'scalar' end as return_kind,
           format_type(p.prorettype, null) as return_type,
           case when not coalesce(p.proargmodes::text[] && '{t,b,o}', false)
                then (select c.oid::int from pg_class c where c.oid = t.typrelid and c.relkind in ('r', 'v', 'm', 'f', 'p'))
             end as returns_relation,
           case when coalesce(p.proargmodes::text[] && '{t,b,o}', false) then
                  (select json_agg(json_build_object('name', o.name, 'type', format_type(o.type, null)) order by o.idx)
                     from unnest(p.proargnames, p.proallargtypes, p.proargmodes) with ordinality as o(name, type, mode, idx)
                    where o.mode in ('t', 'b', 'o'))
                when t.typrelid <> 0 then
                  (select json_agg(json_build_object('name', at.attname, 'type', format_type(at.atttypid, null))
                                   order by at.attnum)
                     from pg_attribute at where at.attrelid = t.typrelid and at.attnum > 0 and not at.attisdropped)
             end as result_columns,
           coalesce(a.callable, true) as callable
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join bases b on b.oid = p.prorettype
      join pg_type t on t.oid = b.base
      left join args a on a.oid = p.oid
     where p.pronamespace in (select oid from spaces) and p.prokind = 'f' and t.oid <> 'trigger'::regtype`;
}

/**
 * The closest name by edit distance, when similar enough (PostgREST uses a fuzzy set: score >= 0.75 for
 * table and function names, 0.33 for parameter lists).
 */
export function closest(name: string, candidates: Iterable<string>, minScore = 0.75): string | null {
  let best: string | null = null;
  let bestScore = 0;
  for (const candidate of candidates) {
    const score = 1 - distance(name, candidate) / Math.max(name.length, candidate.length, 1);
    if (score > bestScore) [best, bestScore] = [candidate, score];
  }
  return bestScore >= minScore ? best : null;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}

// The schema cache, as PostgREST builds it from pg_catalog
// (src/PostgREST/SchemaCache.hs): the exposed schema's tables and views with
// their columns, the foreign keys between them (the relationships embedding
// follows, in both directions), and its functions with their parameters and
// return types. Every identifier a request names is checked against it.
import type postgres from "postgres";

export interface Column {
  name: string;
  /** format_type() of the column: safe to splice after `::`. */
  type: string;
}

export interface Table {
  schema: string;
  name: string;
  columns: Map<string, Column>;
  primaryKey: string[];
}

export interface Relationship {
  table: Table;
  target: Table;
  constraint: string;
  /** Pairs of (column of `table`, column of `target`). */
  columns: [string, string][];
  cardinality: "many-to-one" | "one-to-many" | "one-to-one";
}

export interface Param {
  name: string;
  type: string;
  required: boolean;
  variadic: boolean;
}

export interface Routine {
  schema: string;
  name: string;
  params: Param[];
  volatility: "i" | "s" | "v";
  returnsSet: boolean;
  returnsVoid: boolean;
  /** The columns of a composite (table, type, or `returns table`) result; null for a scalar. */
  resultColumns: Map<string, Column> | null;
  /** The exposed table a result is a row of, for embedding from it. */
  resultTable: Table | null;
}

export interface SchemaCache {
  schema: string;
  tables: Map<string, Table>;
  relationships: Relationship[];
  routines: Map<string, Routine[]>;
  /** Role settings (ALTER ROLE ... SET), applied per request as PostgREST does. */
  roleSettings: Map<string, [string, string][]>;
}

interface ColumnRow {
  table_name: string;
  column_name: string;
  type: string;
}

export async function loadSchemaCache(sql: postgres.Sql, schema: string): Promise<SchemaCache> {
  const tables = new Map<string, Table>();
  const relations = await sql<{ oid: number; name: string; pk: string[] | null }[]>`
    select c.oid::int as oid, c.relname as name,
           (select array_agg(a.attname order by k.ord)
              from pg_constraint p
              cross join lateral unnest(p.conkey) with ordinality as k(attnum, ord)
              join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
             where p.conrelid = c.oid and p.contype = 'p') as pk
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'v', 'm', 'f', 'p')`;
  const columns = await sql<ColumnRow[]>`
    select c.relname as table_name, a.attname as column_name, format_type(a.atttypid, a.atttypmod) as type
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'v', 'm', 'f', 'p') and a.attnum > 0 and not a.attisdropped
     order by c.relname, a.attnum`;
  for (const relation of relations) {
    tables.set(relation.name, { schema, name: relation.name, columns: new Map(), primaryKey: relation.pk ?? [] });
  }
  for (const column of columns) {
    tables.get(column.table_name)?.columns.set(column.column_name, { name: column.column_name, type: column.type });
  }

  const foreignKeys = await sql<
    { constraint: string; table: string; target: string; cols: string[]; fcols: string[] }[]
  >`
    select con.conname as constraint, c.relname as table, f.relname as target,
           array(select a.attname from unnest(con.conkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.o) as cols,
           array(select a.attname from unnest(con.confkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.o) as fcols
      from pg_constraint con
      join pg_class c on c.oid = con.conrelid join pg_namespace cn on cn.oid = c.relnamespace
      join pg_class f on f.oid = con.confrelid join pg_namespace fn on fn.oid = f.relnamespace
     where con.contype = 'f' and cn.nspname = ${schema} and fn.nspname = ${schema}
     order by con.conname`;
  const uniques = await sql<{ table: string; cols: string[] }[]>`
    select c.relname as table,
           array(select a.attname from unnest(con.conkey) k(n)
                   join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by a.attname) as cols
      from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_namespace n on n.oid = c.relnamespace
     where con.contype in ('p', 'u') and n.nspname = ${schema}`;
  const isUnique = (table: string, cols: string[]) => {
    const key = [...cols].sort().join(",");
    return uniques.some((u) => u.table === table && u.cols.join(",") === key);
  };
  const relationships: Relationship[] = [];
  for (const fk of foreignKeys) {
    const table = tables.get(fk.table);
    const target = tables.get(fk.target);
    if (!table || !target) continue;
    const pairs = fk.cols.map((col, i) => [col, fk.fcols[i]] as [string, string]);
    const oneToOne = isUnique(fk.table, fk.cols);
    relationships.push({
      table,
      target,
      constraint: fk.constraint,
      columns: pairs,
      cardinality: oneToOne ? "one-to-one" : "many-to-one",
    });
    relationships.push({
      table: target,
      target: table,
      constraint: fk.constraint,
      columns: pairs.map(([a, b]) => [b, a]),
      cardinality: oneToOne ? "one-to-one" : "one-to-many",
    });
  }

  const routines = new Map<string, Routine[]>();
  const procs = await sql<{
    name: string;
    arg_names: string[] | null;
    arg_modes: string[] | null;
    arg_types: string[];
    all_arg_types: string[] | null;
    n_defaults: number;
    volatility: "i" | "s" | "v";
    returns_set: boolean;
    return_type: string;
    return_relid: number;
    return_relname: string | null;
    return_relschema: string | null;
    is_void: boolean;
    variadic: boolean;
  }[]>`
    select p.proname as name, p.proargnames as arg_names, p.proargmodes::text[] as arg_modes,
           array(select format_type(t, null) from unnest(p.proargtypes) t) as arg_types,
           array(select format_type(t, null) from unnest(p.proallargtypes) t) as all_arg_types,
           p.pronargdefaults::int as n_defaults, p.provolatile::text as volatility, p.proretset as returns_set,
           format_type(p.prorettype, null) as return_type, t.typrelid::int as return_relid,
           rc.relname as return_relname, rn.nspname as return_relschema,
           p.prorettype = 'void'::regtype as is_void, p.provariadic <> 0 as variadic
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_type t on t.oid = p.prorettype
      left join pg_class rc on rc.oid = t.typrelid
      left join pg_namespace rn on rn.oid = rc.relnamespace
     where n.nspname = ${schema} and p.prokind = 'f'`;
  const compositeColumns = new Map<number, Map<string, Column>>();
  const relids = [...new Set(procs.map((p) => p.return_relid).filter((id) => id !== 0))];
  if (relids.length) {
    const rows = await sql<{ relid: number; name: string; type: string }[]>`
      select a.attrelid::int as relid, a.attname as name, format_type(a.atttypid, a.atttypmod) as type
        from pg_attribute a
       where a.attrelid = any(${relids}::oid[]) and a.attnum > 0 and not a.attisdropped
       order by a.attrelid, a.attnum`;
    for (const row of rows) {
      if (!compositeColumns.has(row.relid)) compositeColumns.set(row.relid, new Map());
      compositeColumns.get(row.relid)!.set(row.name, { name: row.name, type: row.type });
    }
  }
  for (const proc of procs) {
    const modes = proc.arg_modes ?? proc.arg_types.map(() => "i");
    const types = proc.all_arg_types && proc.all_arg_types.length ? proc.all_arg_types : proc.arg_types;
    const names = proc.arg_names ?? [];
    const inputs: Param[] = [];
    const tableColumns = new Map<string, Column>();
    modes.forEach((mode, i) => {
      const name = names[i] ?? "";
      if (mode === "i" || mode === "b" || mode === "v") {
        inputs.push({ name, type: types[i], required: true, variadic: mode === "v" });
      }
      if (mode === "t" || mode === "o" || mode === "b") tableColumns.set(name, { name, type: types[i] });
    });
    // The last n_defaults inputs have defaults.
    inputs.forEach((param, i) => param.required = i < inputs.length - proc.n_defaults);
    const outParams = modes.some((m) => m === "t" || m === "o");
    const routine: Routine = {
      schema,
      name: proc.name,
      params: inputs,
      volatility: proc.volatility,
      returnsSet: proc.returns_set,
      returnsVoid: proc.is_void,
      resultColumns: outParams
        ? tableColumns
        : proc.return_relid
        ? compositeColumns.get(proc.return_relid) ?? null
        : null,
      resultTable: proc.return_relschema === schema && proc.return_relname
        ? tables.get(proc.return_relname) ?? null
        : null,
    };
    // A single OUT parameter makes a scalar result, as in Postgres.
    if (outParams && tableColumns.size === 1 && !modes.includes("t")) routine.resultColumns = null;
    if (!routines.has(proc.name)) routines.set(proc.name, []);
    routines.get(proc.name)!.push(routine);
  }

  const roleSettings = new Map<string, [string, string][]>();
  const settings = await sql<{ role: string; config: string[] }[]>`
    select r.rolname as role, s.setconfig as config
      from pg_db_role_setting s join pg_roles r on r.oid = s.setrole
     where s.setdatabase in (0, (select oid from pg_database where datname = current_database()))`;
  for (const { role, config } of settings) {
    const pairs = config.map((item) => {
      const at = item.indexOf("=");
      return [item.slice(0, at), item.slice(at + 1)] as [string, string];
    });
    roleSettings.set(role, [...(roleSettings.get(role) ?? []), ...pairs]);
  }

  return { schema, tables, relationships, routines, roleSettings };
}

/** The closest name by edit distance, when similar enough (PostgREST uses a fuzzy set, score >= 0.75). */
export function closest(name: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestScore = 0;
  for (const candidate of candidates) {
    const score = 1 - distance(name, candidate) / Math.max(name.length, candidate.length, 1);
    if (score > bestScore) [best, bestScore] = [candidate, score];
  }
  return bestScore >= 0.75 ? best : null;
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

// The declarative schema (supabase/schemas/) against the migrations
// (supabase/migrations/): two embedded Postgres clusters, one built from the
// migrations and one from the schema files (each with sql/local/ first and the
// buckets of config.toml, as local/database.ts builds every database), and
// what differs between them.
//
// The difference is the Supabase CLI's own diff engine, pg-delta
// (`supabase db diff --from <url> --to <url> --use-pg-delta`, no Docker
// needed), plus the facts pg-delta does not carry (catalogFacts below, each
// found by trying it): role memberships and role settings, objects and
// privileges in the schemas Supabase manages (auth, storage, ...), rows, and
// the order of a table's columns or a composite type's attributes (pg-delta
// matches them by name; a row built by position depends on the order).
//
//   npm run db:diff -- <name>
//
// writes the next migration, supabase/migrations/<YYYYMMDDHHMMSS>_<name>.sql:
// pg-delta's statements, then the grants and settings it leaves out. It then
// applies the migration to the migrations' database and diffs again: a
// migration that does not apply, or after which anything still differs, fails
// at once (the file is moved to .test-stack/db-diff/ to be read). `npm run
// test:db` runs the same comparison and fails on any difference (drift).
import postgres from "postgres";
import { projectRoot } from "./config.ts";
import { applyPlatform, migrate, seedBuckets, startDatabase } from "./database.ts";
import { relative, schemaFiles, topLevel } from "./schema-files.ts";

export interface Cluster {
  url: string;
  stop(): Promise<void>;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A fresh embedded cluster under `dir` on a free port (another port if that one was taken meanwhile). */
export async function startCluster(dir: string): Promise<Cluster> {
  for (let attempt = 1;; attempt++) {
    try {
      const database = await startDatabase({ dataDir: dir, port: freePort(), reset: true });
      return {
        url: database.url,
        stop: async () => {
          await database.stop();
          await Deno.remove(dir, { recursive: true }).catch(() => {});
        },
      };
    } catch (error) {
      if (attempt >= 3 || !/did not start on port/.test((error as Error).message)) throw error;
    }
  }
}

/** sql/local/, then each schema file in its own transaction, then config.toml's buckets. */
export async function applySchemas(url: string, files?: URL[]): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await applyPlatform(sql);
    for (const file of files ?? await schemaFiles()) {
      const text = await Deno.readTextFile(file);
      try {
        await sql.begin((tx) => tx.unsafe(text));
      } catch (error) {
        const position = Number((error as { position?: string }).position);
        const line = position > 0 ? `:${text.slice(0, position).split("\n").length}` : "";
        throw new Error(`${relative(file)}${line}: ${(error as Error).message}`);
      }
    }
    await seedBuckets(sql);
  } finally {
    await sql.end();
  }
}

const noTls = (url: string) => `${url}${url.includes("?") ? "&" : "?"}sslmode=disable`;

/** pg-delta's statements that bring `from` to `to`, each a string; none when they agree. */
export async function pgDelta(from: string, to: string): Promise<string[]> {
  const output = await new Deno.Command("npx", {
    args: ["--no-install", "supabase", "db", "diff", "--use-pg-delta", "--from", noTls(from), "--to", noTls(to)],
    cwd: projectRoot,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`supabase db diff failed: ${new TextDecoder().decode(output.stderr).trim() || stdout.trim()}`);
  }
  // The CLI may print notices (TLS) on stdout, each line starting with a box-drawing character.
  const text = stdout.split("\n").filter((line) => !/^[│▲◇●■└┌]/.test(line)).join("\n");
  return splitStatements(text).filter((s) => !/^set local check_function_bodies/i.test(s));
}

/** SQL text as its statements, split at the semicolons outside strings, comments and bodies. */
export function splitStatements(text: string): string[] {
  const code = topLevel(text);
  const statements: string[] = [];
  let start = 0;
  for (let i = 0; i <= code.length; i++) {
    if (i === code.length || code[i] === ";") {
      const statement = text.slice(start, i + 1).trim();
      if (code.slice(start, i).trim()) statements.push(statement);
      start = i + 1;
    }
  }
  return statements;
}

/** Supabase's own schemas, which pg-delta leaves alone (their policies aside). */
export const MANAGED_SCHEMAS = [
  "auth",
  "storage",
  "realtime",
  "vault",
  "extensions",
  "cron",
  "net",
  "supabase_migrations",
  "graphql",
  "graphql_public",
];

/** Tables whose rows are compared (a schema or a migration that writes rows), with the columns compared. */
const ROW_SCHEMAS = ["public", "private", "auth", "storage", "vault"];
const ROW_COLUMNS: Record<string, string> = {
  // Every column but the timestamps each build sets for itself.
  "storage.buckets": "id, name, public, file_size_limit, allowed_mime_types",
  "vault.secrets": "name, description",
};

export interface Fact {
  /** What kind of fact: "role membership", "role setting", "managed schema", "rows", "attribute order". */
  kind: string;
  /** The fact as a sentence; two databases agree on a fact when both state the same sentence. */
  text: string;
  /** The statement that makes the fact true, when a migration can be generated for it. */
  add?: string;
  /** The statement that makes it false. */
  remove?: string;
}

/** What pg-delta does not compare, read from one database's catalog. */
export async function catalogFacts(url: string): Promise<Fact[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const facts: Fact[] = [];
    const memberships = await sql<{ role: string; member: string; options: string }[]>`
      select distinct r.rolname as role, m.rolname as member,
        concat_ws(', ', case when am.admin_option then 'admin option' end,
                        case when not am.inherit_option then 'inherit false' end,
                        case when not am.set_option then 'set false' end) as options
      from pg_auth_members am
      join pg_roles r on r.oid = am.roleid
      join pg_roles m on m.oid = am.member`;
    for (const { role, member, options } of memberships) {
      const grant = `grant ${ident(role)} to ${ident(member)}`;
      facts.push({
        kind: "role membership",
        text: `role ${member} is a member of ${role}${options ? ` with ${options}` : ""}`,
        add: `${grant}${options ? ` with ${options.replace("admin option", "admin true")}` : ""};`,
        remove: `revoke ${ident(role)} from ${ident(member)};`,
      });
    }
    const settings = await sql<{ role: string | null; database: string | null; name: string; value: string }[]>`
      select r.rolname as role, d.datname as database, split_part(c, '=', 1) as name,
        substr(c, length(split_part(c, '=', 1)) + 2) as value
      from pg_db_role_setting s
      left join pg_roles r on r.oid = s.setrole
      left join pg_database d on d.oid = s.setdatabase
      cross join unnest(s.setconfig) c
      where s.setdatabase in (0, (select oid from pg_database where datname = current_database()))`;
    for (const { role, database, name, value } of settings) {
      const target = role
        ? `role ${ident(role)}${database ? ` in database ${ident(database)}` : ""}`
        : `database ${ident(database!)}`;
      facts.push({
        kind: "role setting",
        text: `${role ? `role ${role}` : "the database"}${
          role && database ? " in this database" : ""
        } sets ${name} = ${value}`,
        add: `alter ${target} set ${name} = ${value.includes(",") ? value : quote(value)};`,
        remove: `alter ${target} reset ${name};`,
      });
    }
    const managed = await sql<{ text: string }[]>`
      with managed as (
        select n.oid, n.nspname from pg_namespace n where n.nspname = any(${MANAGED_SCHEMAS})
      ),
      own as (
        -- Objects an extension created belong to the extension, which pg-delta compares.
        select d.objid from pg_depend d where d.deptype = 'e'
      )
      select format('schema %I: privileges %s', m.nspname,
        coalesce((select string_agg(a::text, ' ' order by a::text) from unnest(n.nspacl) a), 'default')) as text
      from managed m join pg_namespace n on n.oid = m.oid
      where m.oid not in (select objid from own)
      union all
      select format('function %s: body %s, privileges %s', p.oid::regprocedure, md5(pg_get_functiondef(p.oid)),
        coalesce((select string_agg(a::text, ' ' order by a::text) from unnest(p.proacl) a), 'default'))
      from pg_proc p join managed m on m.oid = p.pronamespace
      where p.oid not in (select objid from own) and p.prokind in ('f', 'p')
      union all
      select format('%s %s: columns %s; privileges %s',
        case c.relkind when 'r' then 'table' when 'p' then 'table' when 'v' then 'view' when 'm' then 'materialized view'
          when 'S' then 'sequence' when 'f' then 'foreign table' end,
        c.oid::regclass,
        coalesce((select string_agg(format('%I %s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' order by a.attname)
                  from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), 'none'),
        coalesce((select string_agg(a::text, ' ' order by a::text) from unnest(c.relacl) a), 'default'))
      from pg_class c join managed m on m.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f') and c.oid not in (select objid from own)`;
    for (const { text } of managed) facts.push({ kind: "managed schema", text });
    const tables = await sql<{ name: string }[]>`
      select format('%I.%I', n.nspname, c.relname) as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and n.nspname = any(${ROW_SCHEMAS})
        and not exists (select from pg_depend d where d.objid = c.oid and d.deptype = 'e')
      order by 1`;
    for (const { name } of tables) {
      const columns = ROW_COLUMNS[name];
      if (columns) {
        for (const row of await sql.unsafe(`select ${columns} from ${name}`)) {
          facts.push({ kind: "rows", text: `${name} has the row ${JSON.stringify(row)}` });
        }
      } else {
        const [{ count }] = await sql.unsafe(`select count(*)::int as count from ${name}`);
        if (count > 0) facts.push({ kind: "rows", text: `${name} has ${count} row(s)` });
      }
    }
    return facts;
  } finally {
    await sql.end();
  }
}

function ident(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function quote(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * Each relation's attributes in their order (tables, views, composite types), outside Supabase's schemas and
 * extensions. pg-delta compares attributes by name, not by position, yet the position is behaviour: a row built
 * by position (`row(...)::public.delivery`, `insert ... select *`, `returning * into`) follows it.
 */
export async function attributeOrders(url: string): Promise<Map<string, string[]>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ name: string; attributes: string[] }[]>`
      select format('%s %I.%I', case c.relkind when 'c' then 'type' when 'v' then 'view' when 'm' then 'materialized view'
          when 'f' then 'foreign table' else 'table' end, n.nspname, c.relname) as name,
        array_agg(a.attname::text order by a.attnum) as attributes
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relkind in ('r', 'p', 'v', 'm', 'c', 'f')
        and n.nspname <> all(${[...MANAGED_SCHEMAS, "pg_catalog", "information_schema", "pg_toast"]})
        and not exists (select from pg_depend d where d.deptype = 'e'
          and ((d.classid = 'pg_class'::regclass and d.objid = c.oid)
            or (d.classid = 'pg_type'::regclass and d.objid = c.reltype)))
      group by c.oid, n.nspname`;
    return new Map(rows.map((r) => [r.name, r.attributes]));
  } finally {
    await sql.end();
  }
}

/**
 * The relations both databases have whose shared attributes stand in another order, as facts of each side
 * (the attributes only one side has are pg-delta's to add or drop, and left out here). No migration is
 * generated for them: `alter table` and `alter type` cannot move an attribute.
 */
export function attributeOrderFacts(
  migrations: Map<string, string[]>,
  schemas: Map<string, string[]>,
): { inMigrations: Fact[]; inSchemas: Fact[] } {
  const inMigrations: Fact[] = [];
  const inSchemas: Fact[] = [];
  for (const [name, fromMigrations] of migrations) {
    const fromSchemas = schemas.get(name);
    if (!fromSchemas) continue;
    const shared = (list: string[], other: string[]) => list.filter((attribute) => other.includes(attribute));
    const [m, s] = [shared(fromMigrations, fromSchemas), shared(fromSchemas, fromMigrations)];
    if (m.join(",") === s.join(",")) continue;
    const fact = (order: string[]) => ({
      kind: "attribute order",
      text: `${name} orders its attributes ${order.join(", ")}`,
    });
    inMigrations.push(fact(m));
    inSchemas.push(fact(s));
  }
  return { inMigrations, inSchemas };
}

export interface Drift {
  /** pg-delta's statements from the migrations' database to the schemas'. */
  statements: string[];
  /** Facts the schemas' database states and the migrations' does not. */
  onlyInSchemas: Fact[];
  /** Facts the migrations' database states and the schemas' does not. */
  onlyInMigrations: Fact[];
}

/** Everything that differs between the database of the migrations and that of the schemas. */
export async function drift(migrationsUrl: string, schemasUrl: string): Promise<Drift> {
  const [statements, migrationsFacts, schemasFacts, migrationsOrders, schemasOrders] = await Promise.all([
    pgDelta(migrationsUrl, schemasUrl),
    catalogFacts(migrationsUrl),
    catalogFacts(schemasUrl),
    attributeOrders(migrationsUrl),
    attributeOrders(schemasUrl),
  ]);
  const texts = (facts: Fact[]) => new Set(facts.map((f) => f.text));
  const [inMigrations, inSchemas] = [texts(migrationsFacts), texts(schemasFacts)];
  const order = attributeOrderFacts(migrationsOrders, schemasOrders);
  return {
    statements,
    onlyInSchemas: [...schemasFacts.filter((f) => !inMigrations.has(f.text)), ...order.inSchemas],
    onlyInMigrations: [...migrationsFacts.filter((f) => !inSchemas.has(f.text)), ...order.inMigrations],
  };
}

export function isEmpty(d: Drift): boolean {
  return d.statements.length === 0 && d.onlyInSchemas.length === 0 && d.onlyInMigrations.length === 0;
}

/** The differences, one line each (a statement by its first line). */
export function describeDrift(d: Drift): string[] {
  const firstLine = (s: string) => {
    const line = s.split("\n")[0];
    return line.length > 150 ? `${line.slice(0, 150)}...` : line;
  };
  return [
    ...d.statements.map((s) => `pg-delta: ${firstLine(s)}`),
    ...d.onlyInSchemas.map((f) => `${f.kind}, only in the schemas: ${f.text}`),
    ...d.onlyInMigrations.map((f) => `${f.kind}, only in the migrations: ${f.text}`),
  ];
}

/** Why a fact of this kind cannot be generated, and where it belongs instead. */
const NOT_GENERATED: Record<string, string> = {
  "managed schema": "pg-delta leaves Supabase's own schemas (auth, storage, realtime, vault, extensions, ...) " +
    "alone: objects and privileges there are Supabase's, not the schema's",
  rows: "rows are data, which a schema diff does not carry: a bucket belongs in supabase/config.toml " +
    "([storage.buckets.<id>]), demo data in supabase/seed.sql",
  "attribute order": "no migration moves a column or a type's attribute: declare them in the schema file in " +
    "the order the migrations give them (new ones after the old, in the order the generated migration adds " +
    "them: pg-delta adds a type's new attributes alphabetically)",
};

/** The migration that takes the migrations' database to the schemas', or the facts it cannot express. */
export function migrationFor(d: Drift): { sql: string; refused: string[] } {
  const refused = [...d.onlyInSchemas, ...d.onlyInMigrations].filter((f) => !f.add)
    .map((f) => `${f.text} (${NOT_GENERATED[f.kind] ?? "not generated"})`);
  // pg-delta carries some memberships itself (those of postgres): each statement once.
  const normal = (statement: string) => statement.toLowerCase().replace(/["; ]/g, "");
  const carried = new Set(d.statements.map(normal));
  const grants = [...d.onlyInMigrations.map((f) => f.remove), ...d.onlyInSchemas.map((f) => f.add)]
    .filter((statement): statement is string => statement !== undefined && !carried.has(normal(statement)));
  const parts = [...d.statements];
  if (grants.length > 0) {
    parts.push(
      `-- Role memberships and settings, which pg-delta does not carry (local/schema-diff.ts).\n${grants.join("\n")}`,
    );
  }
  return { sql: parts.join("\n\n") + "\n", refused };
}

/** The two databases, built at once: one from the migrations, one from the schema files. */
export async function buildPair(
  dir: string,
  schemas?: URL[],
): Promise<{ migrations: Cluster; schemas: Cluster; stop(): Promise<void> }> {
  const [migrationsCluster, schemasCluster] = await Promise.all([
    startCluster(`${dir}/migrations`),
    startCluster(`${dir}/schemas`),
  ]);
  const stop = async () => {
    await Promise.all([migrationsCluster.stop(), schemasCluster.stop()]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  // Both to the end before anything stops: a cluster stopped under the other build would fail it, uncaught.
  const built = await Promise.allSettled([
    migrate(migrationsCluster.url, { seed: false }),
    applySchemas(schemasCluster.url, schemas),
  ]);
  const failed = built.find((result) => result.status === "rejected");
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { migrations: migrationsCluster, schemas: schemasCluster, stop };
}

/** The next migration's version: now (UTC), and always after the last one. */
function nextVersion(dir: URL): string {
  const now = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const versions = [...Deno.readDirSync(dir)].map((e) => /^(\d{14})_/.exec(e.name)?.[1]).filter(Boolean) as string[];
  const last = versions.sort().at(-1);
  if (!last || now > last) return now;
  const next = new Date(
    Date.UTC(+last.slice(0, 4), +last.slice(4, 6) - 1, +last.slice(6, 8), +last.slice(8, 10), +last.slice(10, 12)) +
      (+last.slice(12, 14) + 1) * 1000,
  );
  return next.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

const HEADER = (name: string) =>
  `-- ${name}: generated by \`npm run db:diff -- ${name}\` from supabase/schemas/ (never edited by hand).\n\n`;

async function main(): Promise<number> {
  const name = Deno.args[0];
  if (!name || !/^[a-z0-9][a-z0-9_]*$/.test(name)) {
    console.error("usage: npm run db:diff -- <name>   (the migration's name: lower-case letters, digits, _)");
    return 2;
  }
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
  const migrationsDir = new URL("supabase/migrations/", projectRoot);
  await Deno.mkdir(migrationsDir, { recursive: true });
  let pair: Awaited<ReturnType<typeof buildPair>>;
  try {
    pair = await buildPair(new URL(`.test-stack/db-diff-${Deno.pid}`, projectRoot).pathname);
  } catch (error) {
    console.error(`db:diff: ${(error as Error).message}`);
    return 1;
  }
  try {
    const before = await drift(pair.migrations.url, pair.schemas.url);
    if (isEmpty(before)) {
      console.log(`db:diff: the migrations already give supabase/schemas/; nothing written (${seconds()} s)`);
      return 0;
    }
    const { sql, refused } = migrationFor(before);
    if (refused.length > 0) {
      for (const line of refused) console.error(`db:diff: cannot generate: ${line}`);
      return 1;
    }
    const file = new URL(`${nextVersion(migrationsDir)}_${name}.sql`, migrationsDir);
    await Deno.writeTextFile(file, HEADER(name) + sql);
    const setAside = async (why: string) => {
      const kept = new URL(`.test-stack/db-diff/${file.pathname.split("/").pop()}`, projectRoot);
      await Deno.mkdir(new URL(".", kept), { recursive: true });
      await Deno.rename(file, kept);
      console.error(`db:diff: ${why}; the generated migration is moved to ${relative(kept)} to be read`);
    };
    try {
      await migrate(pair.migrations.url, { seed: false });
    } catch (error) {
      await setAside(`the generated migration does not apply: ${(error as Error).message}`);
      return 1;
    }
    const after = await drift(pair.migrations.url, pair.schemas.url);
    if (!isEmpty(after)) {
      for (const line of describeDrift(after)) console.error(`db:diff: still differs: ${line}`);
      await setAside("after the generated migration the databases still differ");
      return 1;
    }
    const count = before.statements.length + before.onlyInSchemas.length + before.onlyInMigrations.length;
    console.log(`db:diff: wrote ${relative(file)} (${count} statements); applied, nothing differs (${seconds()} s)`);
    return 0;
  } finally {
    await pair.stop();
  }
}

if (import.meta.main) Deno.exit(await main());

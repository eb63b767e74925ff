// The local database: embedded Postgres 17 (or an existing server named by
// DATABASE_URL), the Supabase platform objects of sql/local/, the migrations
// with the Supabase CLI's bookkeeping, the buckets of supabase/config.toml,
// and the seed. Every step is idempotent: applying twice changes nothing.
import postgres from "postgres";
import { parse as parseToml } from "smol-toml";
import { projectRoot } from "./config.ts";
import { installExtensions } from "./install-extensions.ts";
import { initCluster, releaseBinaries, startPostgres } from "./postgres.ts";

export interface Database {
  url: string;
  /** Stops the embedded server; a no-op for an external DATABASE_URL. */
  stop(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  port: number;
  reset: boolean;
  externalUrl?: string;
  log?: (line: string) => void;
}

/** The Postgres cluster under DATA_DIR, as an absolute path (so that `ps` names it wherever the stack started). */
export function clusterDir(dataDir: string): string {
  return `${dataDir.startsWith("/") ? dataDir : `${Deno.cwd()}/${dataDir}`}/postgres`;
}

/** Embedded servers of this process still running: a copy of the binaries goes with the last one. */
let running = 0;

export async function startDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.externalUrl) return { url: options.externalUrl, stop: async () => {} };

  const databaseDir = clusterDir(options.dataDir);
  if (options.reset) await Deno.remove(databaseDir, { recursive: true }).catch(() => {});
  await installExtensions(); // pg_cron, pg_net and supabase_vault stand-ins (local/extensions/)
  await Deno.mkdir(options.dataDir, { recursive: true });
  await initCluster(databaseDir);
  const server = await startPostgres({ dir: databaseDir, port: options.port, log: options.log });
  running++;
  let stopped: Promise<void> | undefined;
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${options.port}/postgres`,
    stop: () =>
      stopped ??= (async () => {
        await server.stop();
        if (--running === 0) await releaseBinaries();
      })(),
  };
}

async function sqlFiles(dir: URL): Promise<{ name: string; url: URL }[]> {
  const files: { name: string; url: URL }[] = [];
  if (!(await Deno.stat(dir).catch(() => null))) return files; // no migrations yet
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".sql")) files.push({ name: entry.name, url: new URL(entry.name, dir) });
  }
  return files.sort((a, b) => a.name.localeCompare(b.name));
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** sql/local/: what a Supabase project has and plain Postgres lacks (idempotent). */
export async function applyPlatform(sql: postgres.Sql): Promise<void> {
  for (const file of await sqlFiles(new URL("sql/local/", projectRoot))) {
    await sql.unsafe(await Deno.readTextFile(file.url));
  }
}

/** "5MiB", "500KB", "1GB" or a number of bytes, as the Supabase CLI reads sizes (units of 1024). */
export function sizeInBytes(size: string | number): number {
  if (typeof size === "number") return size;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(size);
  if (!match) throw new Error(`supabase/config.toml: not a size: ${size}`);
  const power = ["", "k", "m", "g", "t"].indexOf(match[2].toLowerCase());
  return Math.round(Number(match[1]) * 1024 ** power);
}

interface BucketConfig {
  public?: boolean;
  file_size_limit?: string | number;
  allowed_mime_types?: string[];
}

/**
 * The buckets of supabase/config.toml ([storage.buckets.<id>]), created or brought to their settings, as
 * `supabase start`, `supabase db reset` and `supabase seed buckets` do. A bucket is data, which a schema
 * diff does not carry: config.toml is its one home (supabase/schemas/09_proof.sql says so).
 */
export async function seedBuckets(sql: postgres.Sql): Promise<string[]> {
  const config = parseToml(await Deno.readTextFile(new URL("supabase/config.toml", projectRoot))) as {
    storage?: { enabled?: boolean; buckets?: Record<string, BucketConfig> };
  };
  if (config.storage?.enabled === false) return [];
  const buckets = Object.entries(config.storage?.buckets ?? {});
  for (const [id, bucket] of buckets) {
    const limit = bucket.file_size_limit === undefined ? null : sizeInBytes(bucket.file_size_limit);
    await sql`insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
              values (${id}, ${id}, ${bucket.public ?? false}, ${limit}, ${bucket.allowed_mime_types ?? null})
              on conflict (id) do update set public = excluded.public, file_size_limit = excluded.file_size_limit,
                allowed_mime_types = excluded.allowed_mime_types`;
  }
  return buckets.map(([id]) => id);
}

export interface MigrateResult {
  applied: string[];
  seeded: boolean;
}

/** sql/local/, then pending migrations in order, then config.toml's buckets, then the seed once. */
export async function migrate(url: string, options: { seed: boolean }): Promise<MigrateResult> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await applyPlatform(sql);
    const done = new Set(
      (await sql<{ version: string }[]>`select version from supabase_migrations.schema_migrations`).map((r) =>
        r.version
      ),
    );
    const applied: string[] = [];
    for (const file of await sqlFiles(new URL("supabase/migrations/", projectRoot))) {
      const match = /^(\d+)_(.+)\.sql$/.exec(file.name);
      if (!match) throw new Error(`supabase/migrations/${file.name}: name must be <timestamp>_<name>.sql`);
      const [, version, name] = match;
      if (done.has(version)) continue;
      const text = await Deno.readTextFile(file.url);
      await sql.begin(async (tx) => {
        await tx.unsafe(text);
        await tx`insert into supabase_migrations.schema_migrations (version, name, statements)
                 values (${version}, ${name}, ${[text]})`;
      });
      applied.push(file.name);
    }
    await seedBuckets(sql);
    let seeded = false;
    if (options.seed) {
      const seedUrl = new URL("supabase/seed.sql", projectRoot);
      const text = await Deno.readTextFile(seedUrl).catch(() => "");
      const [row] = await sql`select 1 from supabase_migrations.seed_files where path = 'supabase/seed.sql'`;
      if (text && !row) {
        await sql.begin(async (tx) => {
          await tx.unsafe(text);
          await tx`insert into supabase_migrations.seed_files (path, hash) values ('supabase/seed.sql', ${await sha256(
            text,
          )})`;
        });
        seeded = true;
      }
    }
    return { applied, seeded };
  } finally {
    await sql.end();
  }
}

// The local database: embedded Postgres 17 (or an existing server named by
// DATABASE_URL), the Supabase platform objects of sql/local/, the migrations
// with the Supabase CLI's bookkeeping, and the seed. Every step is idempotent:
// applying twice changes nothing.
import postgres from "postgres";
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

export async function startDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.externalUrl) return { url: options.externalUrl, stop: async () => {} };

  const databaseDir = clusterDir(options.dataDir);
  if (options.reset) await Deno.remove(databaseDir, { recursive: true }).catch(() => {});
  await installExtensions(); // pg_cron, pg_net and supabase_vault stand-ins (local/extensions/)
  await Deno.mkdir(options.dataDir, { recursive: true });
  await initCluster(databaseDir);
  const server = await startPostgres({ dir: databaseDir, port: options.port, log: options.log });
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${options.port}/postgres`,
    stop: async () => {
      await server.stop();
      await releaseBinaries();
    },
  };
}

async function sqlFiles(dir: URL): Promise<{ name: string; url: URL }[]> {
  const files: { name: string; url: URL }[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".sql")) files.push({ name: entry.name, url: new URL(entry.name, dir) });
  }
  return files.sort((a, b) => a.name.localeCompare(b.name));
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface MigrateResult {
  applied: string[];
  seeded: boolean;
}

/** sql/local/, then pending migrations in order, then the seed once. */
export async function migrate(url: string, options: { seed: boolean }): Promise<MigrateResult> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const file of await sqlFiles(new URL("sql/local/", projectRoot))) {
      await sql.unsafe(await Deno.readTextFile(file.url));
    }
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

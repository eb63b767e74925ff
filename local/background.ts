// What a hosted Supabase project runs beside Postgres and the local stack
// runs itself: pg_cron's scheduler (local/scheduler.ts) and pg_net's worker
// (local/net-worker.ts), for the stand-in extensions of local/extensions/.
// With DATABASE_URL naming a server with the real extensions (`supabase
// start`), their own workers run the jobs and these stay off. At every start
// the Vault secrets the scheduled jobs read are stored (created or updated):
// project_url (the API URL) and service_role_key.
import postgres from "postgres";
import { startNetWorker } from "./net-worker.ts";
import { startScheduler } from "./scheduler.ts";

export interface BackgroundOptions {
  url: string;
  secrets: Record<string, string>;
  log: (line: string) => void;
}

export interface Background {
  stop(): Promise<void>;
}

const STAND_IN = "local stand-in";

/** Creates or updates each secret; false when the database has no Vault. */
export async function storeVaultSecrets(sql: postgres.Sql, secrets: Record<string, string>): Promise<boolean> {
  const [vault] = await sql`select 1 from pg_extension where extname = 'supabase_vault'`;
  if (!vault) return false;
  for (const [name, value] of Object.entries(secrets)) {
    const [row] = await sql<{ id: string }[]>`select id from vault.secrets where name = ${name}`;
    if (row) await sql`select vault.update_secret(${row.id}::uuid, ${value})`;
    else await sql`select vault.create_secret(${value}, ${name}, 'stored by the local stack at start-up')`;
  }
  return true;
}

export async function startBackground(options: BackgroundOptions): Promise<Background> {
  const sql = postgres(options.url, { max: 1, onnotice: () => {} });
  let standIns: string[] = [];
  try {
    if (!(await storeVaultSecrets(sql, options.secrets))) {
      options.log("No Vault in this database (extension supabase_vault): the scheduled jobs' secrets are not stored.");
    }
    standIns = (await sql<{ name: string }[]>`
      select name from pg_available_extensions where name in ('pg_cron', 'pg_net') and comment like ${`%${STAND_IN}%`}`)
      .map((r) => r.name);
  } finally {
    await sql.end({ timeout: 1 });
  }
  const scheduler = standIns.includes("pg_cron") ? startScheduler({ url: options.url, log: options.log }) : undefined;
  const netWorker = standIns.includes("pg_net") ? startNetWorker({ url: options.url, log: options.log }) : undefined;
  return {
    async stop() {
      await Promise.all([scheduler?.stop(), netWorker?.stop()]);
    },
  };
}

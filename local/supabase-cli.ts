// The Supabase CLI's database commands against the local database, with what
// each needs that a Supabase database has and this machine may lack:
//
//   npm run db:lint [-- flags]           supabase db lint (plpgsql_check, local/plpgsql-check.ts)
//   npm run db:inspect -- <command>      supabase inspect db <command> (pg_stat_statements, sql/local/70_cli.sql)
//   npm run db:test:cli [-- files...]    supabase test db (pgTAP and pg_prove; Docker, or local/docker.ts)
//
// The database is DATABASE_URL, else the local stack's on DB_PORT (54322 by
// default). Its host is given to the CLI as `localhost`: the CLI takes
// 127.0.0.1 on its config's [db] port for the database of `supabase start`,
// and would look for it on its Docker network.
//
// `supabase test db` runs pg_prove in a container. With a Docker daemon
// (DOCKER_HOST, or /var/run/docker.sock) the CLI uses it; without one, it is
// given the stand-in of local/docker.ts, which runs pg_prove natively. pgTAP is
// created before the CLI runs, with execute on its functions granted to
// everyone (as `npm run test:db` does: our migrations revoke PUBLIC's default
// execute right, and the tests call pgTAP as other roles), and dropped after
// when it was not there before, as the CLI itself would.
import postgres from "postgres";
import { projectRoot } from "./config.ts";
import { startDockerStandIn } from "./docker.ts";
import { provisionPgProve, provisionPgTap } from "./pgtap.ts";
import { installPlpgsqlCheck } from "./plpgsql-check.ts";

function databaseUrl(): string {
  const url = new URL(
    Deno.env.get("DATABASE_URL") ??
      `postgresql://postgres:postgres@127.0.0.1:${Deno.env.get("DB_PORT") ?? 54322}/postgres`,
  );
  if (url.hostname === "127.0.0.1") url.hostname = "localhost";
  return url.href;
}

async function supabase(args: string[], env: Record<string, string> = {}): Promise<number> {
  const status = await new Deno.Command("npx", {
    args: ["--no-install", "supabase", ...args],
    cwd: new URL(".", projectRoot),
    env,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return status.code;
}

async function dockerRuns(): Promise<boolean> {
  if (Deno.env.get("DOCKER_HOST")) return true;
  try {
    await Deno.stat("/var/run/docker.sock");
    return true;
  } catch {
    return false;
  }
}

/** pgTAP in `extensions`, callable by every role; whether it was already there. */
async function preparePgTap(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [{ present }] = await sql`select exists (select from pg_extension where extname = 'pgtap') as present`;
    await sql`create extension if not exists pgtap with schema extensions`;
    await sql.unsafe(`do $$
      declare f regprocedure;
      begin
        for f in select p.oid::regprocedure from pg_proc p
                   join pg_depend d on d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'
                   join pg_extension e on e.oid = d.refobjid and e.extname = 'pgtap' loop
          execute format('grant execute on function %s to public', f);
        end loop;
      end $$`);
    return present;
  } finally {
    await sql.end();
  }
}

async function dropPgTap(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`drop extension if exists pgtap`;
  } finally {
    await sql.end();
  }
}

const [command, ...args] = Deno.args;
const url = databaseUrl();
let code: number;
switch (command) {
  case "lint":
    await installPlpgsqlCheck();
    code = await supabase(["db", "lint", "--db-url", url, ...args]);
    break;
  case "inspect":
    code = await supabase(["inspect", "db", ...args, "--db-url", url]);
    break;
  case "test": {
    await provisionPgTap();
    const docker = await dockerRuns() ? null : await startDockerStandIn();
    if (docker) await provisionPgProve();
    const present = await preparePgTap(url);
    try {
      const files = args.map((f) => new URL(f, `file://${Deno.cwd()}/`).pathname);
      code = await supabase(
        ["test", "db", "--yes", "--db-url", url, ...files],
        docker ? { DOCKER_HOST: docker.host } : {},
      );
    } finally {
      if (!present) await dropPgTap(url);
      await docker?.close();
    }
    break;
  }
  default:
    console.error("usage: supabase-cli.ts lint|inspect|test [arguments]");
    code = 2;
}
Deno.exit(code);

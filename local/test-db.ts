// `supabase test db` for the local stack: a fresh embedded Postgres with
// sql/local, the migrations and pgTAP, then every supabase/tests/database/*.sql
// file in name order with its TAP output, then `supabase db advisors`.
// Exits non-zero on any failed or missing assertion, any error, any warning.
import postgres from "postgres";
import { projectRoot } from "./config.ts";
import { migrate, startDatabase } from "./database.ts";
import { provisionPgTap } from "./pgtap.ts";

const dataDir = Deno.env.get("TEST_DATA_DIR") ?? ".test-stack/pgtap";
const port = Number(Deno.env.get("TEST_DB_PORT") ?? 54329);

interface FileResult {
  name: string;
  planned: number;
  passed: number;
  failed: number;
  error?: string;
}

async function runFile(sql: postgres.Sql, name: string, text: string): Promise<FileResult> {
  const result: FileResult = { name, planned: 0, passed: 0, failed: 0 };
  const lines: string[] = [];
  try {
    // One simple-protocol round trip, like psql -f: every statement's rows come back in order.
    const sets = await sql.unsafe(text).simple();
    for (
      const set of (Array.isArray(sets[0]) || sets.length === 0 ? sets : [sets]) as unknown as Record<
        string,
        unknown
      >[][]
    ) {
      for (const row of set ?? []) {
        for (const value of Object.values(row)) if (typeof value === "string") lines.push(...value.split("\n"));
      }
    }
  } catch (error) {
    // The whole file is one query: point at the line the error came from.
    const position = Number((error as { position?: string }).position);
    const line = position > 0 ? `line ${text.slice(0, position).split("\n").length}: ` : "";
    result.error = `${line}${error instanceof Error ? error.message : String(error)}`;
  }
  for (const line of lines) {
    const plan = /^1\.\.(\d+)/.exec(line);
    if (plan) result.planned = Number(plan[1]);
    if (/^ok \d+/.test(line)) result.passed++;
    if (/^not ok \d+/.test(line)) result.failed++;
    if (line) console.log(`  ${line}`);
  }
  if (result.error) console.log(`  error: ${result.error}`);
  return result;
}

/** `supabase gen types` for the migrated schema, as apps get it; the committed copy must equal it. */
const TYPES_FILE = new URL("functions/_shared/database.types.ts", projectRoot);

/** TypeScript as `deno fmt` writes it (the committed file is formatted like the rest of the tree). */
async function formatted(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "ts", "-"],
    stdin: "piped",
    stdout: "piped",
  })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const output = await child.output();
  if (!output.success) throw new Error("deno fmt could not format the generated types");
  return new TextDecoder().decode(output.stdout);
}

async function typesAreCurrent(url: string): Promise<boolean> {
  const output = await new Deno.Command("npx", {
    args: ["--no-install", "supabase", "gen", "types", "typescript", `--db-url=${url}`, "--schema", "public"],
    cwd: new URL(".", projectRoot),
    stderr: "piped",
  }).output();
  if (!output.success) {
    console.log(`  supabase gen types failed: ${new TextDecoder().decode(output.stderr).trim()}`);
    return false;
  }
  // The CLI prints its notices (say, about TLS) on stdout too: the file starts at its first export.
  const printed = new TextDecoder().decode(output.stdout);
  const generated = await formatted(printed.slice(Math.max(printed.indexOf("export type"), 0)));
  const committed = await Deno.readTextFile(TYPES_FILE).catch(() => "");
  if (generated === committed) return true;
  const fresh = new URL(".test-stack/database.types.ts", projectRoot);
  await Deno.writeTextFile(fresh, generated);
  console.log(
    `  functions/_shared/database.types.ts differs from the migrations: the generated file is ${fresh.pathname};`,
  );
  console.log("  copy it over (or run `npm run db:types`) and commit it");
  return false;
}

async function advisors(url: string): Promise<boolean> {
  const command = new Deno.Command("npx", {
    args: [
      "--no-install",
      "supabase",
      "db",
      "advisors",
      `--remote=${url}`,
      "--type",
      "all",
      "--level",
      "warn",
      "--fail-on",
      "warn",
    ],
    cwd: new URL(".", projectRoot),
  });
  const output = await command.output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  console.log(text.trim().split("\n").map((l) => `  ${l}`).join("\n"));
  return output.success;
}

await provisionPgTap();
const database = await startDatabase({ dataDir, port, reset: true });
let ok = true;
try {
  await migrate(database.url, { seed: false });
  // The advisors judge the migrated schema, before the test helpers add theirs.
  console.log("# supabase gen types (functions/_shared/database.types.ts is current)");
  if (!(await typesAreCurrent(database.url))) {
    ok = false;
    console.log("FAIL functions/_shared/database.types.ts is out of date");
  }
  console.log("# supabase db advisors");
  if (!(await advisors(database.url))) {
    ok = false;
    console.log("FAIL supabase db advisors reported warnings");
  }
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  await sql`create extension if not exists pgtap with schema extensions`;
  // The migrations take PUBLIC's default execute right away; pgTAP's assertions are for everyone.
  await sql`grant execute on all functions in schema extensions to public`;
  await sql`alter database postgres set search_path = "$user", public, extensions`;
  await sql.end();

  const dir = new URL("supabase/tests/database/", projectRoot);
  const files = [...Deno.readDirSync(dir)].filter((e) => e.isFile && e.name.endsWith(".sql")).map((e) => e.name).sort();
  const results: FileResult[] = [];
  for (const name of files) {
    console.log(`# ${name}`);
    const fileSql = postgres(database.url, { max: 1, onnotice: () => {} });
    results.push(await runFile(fileSql, name, await Deno.readTextFile(new URL(name, dir))));
    await fileSql.end();
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  for (const r of results) {
    const bad = r.failed > 0 || r.error || r.planned !== r.passed + r.failed;
    if (bad) {
      ok = false;
      console.log(
        `FAIL ${r.name}: planned ${r.planned}, passed ${r.passed}, failed ${r.failed}${
          r.error ? `, error: ${r.error}` : ""
        }`,
      );
    }
  }
  console.log(`${files.length} pgTAP files`);
  console.log(`pgTAP: ${passed} passed, ${failed} failed`);
} finally {
  await database.stop();
}
Deno.exit(ok ? 0 : 1);

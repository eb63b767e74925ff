// `supabase test db` for the local stack, and the schema's own checks:
// - every function and comment written once in supabase/schemas/ (local/schema-files.ts);
// - a fresh embedded Postgres with sql/local and the migrations, and beside it
//   one built from supabase/schemas/: they must not differ (drift: local/schema-diff.ts);
// - functions/_shared/database.types.ts is what `supabase gen types` makes of it;
// - `supabase db advisors`, then every supabase/tests/database/*.sql file in
//   name order with its TAP output;
// - local/schema-drift.test.ts: the drift check catches a drifted copy.
// Exits non-zero on any failed or missing assertion, any error, any warning, any drift.
import postgres from "postgres";
import { projectRoot } from "./config.ts";
import { migrate, startDatabase } from "./database.ts";
import { applySchemas, describeDrift, drift, isEmpty, startCluster } from "./schema-diff.ts";
import { describeProblem, onceOnly, relative, schemaFiles } from "./schema-files.ts";
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

/** Each function and comment once across the schema files. */
async function writtenOnce(): Promise<boolean> {
  const files = await Promise.all(
    (await schemaFiles()).map(async (url) => ({ file: relative(url), sql: await Deno.readTextFile(url) })),
  );
  const problems = onceOnly(files);
  for (const problem of problems) console.log(`  ${describeProblem(problem)}`);
  if (problems.length === 0) console.log(`  ${files.length} schema files, each function and comment written once`);
  return problems.length === 0;
}

/** The migrations' database against one built from the schema files: nothing may differ. */
async function noDrift(migrationsUrl: string, schemasUrl: string): Promise<boolean> {
  const started = performance.now();
  const found = await drift(migrationsUrl, schemasUrl);
  const took = `${((performance.now() - started) / 1000).toFixed(1)} s`;
  if (isEmpty(found)) {
    console.log(`  supabase/migrations give exactly supabase/schemas (pg-delta and the catalog facts, ${took})`);
    return true;
  }
  for (const line of describeDrift(found)) console.log(`  ${line}`);
  console.log("  supabase/migrations do not give supabase/schemas: edit the schema file, then run");
  console.log("  `npm run db:diff -- <name>` to generate the migration (never edit a migration by hand)");
  return false;
}

/** Runs local/schema-drift.test.ts (Postgres clusters of its own, on free ports): its output, and whether it passed. */
async function selfTest(): Promise<{ text: string; success: boolean }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", "local/schema-drift.test.ts"],
    cwd: projectRoot,
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { text: text.trim().split("\n").map((l) => `  ${l}`).join("\n"), success: output.success };
}

await provisionPgTap();
// The drift check on drifted copies needs nothing of what follows: it runs meanwhile, and is reported last.
const selfTested = selfTest();
let ok = true;
console.log("# supabase/schemas: each function written once");
if (!(await writtenOnce())) {
  ok = false;
  console.log("FAIL a function or a comment is written more than once in supabase/schemas/");
}
const [database, schemasDatabase] = await Promise.all([
  startDatabase({ dataDir, port, reset: true }),
  startCluster(`${dataDir}-schemas`),
]);
try {
  // Both to the end, each failure named: a schema file that does not apply is drift too.
  const built = await Promise.allSettled([migrate(database.url, { seed: false }), applySchemas(schemasDatabase.url)]);
  for (const result of built) if (result.status === "rejected") throw result.reason;
  console.log("# schema drift: supabase/migrations against supabase/schemas");
  const driftless = await noDrift(database.url, schemasDatabase.url).finally(() => schemasDatabase.stop());
  if (!driftless) {
    ok = false;
    console.log("FAIL the migrations and the schema files differ");
  }
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
  await schemasDatabase.stop();
}
console.log("# the drift check on drifted copies (local/schema-drift.test.ts)");
const self = await selfTested;
console.log(self.text);
if (!self.success) {
  ok = false;
  console.log("FAIL local/schema-drift.test.ts");
}
Deno.exit(ok ? 0 : 1);

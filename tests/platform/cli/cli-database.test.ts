// The Supabase CLI's database commands against the local stack's database,
// through the npm scripts that give them what this machine lacks
// (local/supabase-cli.ts): `supabase db lint` with plpgsql_check, `supabase
// inspect db` over extensions.pg_stat_statements, and `supabase test db`
// running our pgTAP with pg_prove (in Docker, or the local stand-in of
// Docker's API). Each is shown to fail when it should, too.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { db, stack } from "../../support/api.ts";
import { projectRoot } from "../../support/stack.ts";

interface Run {
  code: number;
  output: string;
}

function cli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      "npx",
      ["--no-install", "deno", "run", "-A", "local/supabase-cli.ts", ...args],
      { cwd: projectRoot, env: { ...process.env, DATABASE_URL: stack().dbUrl }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

const scratch = mkdtempSync(join(tmpdir(), "cli-database-"));

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await db().unsafe("drop schema if exists lint_probe cascade");
});

describe("supabase db lint", () => {
  it("checks our functions with plpgsql_check, and fails on a function that cannot run", async () => {
    const clean = await cli("lint", "--schema", "public", "--schema", "private", "--fail-on", "error");
    expect(clean.output).toContain("Linting schema: private");
    expect(clean.code).toBe(0);
    await db().unsafe(`
      create schema lint_probe;
      create function lint_probe.broken() returns int language plpgsql
        as $$ begin return (select count(*) from lint_probe.missing_table); end $$;`);
    const broken = await cli("lint", "--schema", "lint_probe", "--fail-on", "error");
    expect(broken.code).not.toBe(0);
    expect(broken.output).toContain('"function": "lint_probe.broken"');
    expect(broken.output).toContain('relation \\"lint_probe.missing_table\\" does not exist');
  });
});

describe("supabase inspect db", () => {
  it("reads query statistics from extensions.pg_stat_statements", async () => {
    // Statistics show the statement's text with its constants replaced: the alias marks it. Reset first, so that
    // the slowest statements of the tests before (a lock waited for, a budget run out) do not crowd it out of the top.
    await db().unsafe("select extensions.pg_stat_statements_reset()");
    await db().unsafe("select pg_sleep(0.5) as inspect_probe");
    const outliers = await cli("inspect", "outliers");
    expect(outliers.code).toBe(0);
    expect(outliers.output).toContain("inspect_probe");
    const stats = await cli("inspect", "table-stats");
    expect(stats.code).toBe(0);
    expect(stats.output).toContain("deliveries");
  });
});

describe("supabase test db", () => {
  it("runs our pgTAP files with pg_prove, and fails when an assertion fails", async () => {
    // Every file, against the running stack (whose Vault already holds the secrets 500-notifications uses).
    const files = readdirSync(join(projectRoot, "supabase/tests/database")).filter((f) => f.endsWith(".test.sql"))
      .sort()
      .map((f) => `supabase/tests/database/${f}`);
    expect(files.length).toBeGreaterThan(30);
    const passing = await cli("test", ...files);
    for (const file of files.slice(1)) {
      expect(passing.output, file).toMatch(new RegExp(`${file.split("/").pop()!.replaceAll(".", "\\.")} \\.+ ok`));
    }
    expect(passing.output).toContain("Result: PASS");
    expect(passing.code).toBe(0);

    const failing = join(scratch, "failing.test.sql");
    writeFileSync(
      failing,
      "begin; select plan(1); select ok(false, 'meant to fail'); select * from finish(); rollback;\n",
    );
    const failed = await cli("test", failing);
    expect(failed.output).toContain("Result: FAIL");
    expect(failed.code).not.toBe(0);
    // pgTAP was there for the run only, as the CLI leaves it.
    expect(await db()`select extname from pg_extension where extname = 'pgtap'`).toEqual([]);
  }, 600_000);
});

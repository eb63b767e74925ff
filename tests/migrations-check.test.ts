// The migration check (local/check-migrations.ts, run by `npm run check`): a
// function is defined in one migration only, unless a later migration's first
// line says it redefines it and why. Runs the script on temporary directories.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const dirs: string[] = [];

/** A directory holding these migrations (file name -> SQL). */
function migrations(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "migrations-check-"));
  dirs.push(dir);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

function runCheck(dir: string): { status: number | null; output: string } {
  const result = spawnSync(resolve(root, "node_modules/.bin/deno"), [
    "run",
    "--allow-read",
    "local/check-migrations.ts",
    dir,
  ], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

const money = `-- Money.
create function public.apply_transfer_event(company_id uuid, event text) returns jsonb
language sql as $$ select '{}'::jsonb $$;
create function private.try_uuid(value text) returns uuid language sql as $$ select null::uuid $$;
`;

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the migration check", () => {
  it("fails naming both files and the function when two migrations define the same function", () => {
    const dir = migrations({
      "20260101000100_money.sql": money,
      "20260101000200_fix.sql": `-- A follow-up that restates a body.
CREATE OR REPLACE FUNCTION "public"."Apply_Transfer_Event"(company_id uuid, event text) returns jsonb
language sql as $$ select '{"fixed": true}'::jsonb $$;
`,
    });
    const { status, output } = runCheck(dir);
    expect(status).toBe(1);
    expect(output).toContain("public.apply_transfer_event");
    expect(output).toContain("20260101000100_money.sql");
    expect(output).toContain("20260101000200_fix.sql");
    expect(output).not.toContain("private.try_uuid");
  });

  it("counts dropping and recreating a function in a later migration as redefining it", () => {
    const dir = migrations({
      "20260101000100_money.sql": money,
      "20260101000200_fix.sql": `-- A new signature.
drop function private.try_uuid(text);
create function private.try_uuid(value text, fallback uuid) returns uuid language sql as $$ select fallback $$;
`,
    });
    const { status, output } = runCheck(dir);
    expect(status).toBe(1);
    expect(output).toContain("private.try_uuid");
    expect(output).toContain("20260101000200_fix.sql");
  });

  it("fails when one migration defines the same function twice, but allows overloads", () => {
    const overloads = migrations({
      "20260101000100_money.sql": `${money}
create function private.try_uuid(value text, fallback uuid) returns uuid language sql as $$ select fallback $$;
`,
    });
    expect(runCheck(overloads).status).toBe(0);
    const twice = migrations({
      "20260101000100_money.sql": `${money}
create or replace function private.try_uuid(input text) returns uuid language sql as $$ select null::uuid $$;
`,
    });
    const { status, output } = runCheck(twice);
    expect(status).toBe(1);
    expect(output).toContain("private.try_uuid is defined twice in 20260101000100_money.sql");
  });

  it("passes when the later migration's first line says it redefines the function and why", () => {
    const dir = migrations({
      "20260101000100_money.sql": money,
      "20260101000200_fix.sql":
        `-- Redefines public.apply_transfer_event: a TRANSFER_DONE after a give-up must still debit
create or replace function public.apply_transfer_event(company_id uuid, event text) returns jsonb
language sql as $$ select '{"fixed": true}'::jsonb $$;
`,
    });
    const { status, output } = runCheck(dir);
    expect(output).not.toContain("defined in");
    expect(status).toBe(0);
  });

  it("passes a set in which every function is defined once", () => {
    const dir = migrations({
      "20260101000100_money.sql": money,
      "20260101000200_locations.sql": `-- Locations; the body mentions create function only inside strings and comments.
-- create function public.apply_transfer_event(company_id uuid, event text)
create function public.update_my_location(lat double precision, lng double precision) returns void
language plpgsql as $$
begin
  raise notice 'create function public.apply_transfer_event()';
end;
$$;
`,
    });
    const { status, output } = runCheck(dir);
    expect(output).toContain("every function defined once");
    expect(status).toBe(0);
  });
});

// The platform stands on its own (issue 30, docs/architecture.md "The boundary"): no module of local/ imports the
// product (functions/), and common/, the code both use, imports neither. The local stack serves the functions by
// loading their entrypoints from supabase/config.toml at run time (local/server.ts), not by importing them. The
// simulators keep their own fixtures: the WhatsApp simulator's approved templates are its own file, and every
// template the product sends must be approved there, as at Meta, with the same body.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_TEMPLATES } from "../../../functions/notifications/messages.ts";
import { APPROVED_TEMPLATES } from "../../../local/simulators/whatsapp.ts";

const root = resolve(import.meta.dirname, "../../..");

/** Static and dynamic imports and re-exports with a literal specifier. */
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Each import of `source` (a file's text at `file`, relative to the root) that resolves into one of `forbidden`. */
function crossings(file: string, source: string, forbidden: string[]): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(SPECIFIER)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (!specifier.startsWith(".") && !specifier.startsWith("/")) continue;
    const target = relative(root, resolve(root, dirname(file), specifier));
    if (forbidden.some((folder) => target === folder || target.startsWith(`${folder}/`))) {
      found.push(`${file} imports ${specifier}`);
    }
  }
  return found;
}

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx|mts|mjs|js)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

const crossingsOf = (folder: string, forbidden: string[]) =>
  sources(folder).flatMap((file) => crossings(file, readFileSync(join(root, file), "utf8"), forbidden));

describe("the platform's boundary", () => {
  it("finds an import across it, whichever way it is written", () => {
    const file = "local/rest/x.ts";
    expect(crossings(file, 'import { a } from "../../functions/_shared/errors.ts";', ["functions"])).toHaveLength(1);
    expect(crossings(file, 'export * from "../../functions/_shared/jwt.ts";', ["functions"])).toHaveLength(1);
    expect(crossings(file, 'import type {\n  Claims,\n} from "../../functions/_shared/jwt.ts";', ["functions"]))
      .toHaveLength(1);
    expect(crossings(file, 'const m = await import("../../functions/api/index.ts");', ["functions"])).toHaveLength(1);
    expect(crossings(file, 'import "../../functions/api/index.ts";', ["functions"])).toHaveLength(1);
    expect(crossings(file, 'import { b } from "../../common/jwt.ts";', ["functions"])).toEqual([]);
    expect(crossings(file, 'import { Hono } from "hono";', ["functions"])).toEqual([]);
  });

  it("local/ imports nothing of functions/", () => {
    expect(crossingsOf("local", ["functions"])).toEqual([]);
  });

  it("common/ imports neither functions/ nor local/", () => {
    expect(crossingsOf("common", ["functions", "local"])).toEqual([]);
  });

  it("the WhatsApp simulator approves every template the product sends, with its body, in pt_BR", () => {
    for (const template of ALL_TEMPLATES) {
      expect(APPROVED_TEMPLATES, template.name).toContainEqual({
        name: template.name,
        language: "pt_BR",
        body: template.body,
      });
    }
  });
});

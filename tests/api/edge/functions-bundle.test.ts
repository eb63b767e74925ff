// Each Edge Function builds the way `supabase functions deploy` bundles it. The
// CLI sees only what supabase/config.toml names: the entrypoint, the files its
// relative imports reach, and the import map (functions/<name>/deno.json,
// beside the entrypoint, so the bundler discovers it as the function's Deno
// config). It sets DENO_NO_PACKAGE_JSON=1 and neither the repository's
// package.json nor its node_modules reach the bundle, so every bare import
// must be an npm: specifier of that import map. Here each function's folder,
// functions/_shared and common/ (the code the local platform uses too) are
// copied alone into a temporary directory, then
// type-checked and loaded by Deno with that import map and nothing else; the
// npm packages come from the npm registry into a cache under .test-stack/.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

const root = resolve(import.meta.dirname, "../../..");
const supabaseDir = join(root, "supabase");
const deno = join(root, "node_modules/.bin/deno");
/** Deno's module cache, kept between runs; npm packages are fetched into it from the npm registry. */
const denoDir = join(root, ".test-stack/deno-bundle");

interface FunctionEntry {
  name: string;
  /** Relative to the repository's root, as the CLI passes it from there. */
  entrypoint: string;
  importMap: string;
}

const config = parse(readFileSync(join(supabaseDir, "config.toml"), "utf8")) as {
  functions: Record<string, { entrypoint?: string; import_map?: string }>;
};
const functions: FunctionEntry[] = Object.entries(config.functions).map(([name, fn]) => ({
  name,
  // Paths in config.toml are relative to supabase/, as the CLI resolves them.
  entrypoint: relative(root, resolve(supabaseDir, fn.entrypoint ?? `functions/${name}/index.ts`)),
  importMap: fn.import_map ? relative(root, resolve(supabaseDir, fn.import_map)) : "",
}));

/** The versions npm installed: the ones the local stack runs. */
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version: string }>;
};
const installed = (pkg: string) => lock.packages[`node_modules/${pkg}`]?.version;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The bare specifiers (neither relative nor URLs) that a folder's modules import. */
function bareImports(dir: string): Set<string> {
  const found = new Set<string>();
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;
  for (const file of sourceFiles(dir)) {
    for (const match of readFileSync(file, "utf8").matchAll(pattern)) {
      const specifier = match[1] ?? match[2];
      if (!specifier.startsWith(".") && !/^[a-z]+:/.test(specifier)) found.add(specifier);
    }
  }
  return found;
}

/**
 * This process's environment (certificates, proxies, the npm registry's address) with Deno's cache
 * here and package.json discovery off, as the CLI's bundler runs.
 */
function denoEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, DENO_DIR: denoDir, DENO_NO_PACKAGE_JSON: "1", NO_COLOR: "1", ...extra };
}

/** What every function reads at start-up (functions/_shared/env.ts); nothing is contacted while loading. */
const functionEnv = {
  SUPABASE_URL: "https://project-ref.supabase.co",
  SUPABASE_DB_URL: "postgresql://postgres:postgres@127.0.0.1:9/postgres",
  SUPABASE_ANON_KEY: "anon-key",
  SUPABASE_SERVICE_ROLE_KEY: "service-role-key",
  SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
  GATEWAY_SANDBOX_URL: "https://sandbox.gateway.example",
  GATEWAY_PRODUCTION_URL: "https://gateway.example",
  ROUTING_URL: "https://routing.example",
  CEP_URL: "https://viacep.example",
  GEOCODING_URL: "https://nominatim.example",
  WEB_APP_URL: "https://app.example",
  WHATSAPP_URL: "https://graph.whatsapp.example/v21.0",
  WHATSAPP_TOKEN: "whatsapp-token",
  WHATSAPP_PHONE_ID: "100000000000001",
  SMTP_URL: "smtps://user:pass@smtp.example:465",
  SMTP_FROM: "entregas@example.com",
};

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

it("every function in supabase/config.toml names an entrypoint and a deno.json beside it", () => {
  expect(functions.map((fn) => fn.name).sort()).toEqual([
    "api",
    "dispatch",
    "gateway-webhook",
    "notifications",
    "webhooks-out",
    "whoami",
  ]);
  for (const fn of functions) {
    // Beside the entrypoint, the CLI lets the bundler discover the deno.json (no --import-map).
    expect(fn.importMap, fn.name).toBe(join(dirname(fn.entrypoint), "deno.json"));
  }
});

describe.concurrent.each(functions)("the $name function", (fn) => {
  const imports = () =>
    (JSON.parse(readFileSync(join(root, fn.importMap), "utf8")) as { imports: Record<string, string> }).imports;

  it("maps every bare import of its folder, functions/_shared and common/ to the npm package package-lock.json installs", () => {
    const used = new Set([
      ...bareImports(join(root, dirname(fn.entrypoint))),
      ...bareImports(join(root, "functions/_shared")),
      ...bareImports(join(root, "common")),
    ]);
    expect([...used]).toEqual(expect.arrayContaining(["hono", "jose", "postgres", "zod"]));
    const map = imports();
    for (const specifier of used) expect(Object.keys(map), fn.name).toContain(specifier);
    for (const [specifier, target] of Object.entries(map)) {
      const [, pkg, version, subpath] = /^npm:((?:@[^/]+\/)?[^@/]+)@([^/]+)(\/.*)?$/.exec(target) ?? [];
      expect(pkg, `${specifier} -> ${target}`).toBeDefined();
      expect(`${pkg}${subpath ?? ""}`, `${specifier} -> ${target}`).toBe(specifier);
      expect(version, `${specifier} -> ${target}`).toBe(installed(pkg));
    }
  });

  it("type-checks and loads alone, without package.json or node_modules", async () => {
    const dir = mkdtempSync(join(tmpdir(), `bundle-${fn.name}-`));
    tempDirs.push(dir);
    for (const folder of [dirname(fn.entrypoint), "functions/_shared", "common"]) {
      cpSync(join(root, folder), join(dir, folder), { recursive: true });
    }
    const check = await run(deno, ["check", "--no-lock", "--config", fn.importMap, fn.entrypoint], {
      cwd: dir,
      env: denoEnv(),
    }).catch((error) => error);
    expect(check.code ?? 0, `deno check ${fn.entrypoint}: ${check.stderr}`).toBe(0);

    // Evaluating the module runs its start-up (configuration check, route table, OpenAPI document).
    writeFileSync(
      join(dir, "load.ts"),
      `import fn from "./${fn.entrypoint}";\n` +
        `if (typeof fn?.fetch !== "function") {\n  console.error("default.fetch is not a function");\n  Deno.exit(1);\n}\n` +
        `console.log("loaded");\nDeno.exit(0);\n`,
    );
    const load = await run(deno, ["run", "--no-lock", "--config", fn.importMap, "--allow-env", "load.ts"], {
      cwd: dir,
      env: denoEnv(functionEnv),
    }).catch((error) => error);
    expect({ code: load.code ?? 0, stdout: load.stdout.trim() }, `deno run: ${load.stderr}`).toEqual({
      code: 0,
      stdout: "loaded",
    });
  }, 180_000); // five functions checked at once on two cores: some 20 s each alone, more beside the other suites
});

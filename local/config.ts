// Configuration of the local stack (docs/contract.md, Configuration): environment variables and
// command-line flags, validated once at start-up. A bad value stops start-up
// with a message that names the setting.
import { parse as parseToml } from "smol-toml";
import type { JWK } from "jose";
import { z } from "zod";
import { AES_256_KEY_RULE, isAes256Key } from "../common/crypto.ts";
import { type AuthProject, parseAuthProject } from "./auth/project.ts";
import { DEFAULT_JWT_SECRET } from "./keys.ts";

const port = z.coerce.number().int().min(1).max(65535);
const url = z.string().url();

const EnvSchema = z.object({
  API_PORT: port.default(54321),
  DB_PORT: port.default(54322),
  DATA_DIR: z.string().min(1).default(".local"),
  DATABASE_URL: url.optional(),
  SUPABASE_JWT_SECRET: z.string().min(32, "must be at least 32 characters").default(DEFAULT_JWT_SECRET),
  // Checked before anything starts, as the functions check it (functions/_shared/env.ts).
  SECRETS_ENCRYPTION_KEY: z.string().refine(isAes256Key, AES_256_KEY_RULE).optional(),
  GATEWAY_SANDBOX_URL: url.optional(),
  GATEWAY_PRODUCTION_URL: url.optional(),
  GATEWAY_PLATFORM_WEBHOOK_SECRET: z.string().min(1).default("local-platform-webhook-secret"),
  GATEWAY_WEBHOOK_REQUIRE_SIGNATURE: z.enum(["true", "false"]).default("false"),
  ROUTING_URL: url.optional(),
  OPTIMIZATION_URL: url.optional(),
  CEP_URL: url.optional(),
  GEOCODING_URL: url.optional(),
  WEB_APP_URL: url.optional(),
  WHATSAPP_URL: url.optional(),
  WHATSAPP_TOKEN: z.string().min(1).default("local-whatsapp-token"),
  WHATSAPP_PHONE_ID: z.string().regex(/^\d{1,30}$/, "must be digits").default("100000000000001"),
  SMTP_URL: z.string().optional(),
  SMTP_FROM: z.email().default("entregas@delivery.local"),
  /** Web Push (docs/push.md): the VAPID pair, both or neither (neither: the stack's own, kept in DATA_DIR). */
  VAPID_PUBLIC_KEY: z.string().optional(),
  VAPID_PRIVATE_KEY: z.string().optional(),
  VAPID_SUBJECT: z.string().default("mailto:push@delivery.local"),
  /** Hosts webhooks may reach over plain http or on private addresses: the stack's own receivers. */
  WEBHOOK_ALLOWED_HOSTS: z.string().default("127.0.0.1,localhost"),
  /** The local mailbox's SMTP listener; 0 (the default): any free port, printed at start. */
  MAIL_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Overrides config.toml's refresh_token_reuse_interval (the test suite shortens it). */
  AUTH_REFRESH_TOKEN_REUSE_INTERVAL: z.coerce.number().int().min(0).optional(),
  /** GoTrue's own variable for its keys (a JSON array of JWKs): overrides `[auth] signing_keys_path`. */
  GOTRUE_JWT_KEYS: z.string().optional(),
  /** Overrides config.toml's realtime.private_only (the test suite's stack also tries public channels). */
  REALTIME_PRIVATE_ONLY: z.enum(["true", "false"]).optional(),
});

const ProjectSchema = z.object({
  auth: z.object({
    jwt_expiry: z.number().int().positive(),
    enable_refresh_token_rotation: z.boolean(),
    refresh_token_reuse_interval: z.number().int().min(0),
    // The project's asymmetric keys (`supabase gen signing-key`), relative to supabase/ as the CLI reads it.
    signing_keys_path: z.string().optional(),
    hook: z.object({
      custom_access_token: z.object({ enabled: z.boolean(), uri: z.string() }).optional(),
    }).optional(),
  }),
  realtime: z.object({ private_only: z.boolean().default(false) }).optional(),
  functions: z.record(
    z.string(),
    z.object({ enabled: z.boolean().default(true), verify_jwt: z.boolean().default(true), entrypoint: z.string() }),
  ),
});

export interface FunctionConfig {
  name: string;
  verifyJwt: boolean;
  /** Absolute file URL of the function's module. */
  entrypoint: URL;
}

export interface StackConfig {
  env: z.infer<typeof EnvSchema>;
  reset: boolean;
  auth: {
    jwtExpiry: number;
    refreshTokenRotation: boolean;
    refreshTokenReuseInterval: number;
    hook: { schema: string; name: string } | null;
    /** The project's signing keys (private JWKs), from `[auth] signing_keys_path` or GOTRUE_JWT_KEYS; none: the stack's own. */
    signingKeys: JWK[] | null;
    /** Sign-up, e-mail, redirect and rate-limit settings (local/auth/project.ts). */
    project: AuthProject;
  };
  realtime: {
    /** Public channels refused (Realtime's private_only). */
    privateOnly: boolean;
  };
  functions: FunctionConfig[];
}

export class ConfigError extends Error {}

function describe(error: z.ZodError, source: string): string {
  return error.issues.map((issue) => `${source} ${issue.path.join(".")}: ${issue.message}`).join("\n");
}

/** `pg-functions://postgres/public/custom_access_token_hook` → schema and function name. */
function parseHookUri(uri: string): { schema: string; name: string } {
  const match = /^pg-functions:\/\/[^/]+\/([a-z_][a-z0-9_]*)\/([a-z_][a-z0-9_]*)$/.exec(uri);
  if (!match) {
    throw new ConfigError(`supabase/config.toml auth.hook.custom_access_token.uri: not a pg-functions URI: ${uri}`);
  }
  return { schema: match[1], name: match[2] };
}

export const projectRoot = new URL("../", import.meta.url);

export async function loadConfig(args: string[], env: Record<string, string>): Promise<StackConfig> {
  const parsedEnv = EnvSchema.safeParse(env);
  if (!parsedEnv.success) throw new ConfigError(describe(parsedEnv.error, "environment variable"));

  const configUrl = new URL("supabase/config.toml", projectRoot);
  const toml = parseToml(await Deno.readTextFile(configUrl));
  const project = ProjectSchema.safeParse(toml);
  if (!project.success) throw new ConfigError(describe(project.error, "supabase/config.toml"));
  const authSettings = parseAuthProject((toml as { auth?: unknown }).auth, env);
  if ("problems" in authSettings) throw new ConfigError(authSettings.problems.join("\n"));

  const hook = project.data.auth.hook?.custom_access_token;
  const supabaseDir = new URL("supabase/", projectRoot);
  return {
    env: parsedEnv.data,
    reset: args.includes("--reset"),
    auth: {
      jwtExpiry: project.data.auth.jwt_expiry,
      refreshTokenRotation: project.data.auth.enable_refresh_token_rotation,
      refreshTokenReuseInterval: parsedEnv.data.AUTH_REFRESH_TOKEN_REUSE_INTERVAL ??
        project.data.auth.refresh_token_reuse_interval,
      hook: hook?.enabled ? parseHookUri(hook.uri) : null,
      signingKeys: await readSigningKeys(
        parsedEnv.data.GOTRUE_JWT_KEYS,
        project.data.auth.signing_keys_path,
        supabaseDir,
      ),
      project: authSettings.project,
    },
    realtime: {
      privateOnly: parsedEnv.data.REALTIME_PRIVATE_ONLY !== undefined
        ? parsedEnv.data.REALTIME_PRIVATE_ONLY === "true"
        : project.data.realtime?.private_only ?? false,
    },
    functions: Object.entries(project.data.functions)
      .filter(([, fn]) => fn.enabled)
      .map(([name, fn]) => ({ name, verifyJwt: fn.verify_jwt, entrypoint: new URL(fn.entrypoint, supabaseDir) })),
  };
}

/** Why a port cannot be listened on, or null when it can. */
function portProblem(port: number): string | null {
  try {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    listener.close();
    return null;
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) return "is already in use";
    return `cannot be listened on (${(error as Error).message})`;
  }
}

/** Why DATA_DIR cannot hold the stack's files, or null when it can (it is created when missing). */
async function dataDirProblem(dir: string): Promise<string | null> {
  const info = await Deno.stat(dir).catch(() => null);
  if (info && !info.isDirectory) return "is not a directory";
  if (!info) {
    try {
      await Deno.mkdir(dir, { recursive: true });
    } catch (error) {
      return `cannot be created (${(error as Error).message})`;
    }
  }
  const probe = `${dir}/.write-test-${Deno.pid}`;
  try {
    await Deno.writeTextFile(probe, "");
    await Deno.remove(probe);
    return null;
  } catch (error) {
    return `is not writable (${(error as Error).message})`;
  }
}

/**
 * What start-up needs from the machine, checked before anything is started:
 * free ports and a usable DATA_DIR. Throws a ConfigError of one line naming the setting.
 */
export async function checkResources(env: StackConfig["env"]): Promise<void> {
  const problems: [string, string | number, string | null][] = [
    ["API_PORT", env.API_PORT, portProblem(env.API_PORT)],
    ["DB_PORT", env.DB_PORT, env.DATABASE_URL ? null : portProblem(env.DB_PORT)],
    ["DATA_DIR", env.DATA_DIR, await dataDirProblem(env.DATA_DIR)],
  ];
  for (const [name, value, problem] of problems) {
    if (problem) throw new ConfigError(`${name} ${value} ${problem}`);
  }
}

/** The signing keys GOTRUE_JWT_KEYS holds, or else the file `[auth] signing_keys_path` names; null without either. */
async function readSigningKeys(fromEnv: string | undefined, path: string | undefined, supabaseDir: URL) {
  let text = fromEnv;
  let where = "GOTRUE_JWT_KEYS";
  if (!text && path) {
    where = `supabase/config.toml auth.signing_keys_path (${path})`;
    try {
      text = await Deno.readTextFile(new URL(path, supabaseDir));
    } catch (error) {
      throw new ConfigError(`${where}: cannot be read (${(error as Error).message})`);
    }
  }
  if (!text) return null;
  try {
    const keys = JSON.parse(text);
    if (!Array.isArray(keys) || keys.some((key) => typeof key !== "object" || key === null || !key.kty)) {
      throw new Error("not a JSON array of JWKs");
    }
    return keys as JWK[];
  } catch (error) {
    throw new ConfigError(`${where}: ${(error as Error).message}`);
  }
}

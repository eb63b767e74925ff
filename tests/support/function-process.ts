// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// One Edge Function in a Deno process of its own, on the stack's database and
// fakes: for settings the running stack does not have, or for paths the local
// router sends to another function.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { stack } from "./api.ts";

export interface FunctionRequest {
  method?: string;
  /** The path the function sees. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface FunctionAnswer {
  status: number;
  body: any;
  headers: Record<string, string>;
}

const root = resolve(import.meta.dirname, "../..");

/** The secrets encryption key the running stack made in its data directory (local/keys.ts), beside its log. */
function stackSecretsKey(): string {
  const keys = JSON.parse(readFileSync(resolve(dirname(stack().logFile), "keys.json"), "utf8"));
  return keys.secretsEncryptionKey;
}

/** The settings a function process runs with: the stack's, its fakes', and `env` over them. */
export function functionProcessEnv(env: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    SUPABASE_URL: stack().apiUrl,
    SUPABASE_DB_URL: stack().dbUrl,
    SUPABASE_ANON_KEY: stack().anonKey,
    SUPABASE_SERVICE_ROLE_KEY: stack().serviceRoleKey,
    SUPABASE_JWT_SECRET: stack().jwtSecret,
    // The stack's own key (kept in its data directory): a webhook decrypts the company's gateway key.
    SECRETS_ENCRYPTION_KEY: stackSecretsKey(),
    GATEWAY_SANDBOX_URL: stack().fakes.gateway.url,
    GATEWAY_PRODUCTION_URL: stack().fakes.gateway.url,
    GATEWAY_PLATFORM_WEBHOOK_SECRET: stack().platformWebhookSecret,
    ROUTING_URL: stack().fakes.routing.url,
    CEP_URL: stack().fakes.cep.url,
    GEOCODING_URL: stack().fakes.geocoding.url,
    WEB_APP_URL: stack().apiUrl,
    WHATSAPP_URL: `${stack().fakes.whatsapp.url}/v21.0`,
    WHATSAPP_TOKEN: "test-whatsapp-token",
    WHATSAPP_PHONE_ID: "100000000000001",
    SMTP_URL: stack().fakes.smtp.url,
    SMTP_FROM: "entregas@delivery.local",
    ...env,
  };
}

/** Sends `requests` in order to functions/<fn>/index.ts, with `env` over the stack's settings. */
export function callFunctionProcess(
  fn: string,
  requests: FunctionRequest[],
  env: Record<string, string> = {},
): { answers: FunctionAnswer[]; stderr: string } {
  const script = `
    const { default: fn } = await import("./functions/${fn}/index.ts");
    const answers = [];
    for (const { method, path, headers, body } of ${JSON.stringify(requests)}) {
      const res = await fn.fetch(new Request("http://local" + path, { method: method ?? "GET", headers, body }));
      const text = await res.text();
      let parsed = text;
      try { parsed = JSON.parse(text); } catch { /* not JSON */ }
      answers.push({ status: res.status, body: parsed, headers: Object.fromEntries(res.headers) });
    }
    console.log(JSON.stringify(answers));
    Deno.exit(0);`;
  const result = spawnSync(resolve(root, "node_modules/.bin/deno"), ["eval", "--ext=ts", script], {
    cwd: root,
    encoding: "utf8",
    timeout: 45_000,
    env: functionProcessEnv(env),
  });
  const line = result.stdout.trim().split("\n").pop() ?? "";
  let answers: FunctionAnswer[];
  try {
    answers = JSON.parse(line);
  } catch {
    throw new Error(`functions/${fn} did not answer: ${result.stderr}`);
  }
  return { answers, stderr: result.stderr };
}

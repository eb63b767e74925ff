// `npm start`: the whole local stack in one process (docs/architecture.md, The local stack).
// Flags: --reset wipes the database under DATA_DIR first.
import postgres from "postgres";
import { ConfigError, loadConfig, projectRoot } from "./config.ts";
import { migrate, startDatabase } from "./database.ts";
import { loadKeys } from "./keys.ts";
import { startServer } from "./server.ts";
import { type Background, startBackground } from "./background.ts";
import { buildWebIfStale } from "./web.ts";

const started = performance.now();
const log = (line: string) => console.log(line);

let config;
try {
  config = await loadConfig(Deno.args, Deno.env.toObject());
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`configuration error:\n${error.message}`);
    Deno.exit(2);
  }
  throw error;
}
const { env } = config;
const apiUrl = `http://127.0.0.1:${env.API_PORT}`;

const database = await startDatabase({
  dataDir: env.DATA_DIR,
  port: env.DB_PORT,
  reset: config.reset,
  externalUrl: env.DATABASE_URL,
  log,
});
let sql: postgres.Sql | undefined;
let server: { close(): Promise<void> } | undefined;
let background: Background | undefined; // pg_cron and pg_net stand-ins
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await background?.stop().catch(() => {});
    await server?.close().catch(() => {});
    await sql?.end({ timeout: 1 }).catch(() => {});
    await database.stop().catch(() => {});
  }
  Deno.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => void stop(0));

try {
  const result = await migrate(database.url, { seed: true });
  for (const file of result.applied) log(`Applied migration ${file}`);
  if (result.seeded) log("Seeded supabase/seed.sql");

  const keys = await loadKeys(env.DATA_DIR, env.SUPABASE_JWT_SECRET);
  // The Edge Functions read the same variables they get as secrets on Supabase.
  const functionEnv: Record<string, string> = {
    SUPABASE_URL: apiUrl,
    SUPABASE_DB_URL: database.url,
    SUPABASE_ANON_KEY: keys.anonKey,
    SUPABASE_SERVICE_ROLE_KEY: keys.serviceRoleKey,
    SUPABASE_JWT_SECRET: keys.jwtSecret,
    SUPABASE_JWKS: JSON.stringify(keys.jwks),
    SECRETS_ENCRYPTION_KEY: env.SECRETS_ENCRYPTION_KEY ?? keys.secretsEncryptionKey,
    GATEWAY_SANDBOX_URL: env.GATEWAY_SANDBOX_URL ?? `${apiUrl}/_sim/gateway`,
    GATEWAY_PRODUCTION_URL: env.GATEWAY_PRODUCTION_URL ?? `${apiUrl}/_sim/gateway`,
    GATEWAY_PLATFORM_WEBHOOK_SECRET: env.GATEWAY_PLATFORM_WEBHOOK_SECRET,
    GATEWAY_WEBHOOK_REQUIRE_SIGNATURE: env.GATEWAY_WEBHOOK_REQUIRE_SIGNATURE,
    ROUTING_URL: env.ROUTING_URL ?? `${apiUrl}/_sim/routing`,
  };
  for (const [name, value] of Object.entries(functionEnv)) Deno.env.set(name, value);

  const webBuild = await buildWebIfStale(log);
  sql = postgres(database.url, { max: 10, onnotice: () => {} });
  server = await startServer({ config, keys, sql, apiUrl });
  // The scheduled jobs (pg_cron + pg_net) and the Vault secrets they read, as on a hosted project.
  background = await startBackground({
    url: database.url,
    secrets: { project_url: apiUrl, service_role_key: keys.serviceRoleKey },
    log,
  });

  const seed = await Deno.readTextFile(new URL("supabase/seed.sql", projectRoot)).catch(() => "");
  const demoUsers = [...seed.matchAll(/^-- demo user: (.+)$/gm)].map((m) => m[1]);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(`
Started the local stack in ${seconds} s.

         API URL: ${apiUrl}
     OpenAPI doc: ${apiUrl}/api/v1/openapi.json
        Auth URL: ${apiUrl}/auth/v1
 Web app (panel): ${apiUrl}/  (${webBuild})
    Realtime URL: ${apiUrl.replace("http", "ws")}/realtime/v1/websocket
  Functions URL: ${apiUrl}/functions/v1
          DB URL: ${database.url}
      JWT secret: ${keys.jwtSecret}
        anon key: ${keys.anonKey}
service_role key: ${keys.serviceRoleKey}
  Gateway (sim): ${functionEnv.GATEWAY_SANDBOX_URL}
  Routing (sim): ${functionEnv.ROUTING_URL}
${demoUsers.length ? `\nDemo users (email / password / role):\n${demoUsers.map((u) => `  ${u}`).join("\n")}\n` : ""}
Press Ctrl-C to stop.`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stop(1);
}

// `npm start`: the whole local stack in one process (docs/architecture.md, The local stack).
// Flags: --reset wipes the database under DATA_DIR first.
// A bad setting, a port in use or an unusable DATA_DIR stops start-up before
// anything runs: one line per problem, exit code 2. SIGINT (Ctrl-C) and SIGTERM
// stop the HTTP server and Postgres, then the process.
import postgres from "postgres";
import { checkResources, ConfigError, loadConfig, projectRoot } from "./config.ts";
import { clusterDir, type Database, migrate, startDatabase } from "./database.ts";
import { stopLeftover } from "./postgres.ts";
import { loadKeys } from "./keys.ts";
import { loadVapidKeys } from "./vapid.ts";
import { startServer } from "./server.ts";
import { type Background, startBackground } from "./background.ts";
import { buildWebIfStale } from "./web.ts";
import { Mailbox } from "./auth/mailbox.ts";
import { type SmtpListener, startSmtpServer } from "./simulators/smtp.ts";

const started = performance.now();

/** An SMTP URL as it may be printed: without its password. */
function redactedSmtp(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}
const log = (line: string) => console.log(line);

// The process outlives any one failure: an error nothing awaited is logged, never fatal
// (the database going away must not take the stack down with it).
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  console.error(JSON.stringify({ event: "unhandled_rejection", error: String(event.reason) }));
});
globalThis.addEventListener("error", (event) => {
  event.preventDefault();
  console.error(JSON.stringify({ event: "uncaught_error", error: String(event.error ?? event.message) }));
});

let config;
try {
  config = await loadConfig(Deno.args, Deno.env.toObject());
  if (!config.env.DATABASE_URL) {
    const leftover = await stopLeftover(clusterDir(config.env.DATA_DIR));
    if (leftover) log(`Stopped Postgres ${leftover}, left running on ${config.env.DATA_DIR} by an earlier start`);
  }
  await checkResources(config.env);
} catch (error) {
  if (error instanceof ConfigError) {
    for (const line of error.message.split("\n")) console.error(`configuration error: ${line}`);
    Deno.exit(2);
  }
  throw error;
}
const { env } = config;
const apiUrl = `http://127.0.0.1:${env.API_PORT}`;

let database: Promise<Database> | undefined;
let sql: postgres.Sql | undefined;
let server: { close(): Promise<void> } | undefined;
let background: Background | undefined; // pg_cron and pg_net stand-ins
let smtp: SmtpListener | undefined; // the mailbox's SMTP listener

function within<T>(ms: number, work: Promise<T>): Promise<T | void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([work.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))])
    .finally(() => clearTimeout(timer));
}

let stopped: Promise<never> | undefined;
/** Stops everything, once: a second signal (Ctrl-C reaches npm, which forwards it too) waits for the first stop. */
function stop(code: number): Promise<never> {
  stopped ??= (async () => {
    // Each step is bounded, so that a stuck client cannot keep Postgres running.
    await within(3_000, background?.stop() ?? Promise.resolve());
    await within(3_000, server?.close() ?? Promise.resolve());
    await within(1_000, smtp?.close() ?? Promise.resolve());
    await within(2_000, sql?.end({ timeout: 1 }) ?? Promise.resolve());
    // A signal during start-up waits for Postgres to be up, then stops it.
    await (await database?.catch(() => undefined))?.stop().catch(() => {});
    Deno.exit(code);
  })();
  return stopped;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => void stop(0));

try {
  database = startDatabase({
    dataDir: env.DATA_DIR,
    port: env.DB_PORT,
    reset: config.reset,
    externalUrl: env.DATABASE_URL,
    log,
  });
  const { url: databaseUrl } = await database;
  const result = await migrate(databaseUrl, { seed: true });
  for (const file of result.applied) log(`Applied migration ${file}`);
  if (result.seeded) log("Seeded supabase/seed.sql");

  const keys = await loadKeys(env.DATA_DIR, env.SUPABASE_JWT_SECRET, config.auth.signingKeys ?? undefined);
  // The local mailbox, and its SMTP listener: where the notifications' e-mail goes unless SMTP_URL says otherwise.
  const mailbox = new Mailbox();
  smtp = await startSmtpServer({
    port: env.MAIL_SMTP_PORT,
    receive: (mail) => {
      for (const to of mail.to) {
        mailbox.send({
          to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          from: { Name: mail.from.name, Address: mail.from.address },
        });
      }
    },
  }).catch((error) => {
    throw new Error(
      `configuration error: MAIL_SMTP_PORT ${env.MAIL_SMTP_PORT} cannot be listened on (${error.message})`,
    );
  });
  const vapid = env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY
    ? { publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY }
    : await loadVapidKeys(env.DATA_DIR);
  // The Edge Functions read the same variables they get as secrets on Supabase.
  const functionEnv: Record<string, string> = {
    SUPABASE_URL: apiUrl,
    SUPABASE_DB_URL: databaseUrl,
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
    CEP_URL: env.CEP_URL ?? `${apiUrl}/_sim/cep`,
    GEOCODING_URL: env.GEOCODING_URL ?? `${apiUrl}/_sim/geocoding`,
    WEB_APP_URL: env.WEB_APP_URL ?? apiUrl,
    WHATSAPP_URL: env.WHATSAPP_URL ?? `${apiUrl}/_sim/whatsapp/v21.0`,
    WHATSAPP_TOKEN: env.WHATSAPP_TOKEN,
    WHATSAPP_PHONE_ID: env.WHATSAPP_PHONE_ID,
    SMTP_URL: env.SMTP_URL ?? `smtp://127.0.0.1:${smtp.port}`,
    SMTP_FROM: env.SMTP_FROM,
    // No stand-in: without a VROOM server the built-in planner plans (docs/routes.md).
    ...(env.OPTIMIZATION_URL ? { OPTIMIZATION_URL: env.OPTIMIZATION_URL } : {}),
    WEBHOOK_ALLOWED_HOSTS: env.WEBHOOK_ALLOWED_HOSTS,
    VAPID_PUBLIC_KEY: vapid.publicKey,
    VAPID_PRIVATE_KEY: vapid.privateKey,
    VAPID_SUBJECT: env.VAPID_SUBJECT,
  };
  for (const [name, value] of Object.entries(functionEnv)) Deno.env.set(name, value);

  const webBuild = await buildWebIfStale(log);
  // Auth and Realtime's pool: a lost server fails its queries fast (connect_timeout) rather than queueing them.
  sql = postgres(databaseUrl, { max: 10, connect_timeout: 3, onnotice: () => {} });
  server = await startServer({ config, keys, sql, databaseUrl, apiUrl, mailbox });
  // The scheduled jobs (pg_cron + pg_net) and the Vault secrets they read, as on a hosted project.
  background = await startBackground({
    url: databaseUrl,
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
        REST URL: ${apiUrl}/rest/v1
     Storage URL: ${apiUrl}/storage/v1
   Functions URL: ${apiUrl}/functions/v1
         Mailbox: ${apiUrl}/_mail/api/v1/messages
    Mailbox SMTP: smtp://127.0.0.1:${smtp.port}
          DB URL: ${databaseUrl}
      JWT secret: ${keys.jwtSecret}
        anon key: ${keys.anonKey}
service_role key: ${keys.serviceRoleKey}
   Gateway (sim): ${functionEnv.GATEWAY_SANDBOX_URL}
   Routing (sim): ${functionEnv.ROUTING_URL}
       CEP (sim): ${functionEnv.CEP_URL}
 Geocoding (sim): ${functionEnv.GEOCODING_URL}
  WhatsApp (sim): ${functionEnv.WHATSAPP_URL}
  Web Push (sim): ${apiUrl}/_sim/webpush/messages  (VAPID public key ${vapid.publicKey})
     Notify SMTP: ${redactedSmtp(functionEnv.SMTP_URL)}
${demoUsers.length ? `\nDemo users (email / password / role):\n${demoUsers.map((u) => `  ${u}`).join("\n")}\n` : ""}
Press Ctrl-C to stop.`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stop(1);
}

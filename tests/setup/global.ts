// Starts, once per `vitest run`, the loopback fakes of the external services
// and the whole local stack (local/start.ts) on free ports with a fresh
// database, and hands their addresses to the test files through `inject`.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { createGatewaySimulator, type GatewaySimulator } from "../../local/simulators/gateway.ts";
import { createRoutingSimulator, type RoutingSimulator } from "../../local/simulators/routing.ts";
import { startFake } from "../support/fake-server.ts";

export interface StackInfo {
  apiUrl: string;
  dbUrl: string;
  anonKey: string;
  serviceRoleKey: string;
  jwtSecret: string;
  platformWebhookSecret: string;
  /** Everything the stack printed, for tests that check what is (not) logged. */
  logFile: string;
  fakes: { gateway: { url: string; controlUrl: string }; routing: { url: string; controlUrl: string } };
}

declare module "vitest" {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}

const root = resolve(import.meta.dirname, "../..");

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess, ready: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the local stack exited with code ${child.exitCode}`);
    try {
      if (ready() && (await fetch(`${url}/health`)).ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the local stack did not answer /health within ${timeoutMs} ms`);
}

export default async function setup(project: TestProject) {
  const gateway = await startFake("gateway", createGatewaySimulator, (f) => {
    const sim = f as GatewaySimulator;
    return {
      customers: [...sim.customers.values()],
      payments: [...sim.payments.values()],
      transfers: [...sim.transfers.values()],
      log: sim.log,
    };
  });
  const routing = await startFake("routing", createRoutingSimulator, (f) => ({ requests: (f as RoutingSimulator).requests }));

  const [apiPort, dbPort] = [await freePort(), await freePort()];
  // A data directory of its own, so that runs side by side never share a database.
  const dataDir = mkdtempSync(resolve(tmpdir(), "delivery-platform-test-"));
  // As root, Postgres runs as its own system user, which must be able to enter it.
  chmodSync(dataDir, 0o755);
  const logFile = resolve(dataDir, "stack.log");
  const log = createWriteStream(logFile);
  const platformWebhookSecret = "test-platform-webhook-secret";
  const jwtSecret = "test-jwt-secret-that-is-at-least-32-characters";

  const child = spawn(resolve(root, "node_modules/.bin/deno"), ["run", "-A", "local/start.ts", "--reset"], {
    cwd: root,
    env: {
      ...process.env,
      API_PORT: String(apiPort),
      DB_PORT: String(dbPort),
      DATA_DIR: dataDir,
      SUPABASE_JWT_SECRET: jwtSecret,
      GATEWAY_SANDBOX_URL: gateway.url,
      GATEWAY_PRODUCTION_URL: gateway.url,
      ROUTING_URL: routing.url,
      GATEWAY_PLATFORM_WEBHOOK_SECRET: platformWebhookSecret,
      AUTH_REFRESH_TOKEN_REUSE_INTERVAL: "1",
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let banner = "";
  child.stdout!.on("data", (chunk) => {
    banner += chunk;
    log.write(chunk);
  });
  child.stderr!.on("data", (chunk) => log.write(chunk));

  const apiUrl = `http://127.0.0.1:${apiPort}`;
  try {
    await waitForHealth(apiUrl, child, () => banner.includes("Press Ctrl-C"), 90_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}; see ${logFile}`);
  }
  const field = (name: string) => new RegExp(`${name}: (\\S+)`).exec(banner)?.[1] ?? "";

  project.provide("stack", {
    apiUrl,
    dbUrl: field("DB URL"),
    anonKey: field("anon key"),
    serviceRoleKey: field("service_role key"),
    jwtSecret,
    platformWebhookSecret,
    logFile,
    fakes: {
      gateway: { url: gateway.url, controlUrl: gateway.controlUrl },
      routing: { url: routing.url, controlUrl: routing.controlUrl },
    },
  });

  return async () => {
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGINT");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    log.end();
    if (!process.env.KEEP_TEST_STACK) rmSync(dataDir, { recursive: true, force: true });
    await gateway.close();
    await routing.close();
  };
}

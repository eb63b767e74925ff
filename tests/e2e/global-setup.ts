// Starts the whole local stack (local/start.ts) on free ports with a fresh data
// directory, like tests/setup/global.ts does for vitest, with its built-in
// gateway and routing simulators and no map tiles (nothing leaves the machine).
// The stack builds web/dist first when it is out of date.
import { spawn } from "node:child_process";
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { resolve } from "node:path";

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

export const PLATFORM_WEBHOOK_SECRET = "e2e-platform-webhook-secret";

export default async function globalSetup() {
  const [apiPort, dbPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(resolve(tmpdir(), "delivery-platform-e2e-"));
  chmodSync(dataDir, 0o755);
  const logFile = resolve(dataDir, "stack.log");
  const log = createWriteStream(logFile);
  const child = spawn(resolve(root, "node_modules/.bin/deno"), ["run", "-A", "local/start.ts", "--reset"], {
    cwd: root,
    env: {
      ...process.env,
      API_PORT: String(apiPort),
      DB_PORT: String(dbPort),
      DATA_DIR: dataDir,
      TILE_URL: "",
      GATEWAY_PLATFORM_WEBHOOK_SECRET: PLATFORM_WEBHOOK_SECRET,
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
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the local stack exited with code ${child.exitCode}; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the local stack did not start in time; see ${logFile}`);
    }
    if (banner.includes("Press Ctrl-C") && (await fetch(`${baseUrl}/health`).then((r) => r.ok, () => false))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const build = /Web app \(panel\): \S+\s+\(([^)]*)\)/.exec(banner)?.[1];
  console.log(`local stack at ${baseUrl} (web app: ${build})`);
  process.env.E2E_BASE_URL = baseUrl;
  process.env.E2E_PLATFORM_WEBHOOK_SECRET = PLATFORM_WEBHOOK_SECRET;

  return async () => {
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGINT");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    log.end();
    if (!process.env.KEEP_TEST_STACK) rmSync(dataDir, { recursive: true, force: true });
  };
}

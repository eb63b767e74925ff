// A local stack of a test's own (local/start.ts, or `npm start`), on free ports
// with a data directory of its own, for tests that kill, lock or stop what the
// shared stack of tests/setup/global.ts must keep running.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { resolve } from "node:path";

export const projectRoot = resolve(import.meta.dirname, "../..");

/**
 * GoTrue's own variables for the rate limits config.toml sets (local/auth/project.ts), high enough never to
 * be reached: GoTrue's per-IP bucket holds 30 requests and refills at the rate per 5 minutes.
 */
export const LIFTED_AUTH_RATE_LIMITS: Record<string, string> = {
  GOTRUE_RATE_LIMIT_TOKEN_REFRESH: "1000000000",
  GOTRUE_RATE_LIMIT_OTP: "1000000000",
  GOTRUE_RATE_LIMIT_VERIFY: "1000000000",
};

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(true));
    server.listen(port, "127.0.0.1", () => server.close(() => done(false)));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function privateDir(prefix: string): string {
  // mkdtemp makes it mode 700: only its owner may enter.
  return mkdtempSync(resolve(tmpdir(), prefix));
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  args: string;
}

/** Every process on the machine, from /proc. */
export function processes(): ProcessInfo[] {
  const list: ProcessInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
      list.push({ pid: Number(entry), ppid, args });
    } catch { /* gone meanwhile */ }
  }
  return list;
}

/** Processes whose command line names `text` (a data directory, say). */
export function processesMentioning(text: string): ProcessInfo[] {
  return processes().filter((p) => p.args.includes(text) && p.pid !== process.pid);
}

export interface StackOptions {
  /** `deno` runs local/start.ts as the test setup does; `npm` runs `npm start`, as a person does. */
  via?: "deno" | "npm";
  env?: Record<string, string>;
  args?: string[];
  /** Its own process group, so that a test can send it a terminal's Ctrl-C. */
  group?: boolean;
  /** Those of an earlier stack, to start again on its data; fresh ones by default. */
  dataDir?: string;
  apiPort?: number;
  dbPort?: number;
  /** Everything the stack prints is also appended to this file. */
  logFile?: string;
}

export interface OwnStack {
  apiUrl: string;
  apiPort: number;
  dbPort: number;
  dbUrl: string;
  anonKey: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the stack printed so far. */
  output(): string;
  exited(): boolean;
  /** The postmaster's pid, from its postmaster.pid. */
  postmasterPid(): number;
  /** SIGINT, wait for the exit, and remove the data directory. */
  stop(): Promise<void>;
}

export async function startOwnStack(options: StackOptions = {}): Promise<OwnStack> {
  const apiPort = options.apiPort ?? await freePort();
  const dbPort = options.dbPort ?? await freePort();
  const dataDir = options.dataDir ?? privateDir("delivery-platform-faults-");
  const env = {
    ...process.env,
    API_PORT: String(apiPort),
    DB_PORT: String(dbPort),
    DATA_DIR: dataDir,
    NO_COLOR: "1",
    ...options.env,
  };
  const args = options.args ?? ["--reset"];
  const child = options.via === "npm"
    ? spawn("npm", ["start", "--silent", "--", ...args], {
      cwd: projectRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: options.group,
    })
    : spawn(resolve(projectRoot, "node_modules/.bin/deno"), ["run", "-A", "local/start.ts", ...args], {
      cwd: projectRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: options.group,
    });
  let text = "";
  const log = options.logFile ? createWriteStream(options.logFile, { flags: "a" }) : null;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on("data", (chunk) => {
      text += chunk;
      log?.write(chunk);
    });
  }
  child.once("exit", () => log?.end());
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const deadline = Date.now() + 120_000;
  while (!text.includes("Press Ctrl-C")) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the stack exited (${child.exitCode ?? child.signalCode}) before it started:\n${text}`);
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the stack did not start within 120 s:\n${text}`);
    }
    await sleep(100);
  }
  const field = (name: string) => new RegExp(`${name}: (\\S+)`).exec(text)?.[1] ?? "";
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    apiUrl,
    apiPort,
    dbPort,
    dbUrl: field("DB URL"),
    anonKey: field("anon key"),
    dataDir,
    child,
    output: () => text,
    exited,
    postmasterPid: () => Number(readFileSync(`${dataDir}/postgres/postmaster.pid`, "utf8").split("\n")[0]),
    async stop() {
      if (!exited()) {
        const gone = new Promise((done) => child.once("exit", done));
        child.kill("SIGINT");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
        clearTimeout(timer);
        if (!exited()) child.kill("SIGKILL");
      }
      for (const p of processesMentioning(dataDir)) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      if (!process.env.KEEP_TEST_STACK) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Sign-in with a password, as auth-js does it; the access token, or the failed response. */
export async function passwordSignIn(stack: OwnStack, email: string, password: string): Promise<string> {
  const res = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: stack.anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`sign-in of ${email}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

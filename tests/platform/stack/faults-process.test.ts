// The local stack as a process: it refuses to start, in one line and with exit
// code 2, when a port or DATA_DIR is unusable; SIGTERM to `npm start` and a
// terminal's Ctrl-C stop Deno and Postgres with it; and it runs from a
// checkout in a private directory, under root too.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  freePort,
  listening,
  privateDir,
  processes,
  processesMentioning,
  projectRoot,
  sleep,
  startOwnStack,
} from "../../support/stack.ts";

const isRoot = process.getuid?.() === 0;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** local/start.ts to its end (it is expected to refuse to start). */
function runStart(env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(resolve(projectRoot, "node_modules/.bin/deno"), ["run", "-A", "local/start.ts"], {
      cwd: projectRoot,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

function hold(port: number): Promise<Server> {
  return new Promise((done, fail) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => done(server));
  });
}

async function refusal(env: Record<string, string>, dataDir: string): Promise<Run> {
  const run = await runStart(env);
  // Nothing was started: no Postgres of that data directory.
  expect(processesMentioning(dataDir)).toEqual([]);
  return run;
}

describe("start-up refuses an unusable setting in one line, exit code 2", () => {
  const lines = (run: Run) => run.stderr.trim().split("\n");

  it("API_PORT in use", async () => {
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const dataDir = privateDir("delivery-platform-refusal-");
    const blocker = await hold(apiPort);
    try {
      const run = await refusal({ API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: dataDir }, dataDir);
      expect(run.code).toBe(2);
      expect(lines(run)).toEqual([`configuration error: API_PORT ${apiPort} is already in use`]);
      expect(await listening(dbPort)).toBe(false);
    } finally {
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("DB_PORT in use", async () => {
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const dataDir = privateDir("delivery-platform-refusal-");
    const blocker = await hold(dbPort);
    try {
      const run = await refusal({ API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: dataDir }, dataDir);
      expect(run.code).toBe(2);
      expect(lines(run)).toEqual([`configuration error: DB_PORT ${dbPort} is already in use`]);
      expect(await listening(apiPort)).toBe(false);
    } finally {
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("DATA_DIR that is a file", async () => {
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const dir = privateDir("delivery-platform-refusal-");
    const file = resolve(dir, "not-a-directory");
    writeFileSync(file, "");
    try {
      const run = await refusal({ API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: file }, file);
      expect(run.code).toBe(2);
      expect(lines(run)).toEqual([`configuration error: DATA_DIR ${file} is not a directory`]);
      expect(await listening(apiPort)).toBe(false);
      expect(await listening(dbPort)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("DATA_DIR that cannot be created or written", async () => {
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const dir = privateDir("delivery-platform-refusal-");
    const file = resolve(dir, "a-file");
    writeFileSync(file, "");
    // Root writes into any mode-500 directory; sysfs refuses new files to everyone.
    const readOnly = isRoot ? "/sys/fs" : resolve(dir, "read-only");
    if (!isRoot) {
      mkdirSync(readOnly);
      chmodSync(readOnly, 0o500);
    }
    try {
      const under = resolve(file, "data");
      const uncreatable = await refusal({ API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: under }, under);
      expect(uncreatable.code).toBe(2);
      expect(lines(uncreatable)).toHaveLength(1);
      expect(lines(uncreatable)[0]).toMatch(
        new RegExp(`^configuration error: DATA_DIR ${under} cannot be created \\(`),
      );

      const unwritable = await refusal(
        { API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: readOnly },
        readOnly,
      );
      expect(unwritable.code).toBe(2);
      expect(lines(unwritable)).toHaveLength(1);
      expect(lines(unwritable)[0]).toMatch(
        new RegExp(`^configuration error: DATA_DIR ${readOnly} is not writable \\(`),
      );
      expect(await listening(apiPort)).toBe(false);
      expect(await listening(dbPort)).toBe(false);
    } finally {
      if (!isRoot) chmodSync(readOnly, 0o700);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The pids of `pid` and every process under it. */
function tree(pid: number): number[] {
  const all = processes();
  const found = [pid];
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]).map((p) => p.pid));
  return found;
}

async function stopsCleanly(signal: "SIGTERM" | "SIGINT", toGroup: boolean) {
  const stack = await startOwnStack({ via: "npm", group: true });
  try {
    const npm = stack.child.pid!;
    const postmaster = stack.postmasterPid();
    const before = tree(npm);
    // npm, Deno, and Postgres (in a process group of its own) are all running.
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(processesMentioning(stack.dataDir).map((p) => p.pid)).toContain(postmaster);
    expect(await listening(stack.apiPort)).toBe(true);
    expect(await listening(stack.dbPort)).toBe(true);

    const signalled = Date.now();
    // A terminal's Ctrl-C goes to the whole foreground process group; `kill` to the npm process alone.
    process.kill(toGroup ? -npm : npm, signal);
    const deadline = signalled + 10_000;
    const alive = () => [...before, postmaster].filter((pid) => processes().some((p) => p.pid === pid));
    while (Date.now() < deadline && (alive().length || processesMentioning(stack.dataDir).length)) await sleep(100);

    expect(alive()).toEqual([]);
    expect(processesMentioning(stack.dataDir)).toEqual([]);
    expect(await listening(stack.apiPort)).toBe(false);
    expect(await listening(stack.dbPort)).toBe(false);
    expect(Date.now() - signalled).toBeLessThan(10_000);
  } finally {
    await stack.stop();
  }
}

describe("stopping `npm start`", () => {
  it(
    "SIGTERM to the npm process stops Deno and Postgres: no orphans, ports freed",
    () => stopsCleanly("SIGTERM", false),
    150_000,
  );
  it("Ctrl-C (SIGINT to the process group) does the same", () => stopsCleanly("SIGINT", true), 150_000);
});

describe("a stack killed with SIGKILL", () => {
  it("leaves its Postgres running, which the next start on that DATA_DIR stops before it starts its own", async () => {
    const first = await startOwnStack();
    const orphan = first.postmasterPid();
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    // Deno cannot clean up after SIGKILL: its Postgres (a process group of its own) is still there.
    expect(processes().some((p) => p.pid === orphan)).toBe(true);
    const second = await startOwnStack({
      dataDir: first.dataDir,
      apiPort: first.apiPort,
      dbPort: first.dbPort,
      args: [],
    });
    try {
      expect(second.output()).toContain(`Stopped Postgres ${orphan}, left running on ${first.dataDir}`);
      expect(processes().some((p) => p.pid === orphan)).toBe(false);
      expect(second.postmasterPid()).not.toBe(orphan);
      expect((await fetch(`${second.apiUrl}/health`)).status).toBe(200);
    } finally {
      await second.stop();
    }
  }, 150_000);
});

describe("a second start on the same DATA_DIR", () => {
  it("refuses (the ports are taken) and leaves the running stack and its Postgres alone", async () => {
    const first = await startOwnStack();
    try {
      const postmaster = first.postmasterPid();
      const run = await runStart({
        API_PORT: String(first.apiPort),
        DB_PORT: String(first.dbPort),
        DATA_DIR: first.dataDir,
      });
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toBe(`configuration error: API_PORT ${first.apiPort} is already in use`);
      expect(processes().some((p) => p.pid === postmaster)).toBe(true);
      expect((await fetch(`${first.apiUrl}/health`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  }, 150_000);
});

describe("a checkout in a private directory", () => {
  it(`starts, with Postgres running as ${isRoot ? "the postgres system user" : "the caller"}`, async () => {
    // A copy of the checkout under a mode-700 directory, as `git clone . "$(mktemp -d)/p"` makes it;
    // node_modules hard-linked (a plain copy where links cannot cross file systems).
    const parent = privateDir("delivery-platform-private-");
    const checkout = resolve(parent, "p");
    mkdirSync(checkout);
    for (const entry of ["local", "common", "functions", "supabase", "sql", "package.json", "deno.json"]) {
      cpSync(resolve(projectRoot, entry), resolve(checkout, entry), { recursive: true });
    }
    const linked = spawnSync("cp", ["-al", resolve(projectRoot, "node_modules"), resolve(checkout, "node_modules")]);
    if (linked.status !== 0) {
      cpSync(resolve(projectRoot, "node_modules"), resolve(checkout, "node_modules"), { recursive: true });
    }
    const [apiPort, dbPort] = [await freePort(), await freePort()];
    const dataDir = resolve(checkout, ".local");
    const child = spawn(resolve(checkout, "node_modules/.bin/deno"), ["run", "-A", "local/start.ts"], {
      cwd: checkout,
      env: { ...process.env, API_PORT: String(apiPort), DB_PORT: String(dbPort), DATA_DIR: ".local", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let binary = "";
    child.stdout.on("data", (c) => (output += c));
    child.stderr.on("data", (c) => (output += c));
    try {
      const deadline = Date.now() + 120_000;
      while (!output.includes("Press Ctrl-C") && child.exitCode === null && Date.now() < deadline) await sleep(200);
      expect(output).toContain("Press Ctrl-C");
      const health = await fetch(`http://127.0.0.1:${apiPort}/health`);
      expect(health.status).toBe(200);
      const postmaster = Number(readFileSync(resolve(dataDir, "postgres/postmaster.pid"), "utf8").split("\n")[0]);
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${postmaster}/status`, "utf8"))![1]);
      const expected = isRoot
        ? Number(spawnSync("id", ["-u", "postgres"]).stdout.toString().trim())
        : process.getuid!();
      expect(uid).toBe(expected);
      if (isRoot) expect(uid).not.toBe(0);
      // Under root the binaries ran from a copy the postgres user can reach; stopping removes it.
      binary = readlinkSync(`/proc/${postmaster}/exe`);
      if (isRoot) expect(binary).toMatch(/^\/tmp\/delivery-platform-postgres-[^/]+\/bin\/postgres$/);
    } finally {
      const gone = new Promise((r) => child.once("exit", r));
      if (child.exitCode === null) child.kill("SIGTERM");
      await Promise.race([gone, sleep(20_000)]);
      for (const p of processesMentioning(dataDir)) process.kill(p.pid, "SIGKILL");
      rmSync(parent, { recursive: true, force: true });
    }
    expect(child.exitCode).toBe(0);
    if (binary.startsWith("/tmp/delivery-platform-postgres-")) expect(existsSync(resolve(binary, "../.."))).toBe(false);
  }, 150_000);
});

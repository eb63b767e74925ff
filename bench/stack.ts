// What the benchmarks share: the local stack on free loopback ports with a
// fresh database (started as `npm start` does, stopped and removed at the end),
// users arranged in SQL and signed in through the identity provider, a small
// worker pool and percentiles. Nothing here is product code.
import bcrypt from "bcryptjs";
import type postgres from "postgres";
import { queueAtOnce, TRANSACTION_BUDGET_MS } from "../functions/_shared/db.ts";
import { claimsStatement as proxyClaimsStatement } from "../functions/_shared/sql-text.ts";
import type { Claims } from "../functions/_shared/jwt.ts";

export function positiveInt(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

export interface Stack {
  apiUrl: string;
  dbUrl: string;
  anonKey: string;
  serviceRoleKey: string;
  /** The stack's Deno process (its Postgres runs under it). */
  pid: number;
  stop(): Promise<void>;
}

/** The local stack as `npm start` runs it, on free ports, with a fresh database of its own. */
export async function startStack(extraEnv: Record<string, string> = {}): Promise<Stack> {
  const root = new URL("../", import.meta.url);
  const dataDir = new URL(`.test-stack/bench-${Deno.pid}/`, root).pathname;
  const apiPort = freePort();
  // BENCH_DENO_FLAGS: more flags for the stack's `deno run`, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" for a
  // V8 CPU profile written when the stack stops (bench/profile.ts reads it).
  const flags = (Deno.env.get("BENCH_DENO_FLAGS") ?? "").split(/\s+/).filter(Boolean);
  // The stack writes its output to a file, not to a pipe this process would have to read: its log lines (one per
  // webhook, say) are then no work of the client's, whose CPU is part of the figures.
  const logFile = new URL(`.test-stack/bench-${Deno.pid}.log`, root).pathname;
  await Deno.mkdir(new URL(".test-stack/", root), { recursive: true });
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const command = [Deno.execPath(), "run", "-A", ...flags, "local/start.ts", "--reset"].map(quote).join(" ");
  const child = new Deno.Command("sh", {
    // exec: the shell becomes the stack's process (its pid, its signals).
    args: ["-c", `exec ${command} > ${quote(logFile)} 2>&1`],
    cwd: root,
    env: {
      API_PORT: String(apiPort),
      DB_PORT: String(freePort()),
      DATA_DIR: dataDir,
      NO_COLOR: "1",
      // The benchmarks sign many users in from one address: Auth's per-IP limits (config.toml) are lifted.
      GOTRUE_RATE_LIMIT_TOKEN_REFRESH: "1000000000",
      GOTRUE_RATE_LIMIT_OTP: "1000000000",
      GOTRUE_RATE_LIMIT_VERIFY: "1000000000",
      ...extraEnv,
    },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();

  const output = () => Deno.readTextFile(logFile).catch(() => "");
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  const stop = async () => {
    if (!exited) {
      child.kill("SIGINT");
      const timer = setTimeout(() => !exited && child.kill("SIGKILL"), 10_000);
      await status;
      clearTimeout(timer);
    }
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    await Deno.remove(logFile).catch(() => {});
  };

  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const startedBy = Date.now() + 180_000; // a loaded machine (or the web app being built) may take minutes
  let banner = "";
  while (!(banner = await output()).includes("Press Ctrl-C")) {
    if (exited || Date.now() > startedBy) {
      await stop();
      throw new Error(`the local stack did not start:\n${banner}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const field = (name: string) => new RegExp(`${name}: (\\S+)`).exec(banner)?.[1] ?? "";
  return {
    apiUrl,
    dbUrl: field("DB URL"),
    anonKey: field("anon key"),
    serviceRoleKey: field("service_role key"),
    pid: child.pid,
    stop,
  };
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const PASSWORD = "bench-password";

export interface NewUser {
  userId: string;
  email: string;
  /** user_metadata; `{ role: "admin" }` makes the older-form admin token. */
  metadata?: Record<string, unknown>;
}

/** Auth users straight in SQL, with a cheap bcrypt cost so that signing them in is quick. */
export async function insertUsers(tx: postgres.TransactionSql | postgres.Sql, users: NewUser[]): Promise<void> {
  const hash = bcrypt.hashSync(PASSWORD, 4);
  for (const user of users) {
    await tx`insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
               raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
               confirmation_token, recovery_token, email_change_token_new, email_change)
             values ('00000000-0000-0000-0000-000000000000', ${user.userId}, 'authenticated', 'authenticated',
               ${user.email}, ${hash}, now(), '{"provider": "email", "providers": ["email"]}',
               jsonb_strip_nulls(jsonb_build_object('role', ${
      (user.metadata?.role as string) ?? null
    }::text)), now(), now(), '', '', '', '')`;
  }
}

export interface SignedIn {
  token: string;
  claims: Record<string, unknown>;
}

/** A real access token from the local identity provider (the access token hook adds role and company). */
export async function signIn(stack: Stack, email: string): Promise<SignedIn> {
  const res = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { "content-type": "application/json", apikey: stack.anonKey },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const token = (await res.json()).access_token as string;
  const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
  return { token, claims };
}

/** A company through the public API (its owner signed in). */
export async function registerCompany(stack: Stack, name: string): Promise<{ companyId: string; owner: SignedIn }> {
  const email = `owner-${crypto.randomUUID()}@bench.example`;
  const registered = await fetch(`${stack.apiUrl}/api/v1/companies/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ company_name: name, owner_name: "Owner", email, password: PASSWORD }),
  });
  if (registered.status !== 201) {
    throw new Error(`registration failed: ${registered.status} ${await registered.text()}`);
  }
  const { company_id: companyId } = await registered.json();
  return { companyId, owner: await signIn(stack, email) };
}

/**
 * The claims statement the proxy sends before each call (functions/_shared/db.ts
 * claimsStatement itself: the same values inline, the same statement timeout),
 * so the direct side of a benchmark does the same work as the proxy.
 */
export function claimsStatement(claims: Record<string, unknown>): [string, string[]] {
  return [proxyClaimsStatement(claims as Claims, String(claims.role ?? "anon"), TRANSACTION_BUDGET_MS), []];
}

/**
 * One transaction sent the way functions/_shared/db.ts asUser sends it: `begin`
 * and every statement in one write (postgres.js pipelines the queries of one
 * tick on a reserved connection, up to the first with parameters, whose values
 * wait for the server's description of it), then `commit`. The rows of the
 * last statement.
 */
export async function pipelined(sql: postgres.Sql, statements: [string, unknown[]][]): Promise<postgres.Row[]> {
  const conn = await sql.reserve();
  try {
    let results: postgres.Row[][];
    try {
      results = await Promise.all([
        conn.unsafe("begin"),
        // deno-lint-ignore no-explicit-any
        ...statements.map(([q, args]) => conn.unsafe(q, args as any[])),
      ]);
    } catch (error) {
      await conn.unsafe("rollback").catch(() => {});
      throw error;
    }
    await conn.unsafe("commit");
    return results[results.length - 1];
  } finally {
    conn.release();
  }
}

/**
 * One transaction of statements known in advance, as `claims`, sent by
 * functions/_shared/db.ts's own queueAtOnce (as asUserAtOnce sends it): `begin`,
 * the claims statement, every statement and `commit` queued at once. The rows
 * of each statement.
 */
export async function atOnce(
  sql: postgres.Sql,
  claims: Claims,
  statements: [string, unknown[]][],
): Promise<postgres.Row[][]> {
  const conn = await sql.reserve();
  try {
    return await queueAtOnce(conn, claims, claims.role ?? "anon", TRANSACTION_BUDGET_MS, statements);
  } finally {
    conn.release();
  }
}

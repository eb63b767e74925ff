// The database connection of the Edge Functions: postgres.js on SUPABASE_DB_URL,
// `prepare: false` so it also works through Supavisor in transaction mode.
// `asUser` runs a request the way PostgREST does: one transaction, `set local
// role` to the token's role and `request.jwt.claims` to its claims, so every
// row-level security policy and every function check applies unchanged.
import postgres from "postgres";
import { env } from "./env.ts";
import type { Claims } from "./jwt.ts";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

let pool: Sql | undefined;

export function db(): Sql {
  pool ??= postgres(env().SUPABASE_DB_URL, {
    prepare: false,
    max: 10,
    idle_timeout: 20,
    connect_timeout: 5,
    onnotice: () => {},
  });
  return pool;
}

/** Postgres roles a token may select; anything else is refused before SQL sees it. */
export const TOKEN_ROLES = new Set(["anon", "authenticated", "service_role", "company_owner", "company_admin", "driver"]);

export async function asUser<T>(claims: Claims, work: (tx: Tx) => Promise<T>): Promise<T> {
  const role = claims.role ?? "anon";
  if (!TOKEN_ROLES.has(role)) throw new Error(`unsupported role claim: ${role}`);
  const conn = await db().reserve();
  try {
    // `begin`, the claims and role (set_config('role', ..., true) is `set local
    // role`, as PostgREST does it) and the work's first statement leave in one
    // write: postgres.js pipelines the queries of one tick on a connection, and
    // Postgres runs them in order, so the first statement already runs as the
    // token's role. The commit is the second round trip (sql.begin would make
    // four: begin, claims, statement, commit, each awaited).
    const opened = Promise.all([
      conn.unsafe("begin"),
      conn`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                  set_config('request.jwt.claim.sub', ${claims.sub ?? ""}, true),
                  set_config('request.jwt.claim.role', ${role}, true),
                  set_config('role', ${role}, true)`,
    ]);
    opened.catch(() => {}); // awaited below; a failure there fails the work's statements too
    let result: T;
    try {
      result = await work(conn as unknown as Tx);
      await opened;
    } catch (error) {
      await conn.unsafe("rollback").catch(() => {});
      // A failed begin or claims statement is the cause; the work's error is then only "transaction aborted".
      throw (await opened.then(() => null, (cause) => cause)) ?? error;
    }
    await conn.unsafe("commit");
    return result;
  } finally {
    conn.release();
  }
}

/**
 * A transaction of statements known in advance, as `claims`: `begin`, the
 * claims and role, every statement and `commit` leave in one write, one round
 * trip. The rows of each statement. The first error is thrown; Postgres has then
 * ended the transaction, the commit acting as a rollback.
 */
export async function asUserAtOnce(claims: Claims, statements: [string, unknown[]][]): Promise<postgres.Row[][]> {
  const role = claims.role ?? "anon";
  if (!TOKEN_ROLES.has(role)) throw new Error(`unsupported role claim: ${role}`);
  const conn = await db().reserve();
  try {
    const settled = await Promise.allSettled([
      conn.unsafe("begin"),
      conn`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                  set_config('request.jwt.claim.sub', ${claims.sub ?? ""}, true),
                  set_config('request.jwt.claim.role', ${role}, true),
                  set_config('role', ${role}, true)`,
      // deno-lint-ignore no-explicit-any
      ...statements.map(([text, args]) => conn.unsafe(text, args as any[])),
      conn.unsafe("commit"),
    ]);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) {
      // Whatever failed, no transaction may stay open on the connection.
      await conn.unsafe("rollback").catch(() => {});
      throw failed.reason;
    }
    return settled.slice(2, 2 + statements.length).map((s) => (s as PromiseFulfilledResult<postgres.Row[]>).value);
  } finally {
    conn.release();
  }
}

/** The same, as the service role. */
export function asServiceAtOnce(statements: [string, unknown[]][]): Promise<postgres.Row[][]> {
  return asUserAtOnce({ role: "service_role" }, statements);
}

/** A transaction as the service role (webhooks, which carry no user). */
export async function asService<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  return await asUser({ role: "service_role" }, work);
}

/** Calls `public.<fn>(name => value, ...)` and returns its jsonb result. */
export async function rpc<T = unknown>(tx: Tx, fn: string, args: Record<string, unknown> = {}): Promise<T> {
  const names = Object.keys(args);
  // Names go into the statement itself; only plain identifiers, never input.
  for (const name of [fn, ...names]) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not an SQL identifier: ${name}`);
  }
  const call = `select public.${fn}(${names.map((name, i) => `${name} => $${i + 1}`).join(", ")}) as result`;
  // deno-lint-ignore no-explicit-any
  const [row] = await tx.unsafe(call, names.map((name) => args[name] ?? null) as any[]);
  return row.result as T;
}

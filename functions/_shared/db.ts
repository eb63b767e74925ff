// The database connection of the Edge Functions: postgres.js on SUPABASE_DB_URL,
// `prepare: false` so it also works through Supavisor in transaction mode.
// `asUser` runs a request the way PostgREST does: one transaction, `set local
// role` to the token's role and `request.jwt.claims` to its claims, so every
// row-level security policy and every function check applies unchanged.
//
// Every transaction has a deadline (3.5 s by default, less when the request's
// budget ends sooner: request-scope.ts), waiting for a pool connection
// included: postgres.js queues a query for as long as every connection is
// busy, so a locked table or a lost server would otherwise keep requests
// waiting for ever. Past the deadline, and when the server cannot be reached,
// the caller gets a 503 (DatabaseUnavailable); a transaction whose caller
// already got its answer is rolled back, never committed.
//
// In a request that carries an Idempotency-Key, every transaction also notes
// under the key, right before its commit, whether it wrote anything
// (private.note_idempotent_write): a request cut off before its answer was
// stored is then run again only if it changed nothing.
import postgres from "postgres";
import { env } from "./env.ts";
import { DatabaseUnavailable, isConnectionError } from "./errors.ts";
import type { Database } from "./database.types.ts";
import type { Claims } from "./jwt.ts";
import { idempotentRequestId, transactionDeadline } from "./request-scope.ts";
import { claimsStatement } from "./sql-text.ts";
import { byDeadline } from "./timeout.ts";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
export type Row = postgres.Row;

/** How long one transaction may take, from asking for a connection to its commit. */
export const TRANSACTION_BUDGET_MS = 3_500;
/** Time for the server's own statement timeout to arrive before we stop waiting for it. */
const GRACE_MS = 300;

let pool: Sql | undefined;

export function db(): Sql {
  pool ??= postgres(env().SUPABASE_DB_URL, {
    prepare: false,
    max: 10,
    idle_timeout: 20,
    connect_timeout: 3,
    onnotice: () => {},
  });
  return pool;
}

/** /health's probe: true when `select 1` answers within `timeoutMs`. */
export function ping(timeoutMs: number): Promise<boolean> {
  return byDeadline(db()`select 1`.then(() => true, () => false), timeoutMs, () => false);
}

export interface TransactionOptions {
  /** When the transaction must be over (epoch ms); default TRANSACTION_BUDGET_MS from now. */
  deadline?: number;
}

/** Raised inside a transaction whose caller stopped waiting: it rolls the transaction back. */
class Abandoned extends Error {}

/**
 * The transaction's outcome, or a 503 at its deadline (plus the grace for the server's own statement timeout
 * to arrive), whichever comes first; `abandon` tells the transaction its caller stopped waiting. A server
 * that cannot be reached is a 503 too.
 */
async function answerByDeadline<T>(run: Promise<T>, deadline: number, abandon: () => void = () => {}): Promise<T> {
  const busy = () => new DatabaseUnavailable("The database is busy; try again");
  try {
    // The transaction may still settle after the deadline has answered.
    return await byDeadline(run, Math.max(deadline - Date.now(), 0) + GRACE_MS, () => {
      abandon();
      throw busy();
    });
  } catch (error) {
    if (error instanceof Abandoned) throw busy();
    if (isConnectionError(error)) throw new DatabaseUnavailable();
    throw error;
  }
}

/** Postgres roles a token may select; anything else is refused before SQL sees it. */
export const TOKEN_ROLES = new Set([
  "anon",
  "authenticated",
  "service_role",
  "company_owner",
  "company_admin",
  "driver",
]);

/**
 * Admits a role the database itself named for a caller it authenticated (an
 * API key's role, private.integrations(): api-keys.ts), so that no list of
 * those roles is kept here. Only roles the database returns reach it.
 */
export function admitDatabaseRole(role: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(role)) throw new Error(`not a role name: ${role}`);
  TOKEN_ROLES.add(role);
}

/**
 * Whether `errors` say the connection itself is lost. Such a connection is
 * neither rolled back nor given back to the pool: the server has rolled back
 * already, and postgres.js would write the rollback to a closed socket (an
 * uncaught TypeError in its next write); and a closed connection given back
 * goes among its open ones, to the next caller, whose first write fails the
 * same way. Kept back, it stays among the closed ones, which postgres.js opens
 * again when it needs them.
 */
function lostConnection(...errors: unknown[]): boolean {
  return errors.some(isConnectionError);
}

function claimsQuery(conn: postgres.ReservedSql, claims: Claims, role: string, left: number) {
  return conn.unsafe(claimsStatement(claims, role, left));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The statement a transaction of a keyed request runs before its commit; none outside one. */
function idempotentWriteNote(): string | null {
  const id = idempotentRequestId();
  if (id === undefined) return null;
  if (!UUID.test(id)) throw new Error("not an idempotency key's id");
  return `select private.note_idempotent_write('${id}')`;
}

/**
 * Queues `begin`, the claims and role, `statements` and `commit` on `conn`
 * (they leave with whatever is written next); the rows of each statement. The
 * first error is thrown (a lost connection's first, see lostConnection);
 * Postgres has then ended the transaction, the commit acting as a rollback,
 * and a rollback after it closes whatever may still be open. The benches'
 * direct sides send their transactions with it too.
 */
export async function queueAtOnce(
  conn: postgres.ReservedSql,
  claims: Claims,
  role: string,
  left: number,
  statements: [string, unknown[]][],
): Promise<postgres.Row[][]> {
  const note = idempotentWriteNote();
  const settled = await Promise.allSettled([
    conn.unsafe("begin"),
    claimsQuery(conn, claims, role, left),
    // deno-lint-ignore no-explicit-any
    ...statements.map(([text, args]) => conn.unsafe(text, args as any[])),
    ...(note ? [conn.unsafe(note)] : []),
    conn.unsafe("commit"),
  ]);
  const failures = settled.filter((s) => s.status === "rejected").map((s) => (s as PromiseRejectedResult).reason);
  if (failures.length > 0) {
    // A lost connection says so first (the caller keeps it back); otherwise no transaction may stay open on it.
    const lost = failures.find((failure) => lostConnection(failure));
    if (lost) throw lost;
    await conn.unsafe("rollback").catch(() => {});
    throw failures[0];
  }
  return settled.slice(2, 2 + statements.length).map((s) => (s as PromiseFulfilledResult<postgres.Row[]>).value);
}

export async function asUser<T>(
  claims: Claims,
  work: (tx: Tx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const role = claims.role ?? "anon";
  if (!TOKEN_ROLES.has(role)) throw new Error(`unsupported role claim: ${role}`);
  const deadline = options.deadline ?? transactionDeadline(TRANSACTION_BUDGET_MS);
  let abandoned = false;
  const run = (async () => {
    const conn = await db().reserve();
    let lost = false;
    try {
      // A connection that came after the caller got its 503 does nothing.
      const left = Math.floor(deadline - Date.now());
      if (abandoned || left < 20) throw new Abandoned();
      // `begin`, the claims, role and statement timeout (values inline) and the
      // work's first statement leave in one write: postgres.js pipelines the
      // queries of one tick on a connection, and Postgres runs them in order, so
      // the first statement already runs as the token's role. A statement with
      // parameters is sent as its text first and its values once the server has
      // described it (postgres.js with `prepare: false`): one round trip more.
      // Then the commit (sql.begin would await each statement on its own).
      const opened = Promise.all([conn.unsafe("begin"), claimsQuery(conn, claims, role, left)]);
      opened.catch(() => {}); // awaited below; a failure there fails the work's statements too
      let result: T;
      try {
        result = await work(conn as unknown as Tx);
        await opened;
        // Rolled back rather than committed behind a 503.
        if (abandoned) throw new Abandoned();
      } catch (error) {
        // A failed begin or claims statement is the cause; the work's error is then only "transaction aborted".
        const cause = (await opened.then(() => null, (cause) => cause)) ?? error;
        lost = lostConnection(cause, error);
        if (!lost) await conn.unsafe("rollback").catch(() => {});
        throw cause;
      }
      // Sent with the commit, in the same write: the note and the work commit together or not at all.
      const note = idempotentWriteNote();
      const noted = note ? conn.unsafe(note) : undefined;
      noted?.catch(() => {}); // awaited below
      const committed = conn.unsafe("commit");
      // A failed note ends the transaction, its commit then a rollback: the note's error is the outcome.
      const [noteOutcome, commitOutcome] = await Promise.allSettled([noted, committed]);
      const failure = [noteOutcome, commitOutcome].find((o) => o.status === "rejected") as
        | PromiseRejectedResult
        | undefined;
      if (failure) {
        lost = lostConnection(failure.reason);
        throw failure.reason;
      }
      return result;
    } finally {
      if (!lost) conn.release();
    }
  })();
  return await answerByDeadline(run, deadline, () => (abandoned = true));
}

/**
 * A transaction of statements known in advance, as `claims`: `begin`, the
 * claims and role, every statement and `commit` are queued at once and leave
 * in one write, one round trip, when no statement has parameters (sql-text.ts,
 * inlined); otherwise up to the first that has, whose values follow its
 * description (see asUser). The rows of each statement. The first error is
 * thrown; Postgres has then ended the transaction, the commit acting as a
 * rollback.
 */
export async function asUserAtOnce(
  claims: Claims,
  statements: [string, unknown[]][],
  options: TransactionOptions = {},
): Promise<postgres.Row[][]> {
  const role = claims.role ?? "anon";
  if (!TOKEN_ROLES.has(role)) throw new Error(`unsupported role claim: ${role}`);
  const deadline = options.deadline ?? transactionDeadline(TRANSACTION_BUDGET_MS);
  const run = (async () => {
    const conn = await db().reserve();
    let lost = false;
    try {
      const left = Math.floor(deadline - Date.now());
      if (left < 20) throw new Abandoned();
      return await queueAtOnce(conn, claims, role, left, statements);
    } catch (error) {
      lost = lostConnection(error);
      throw error;
    } finally {
      if (!lost) conn.release();
    }
  })();
  // Queued at once, the transaction cannot be abandoned half-way; the statement timeout ends it at the deadline.
  return await answerByDeadline(run, deadline);
}

/** The same, as the service role. */
export function asServiceAtOnce(statements: [string, unknown[]][]): Promise<postgres.Row[][]> {
  return asUserAtOnce({ role: "service_role" }, statements);
}

/** A transaction as the service role (webhooks, which carry no user). */
export async function asService<T>(work: (tx: Tx) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
  return await asUser({ role: "service_role" }, work, options);
}

type Functions = Database["public"]["Functions"];
/** A function's named arguments as `supabase gen types` gives them; null or undefined stands for "not given". */
type RpcArgs<F extends keyof Functions> = {
  [K in keyof Functions[F]["Args"]]: Functions[F]["Args"][K] | null | undefined;
};

/**
 * Calls `public.<fn>(name => value, ...)` and returns its result as JSON: the
 * functions return typed rows (composite types), and to_jsonb gives them the
 * JSON shape PostgREST gives apps. Names, arguments and the result's type come
 * from the generated database.types.ts, so a call the schema no longer has
 * fails `deno check`.
 */
export async function rpc<F extends keyof Functions>(
  tx: Tx,
  fn: F,
  args: RpcArgs<F> = {} as RpcArgs<F>,
): Promise<Functions[F]["Returns"]> {
  const [call, values] = rpcStatement(fn, args);
  // deno-lint-ignore no-explicit-any
  const [row] = await tx.unsafe(call, values as any[]);
  return row.result;
}

/** rpc's statement and its values, for a transaction sent at once (its one row's `result` is the answer). */
export function rpcStatement<F extends keyof Functions>(
  fn: F,
  args: RpcArgs<F> = {} as RpcArgs<F>,
): [string, unknown[]] {
  const values = args as Record<string, unknown>;
  const names = Object.keys(values);
  // Names go into the statement itself; only plain identifiers, never input.
  for (const name of [fn, ...names]) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not an SQL identifier: ${name}`);
  }
  const call = `select to_jsonb(public.${fn}(${names.map((name, i) => `${name} => $${i + 1}`).join(", ")})) as result`;
  return [call, names.map((name) => values[name] ?? null)];
}

// Authorization of private channels with the realtime.messages policies, as
// Realtime does it (lib/realtime/tenants/authorization.ex): probe rows are
// inserted as the superuser, then, acting as the token's role with its claims
// and the topic set, whatever of them RLS lets us select back is what the role
// may read; an insert of its own says whether it may write. Everything happens
// in one transaction that is always rolled back, so no probe is ever seen (nor
// its NOTIFY sent).
import postgres from "postgres";
import { log } from "./log.ts";
import type { ChannelClaims } from "./tokens.ts";

export interface Policies {
  broadcastRead: boolean;
  broadcastWrite: boolean;
  /** Null when presence was not enabled on the join: Realtime then leaves it unevaluated. */
  presenceRead: boolean | null;
  /** Evaluated on the first `track` of a private channel (PresenceHandler), null until then. */
  presenceWrite: boolean | null;
}

export interface AuthorizationContext {
  /** The topic without its `realtime:` prefix, as policies see it through realtime.topic(). */
  topic: string;
  claims: ChannelClaims;
  /** The x-* headers of the WebSocket upgrade, which Realtime exposes as request.headers. */
  headers: Record<string, string>;
  presenceEnabled: boolean;
}

export type AuthorizationResult =
  | { ok: true; policies: Policies }
  | { ok: false; error: "rls_policy_error" | "database_unavailable" };

/** Thrown to end the transaction with a rollback while carrying its result out. */
class RolledBack<T> {
  constructor(readonly result: T) {}
}

async function inRolledBackTransaction<T>(
  sql: postgres.Sql,
  work: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  const outcome = await sql.begin(async (tx) => {
    throw new RolledBack(await work(tx));
  }).catch((thrown: unknown) => thrown);
  if (outcome instanceof RolledBack) return outcome.result as T;
  throw outcome;
}

/** What PostgREST and Realtime set for RLS: the role, the claims, and the topic. */
async function actAs(tx: postgres.TransactionSql, context: AuthorizationContext): Promise<void> {
  const { claims, topic, headers } = context;
  // set_config('role', ...) is SET LOCAL ROLE with the name as a bound value:
  // Postgres rejects a role that does not exist, and nothing can be injected.
  await tx`select
    set_config('role', ${claims.role}, true),
    set_config('realtime.topic', ${topic}, true),
    set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
    set_config('request.jwt.claim.sub', ${claims.sub ?? ""}, true),
    set_config('request.jwt.claim.role', ${claims.role}, true),
    set_config('request.headers', ${JSON.stringify(headers)}, true)`;
}

async function mayInsert(
  tx: postgres.TransactionSql,
  context: AuthorizationContext,
  extension: "broadcast" | "presence",
): Promise<boolean> {
  try {
    await tx.savepoint((sp) =>
      sp`insert into realtime.messages (topic, extension) values (${context.topic}, ${extension})`
    );
    return true;
  } catch (error) {
    if (!(error instanceof postgres.PostgresError)) throw error;
    // 42501 is RLS (or a missing grant) refusing the row; anything else is a broken policy,
    // which Realtime logs and treats as no permission.
    if (error.code !== "42501") {
      log("write_policy_error", { topic: context.topic, role: context.claims.role, error: error.message });
    }
    return false;
  }
}

async function evaluate(tx: postgres.TransactionSql, context: AuthorizationContext): Promise<Policies> {
  const extensions = context.presenceEnabled ? ["broadcast", "presence"] : ["broadcast"];
  const probes = extensions.map((extension) => ({ id: crypto.randomUUID(), topic: context.topic, extension }));
  await tx`insert into realtime.messages ${tx(probes, "id", "topic", "extension")}`;
  await actAs(tx, context);
  const visible = await tx<{ id: string }[]>`
    select id from realtime.messages where id in ${tx(probes.map((p) => p.id))}`;
  const visibleIds = new Set(visible.map((row) => row.id));
  const readable = (extension: string) => probes.some((p) => p.extension === extension && visibleIds.has(p.id));
  return {
    broadcastRead: readable("broadcast"),
    broadcastWrite: await mayInsert(tx, context, "broadcast"),
    presenceRead: context.presenceEnabled ? readable("presence") : null,
    presenceWrite: null,
  };
}

/**
 * Realtime's get_write_authorizations: whether the role may insert a row of
 * each extension for the topic (a presence `track`, a REST broadcast).
 */
export async function authorizeWrite(
  sql: postgres.Sql,
  context: AuthorizationContext,
): Promise<{ ok: true; broadcastWrite: boolean; presenceWrite: boolean } | { ok: false; error: string }> {
  try {
    return await inRolledBackTransaction(sql, async (tx) => {
      await actAs(tx, context);
      return {
        ok: true as const,
        broadcastWrite: await mayInsert(tx, context, "broadcast"),
        presenceWrite: await mayInsert(tx, context, "presence"),
      };
    });
  } catch (error) {
    return failed(context, error);
  }
}

export async function authorize(sql: postgres.Sql, context: AuthorizationContext): Promise<AuthorizationResult> {
  try {
    return { ok: true, policies: await inRolledBackTransaction(sql, (tx) => evaluate(tx, context)) };
  } catch (error) {
    return failed(context, error);
  }
}

/**
 * A check that could not run: an unknown role or a policy that raises (Realtime logs RlsPolicyError and refuses),
 * or the database away.
 */
function failed(
  context: AuthorizationContext,
  error: unknown,
): { ok: false; error: "rls_policy_error" | "database_unavailable" } {
  if (error instanceof postgres.PostgresError) {
    log("rls_policy_error", { topic: context.topic, role: context.claims.role, error: error.message });
    return { ok: false, error: "rls_policy_error" };
  }
  log("database_unavailable", { topic: context.topic, error: String(error) });
  return { ok: false, error: "database_unavailable" };
}

// GoTrue connects to Postgres as `supabase_auth_admin`. The local provider
// gets a superuser pool, so each of its transactions takes that role first:
// the auth tables' ownership and the hook's grants are then exercised exactly
// as on Supabase (a hook not granted to supabase_auth_admin fails here too).
import type postgres from "postgres";

export async function authTransaction<T>(
  sql: postgres.Sql,
  work: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  return await sql.begin(async (tx) => {
    await tx`set local role supabase_auth_admin`;
    return await work(tx);
  }) as T;
}

/** GoTrue writes the nil UUID as every row's `instance_id`, and treats it as "no session" in a token. */
export const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** A jsonb parameter. (A pre-serialized string would be encoded a second time, as a JSON string.) */
export function jsonb(db: postgres.Sql | postgres.TransactionSql, value: Record<string, unknown>): postgres.Parameter {
  return db.json(value as postgres.JSONValue);
}

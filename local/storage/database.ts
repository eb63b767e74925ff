// Storage's database access: every read and write of a caller runs in one
// transaction as that caller (the role of its token, its claims, the request's
// headers, method and path, as storage-api's connection scope sets them), so
// the policies on storage.buckets and storage.objects decide; what Storage
// does as its superuser (finding a bucket, completing an upload) runs without
// a role. A permission test runs the write as the caller and rolls it back.
import type postgres from "postgres";
import type { Claims } from "../../common/jwt.ts";
import { fromDatabaseError } from "./errors.ts";

export interface Caller {
  claims: Claims & { role: string };
  /** The token the request brought ("" when none). */
  jwt: string;
  /** Storage's isAuthenticated: the request carried a token that verified. */
  authenticated: boolean;
}

export interface RequestScope {
  headers: Record<string, string>;
  method: string;
  path: string;
  /** Storage's operation name (e.g. storage.object.upload), which policies can read as storage.operation. */
  operation: string;
}

export type Tx = postgres.TransactionSql;

/** Thrown to roll a transaction back while carrying its result out. */
class RolledBack<T> {
  constructor(readonly result: T) {}
}

async function setScope(tx: Tx, caller: Caller, scope: RequestScope): Promise<void> {
  await tx`select
    set_config('role', ${caller.claims.role}, true),
    set_config('request.jwt.claim.role', ${caller.claims.role}, true),
    set_config('request.jwt', ${caller.jwt}, true),
    set_config('request.jwt.claim.sub', ${caller.claims.sub ?? ""}, true),
    set_config('request.jwt.claims', ${JSON.stringify(caller.claims)}, true),
    set_config('request.headers', ${JSON.stringify(scope.headers)}, true),
    set_config('request.method', ${scope.method}, true),
    set_config('request.path', ${scope.path}, true),
    set_config('storage.operation', ${scope.operation}, true)`;
}

export class StorageDb {
  constructor(readonly sql: postgres.Sql) {}

  /** `work` in one transaction as the caller; Postgres errors become Storage's. */
  async asCaller<T>(caller: Caller, scope: RequestScope, work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.sql.begin(async (tx) => {
        await setScope(tx, caller, scope);
        return await work(tx);
      }) as T;
    } catch (error) {
      throw fromDatabaseError(error);
    }
  }

  /** `work` in one transaction as Storage's superuser: first `asSuper`, then, after `becomeCaller`, as the caller. */
  async inTransaction<T>(
    work: (tx: Tx, becomeCaller: (caller: Caller, scope: RequestScope) => Promise<void>) => Promise<T>,
  ) {
    try {
      return await this.sql.begin((tx) => work(tx, (caller, scope) => setScope(tx, caller, scope))) as T;
    } catch (error) {
      throw fromDatabaseError(error);
    }
  }

  /** `work` as Storage's superuser (no RLS). */
  async asSuper<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      return await this.sql.begin(work) as T;
    } catch (error) {
      throw fromDatabaseError(error);
    }
  }

  /**
   * Runs `work` as the caller (or, with null, as the superuser) and rolls it
   * back: whether it may be done (Storage's testPermission).
   */
  async testPermission(caller: Caller | null, scope: RequestScope, work: (tx: Tx) => Promise<unknown>): Promise<void> {
    try {
      await this.sql.begin(async (tx) => {
        if (caller) await setScope(tx, caller, scope);
        throw new RolledBack(await work(tx));
      });
    } catch (error) {
      if (error instanceof RolledBack) return;
      throw fromDatabaseError(error);
    }
  }
}

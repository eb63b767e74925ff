// Sessions and their refresh tokens, kept as GoTrue keeps database-stored
// refresh tokens: every exchange revokes the presented token and issues a
// child, so the tokens of one session form a chain (its "family") in
// auth.refresh_tokens, and ending the session deletes the whole family.
import type postgres from "postgres";
import { NIL_UUID } from "./db.ts";

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  aal: string | null;
}

interface RefreshTokenRow {
  id: string;
  token: string;
  user_id: string;
  revoked: boolean;
  parent: string | null;
  /** Whether the reuse interval since the token's revocation has passed. */
  reuse_expired: boolean;
}

const TOKEN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** GoTrue's are 12 characters; 32 give ~165 bits, and clients treat the token as opaque. */
const TOKEN_LENGTH = 32;
/** GoTrue refuses anything shorter without looking it up. */
export const MIN_REFRESH_TOKEN_LENGTH = 12;

function newRefreshToken(): string {
  const chars: string[] = [];
  while (chars.length < TOKEN_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(TOKEN_LENGTH))) {
      // Bytes from 252 up would favour the first letters; drop them.
      if (byte < 252 && chars.length < TOKEN_LENGTH) chars.push(TOKEN_ALPHABET[byte % TOKEN_ALPHABET.length]);
    }
  }
  return chars.join("");
}

async function insertRefreshToken(
  tx: postgres.TransactionSql,
  userId: string,
  sessionId: string,
  parent: string | null,
): Promise<string> {
  const token = newRefreshToken();
  await tx`
    insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
    values (${NIL_UUID}, ${token}, ${userId}, false, now(), now(), ${parent}, ${sessionId})`;
  return token;
}

/**
 * A new session with its first refresh token, and the way it was
 * authenticated recorded as GoTrue records it (auth.mfa_amr_claims), for the
 * tokens' `amr` claim.
 */
export async function startSession(
  tx: postgres.TransactionSql,
  userId: string,
  userAgent: string | null,
  method: string,
): Promise<{ session: SessionRow; refreshToken: string }> {
  const [session] = await tx<SessionRow[]>`
    insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent)
    values (${crypto.randomUUID()}, ${userId}, now(), now(), 'aal1', ${userAgent})
    returning *`;
  await tx`
    insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method)
    values (${crypto.randomUUID()}, ${session.id}, now(), now(), ${method})`;
  return { session, refreshToken: await insertRefreshToken(tx, userId, session.id, null) };
}

/** The session's `amr` claim: each way it was authenticated, the most recent first. */
export async function sessionAmr(
  tx: postgres.TransactionSql,
  sessionId: string,
): Promise<{ method: string; timestamp: number }[]> {
  const rows = await tx<{ method: string; timestamp: number }[]>`
    select authentication_method as method, extract(epoch from updated_at)::bigint::int as timestamp
    from auth.mfa_amr_claims where session_id = ${sessionId}
    order by updated_at desc`;
  return rows.map((row) => ({ method: row.method, timestamp: Number(row.timestamp) }));
}

interface ExchangePolicy {
  /** Seconds after its revocation during which a token may still be exchanged. */
  reuseInterval: number;
  /** End the session when a token is reused after that. */
  rotation: boolean;
}

type Exchange =
  | { result: "issued"; session: SessionRow; refreshToken: string }
  | { result: "not_found" }
  | { result: "reused"; session: SessionRow };

/**
 * Exchanges a refresh token as GoTrue does (internal/tokens/service.go):
 * - an active token is revoked and replaced by a child;
 * - a revoked token whose child is the session's active token gets that child
 *   back (the client lost the previous answer), however old;
 * - any other revoked token still gets a child within the reuse interval of
 *   its revocation (concurrent refreshes);
 * - after that it is a reuse: with rotation on, the session ends, which
 *   deletes every token of the family and makes its access tokens fail with
 *   `session_not_found`. The caller must commit before answering the error.
 * The session row is locked first, so exchanges within a session are serial.
 */
export async function exchangeRefreshToken(
  tx: postgres.TransactionSql,
  token: string,
  policy: ExchangePolicy,
  userAgent: string | null,
): Promise<Exchange> {
  const [session] = await tx<SessionRow[]>`
    select * from auth.sessions
    where id = (select session_id from auth.refresh_tokens where token = ${token})
    for update`;
  if (!session) return { result: "not_found" };
  // Read after taking the lock, so a concurrent exchange's revocation is seen.
  const [presented] = await tx<RefreshTokenRow[]>`
    select id, token, user_id, revoked, parent,
           now() > updated_at + make_interval(secs => ${policy.reuseInterval}) as reuse_expired
    from auth.refresh_tokens where token = ${token}`;

  let refreshToken: string;
  const active = presented.revoked ? await activeToken(tx, session.id) : null;
  if (active?.parent === presented.token) {
    refreshToken = active.token;
  } else if (presented.revoked && presented.reuse_expired) {
    if (policy.rotation) await tx`delete from auth.sessions where id = ${session.id}`;
    return { result: "reused", session };
  } else {
    await tx`update auth.refresh_tokens set revoked = true, updated_at = now() where id = ${presented.id} and not revoked`;
    refreshToken = await insertRefreshToken(tx, presented.user_id, session.id, presented.token);
  }
  await tx`
    update auth.sessions
    set refreshed_at = now() at time zone 'utc', updated_at = now(), user_agent = ${userAgent}
    where id = ${session.id}`;
  return { result: "issued", session, refreshToken };
}

/** The session's newest unrevoked token. */
async function activeToken(tx: postgres.TransactionSql, sessionId: string) {
  const [row] = await tx<Pick<RefreshTokenRow, "token" | "parent">[]>`
    select token, parent from auth.refresh_tokens
    where session_id = ${sessionId} and not revoked
    order by id desc limit 1`;
  return row ?? null;
}

export type LogoutScope = "global" | "local" | "others";

/** Ends sessions (their refresh tokens go with them): all of the user's, this one, or all but this one. */
export async function endSessions(
  tx: postgres.TransactionSql,
  userId: string,
  sessionId: string | null,
  scope: LogoutScope,
): Promise<void> {
  if (sessionId === null || scope === "global") {
    await tx`delete from auth.sessions where user_id = ${userId}`;
  } else if (scope === "local") {
    await tx`delete from auth.sessions where id = ${sessionId}`;
  } else {
    await tx`delete from auth.sessions where user_id = ${userId} and id <> ${sessionId}`;
  }
}

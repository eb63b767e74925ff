// SQL text the proxy builds itself, with its values inline: the statement that
// opens a transaction as a token's claims, and the quoting it needs. Kept apart
// from db.ts (no Deno, no connection) so that tests can check it on its own.
import type { Claims } from "./jwt.ts";

/**
 * A string as an SQL literal, right whatever `standard_conforming_strings` says
 * (as libpq's PQescapeLiteral makes it): quotes doubled, and backslashes
 * doubled in an E'' literal. Postgres text cannot hold NUL: refused here.
 */
export function sqlLiteral(text: string): string {
  if (text.includes("\0")) throw new Error("an SQL literal cannot hold NUL");
  const quoted = text.replaceAll("'", "''");
  return text.includes("\\") ? `E'${quoted.replaceAll("\\", "\\\\")}'` : `'${quoted}'`;
}

/**
 * The statement that opens a transaction as `claims`: the claims and role
 * (set_config('role', ..., true) is `set local role`, as PostgREST does it) and
 * the statement timeout that ends a statement `left` ms from now. Its values are
 * literals, not parameters: with `prepare: false` postgres.js asks the server
 * for the types of a statement's parameters before it sends their values, a
 * round trip of its own that also holds back every statement queued after it;
 * a statement without parameters leaves in the same write as its neighbours.
 */
export function claimsStatement(claims: Claims, role: string, left: number): string {
  return `select set_config('request.jwt.claims', ${sqlLiteral(JSON.stringify(claims))}, true),
                 set_config('request.jwt.claim.sub', ${sqlLiteral(String(claims.sub ?? ""))}, true),
                 set_config('request.jwt.claim.role', ${sqlLiteral(role)}, true),
                 set_config('statement_timeout', '${Math.max(1, Math.floor(left))}', true),
                 set_config('role', ${sqlLiteral(role)}, true)`;
}

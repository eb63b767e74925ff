// SQL text the proxy builds itself, with its values inline: the statement that
// opens a transaction as a token's claims, statements whose parameters are
// replaced by literals, and the quoting they need. Kept apart
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

/**
 * A value as the literal that means what it meant as a postgres.js parameter,
 * or undefined when there is none: strings (quoted by sqlLiteral; not one with
 * NUL), finite numbers and null, untyped like the parameters postgres.js sends
 * for them; booleans as true and false, typed like its boolean parameters.
 */
function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") return Number.isFinite(value) ? `'${value}'` : undefined;
  if (typeof value === "string") return value.includes("\0") ? undefined : sqlLiteral(value);
  return undefined;
}

/**
 * The statement with its values inline, so that it leaves in one write with
 * its neighbours (see claimsStatement), or the statement as it is when a value
 * has no literal (a date, an array, an object, a string with NUL). `text` uses
 * `$n` only for its parameters (no `$` in string constants of its own); the
 * literals put in are not read again.
 *
 * Only for parameters of text, uuid or numeric types: postgres.js serializes a
 * parameter by the type the server describes (a string given for a json
 * parameter becomes a JSON string, one for a timestamp goes through a JS Date),
 * which a literal would not do.
 */
export function inlined([text, args]: [string, unknown[]]): [string, unknown[]] {
  const literals = args.map(literalOf);
  if (literals.some((literal) => literal === undefined)) return [text, args];
  return [text.replace(/\$(\d+)/g, (match, n) => literals[Number(n) - 1] ?? match), []];
}

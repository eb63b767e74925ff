// Who may call a route: a role set, named by the SQL function of the `private`
// schema that returns its roles (private.delivery_managers(), ...), the one
// place each set is written. The edge reads the sets its routes name once per
// process, in one statement, and refuses (403) a caller whose claimed role is
// outside the route's set before it reads the request's input. The database
// still authorizes every call by the membership (private.authorize and the
// policies), so a claim can only narrow what the membership grants, never widen it.
import { asService, asUser } from "./db.ts";
import { HttpError } from "./errors.ts";
import type { Claims } from "./jwt.ts";

const SQL_NAME = /^[a-z_][a-z0-9_]*$/;

/** The set names the routes declared: all of them are read in the first statement. */
const declared = new Set<string>();
let loaded: Promise<ReadonlyMap<string, readonly string[]>> | undefined;

/** Records that a route names the set `name` (a function `private.<name>()` returning `text[]`). */
export function declareRoleSet(name: string): string {
  if (!SQL_NAME.test(name)) throw new Error(`not the name of a role set function: ${name}`);
  if (loaded && !declared.has(name)) loaded = undefined; // read again, with it
  declared.add(name);
  return name;
}

/** Every declared set and its roles, read from the database the first time (again after a failure). */
export function roleSets(): Promise<ReadonlyMap<string, readonly string[]>> {
  loaded ??= (async () => {
    const names = [...declared];
    // Names, never input: each is an identifier a route declared (declareRoleSet).
    const [row] = await asService((tx) => tx.unsafe(`select ${names.map((n) => `private.${n}() as ${n}`).join(", ")}`));
    return new Map(names.map((name) => [name, row[name] as string[]]));
  })();
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

/**
 * The app role the token claims: its role claim, or for the older form
 * (`role: authenticated`) the role in `user_metadata`; null when it claims none.
 */
export function claimedRole(claims: Claims): string | null {
  if (claims.role !== "authenticated") return claims.role ?? null;
  const role = claims.user_metadata?.role;
  return typeof role === "string" ? role : null;
}

/**
 * 403 when the caller's claimed role is not in `set`. No database round trip
 * once the sets are read. A token that claims no app role is left to the database.
 */
export async function refuseOutsideSet(claims: Claims, set: string): Promise<void> {
  const role = claimedRole(claims);
  if (role === null) return;
  const roles = (await roleSets()).get(set);
  if (!roles) throw new Error(`role set ${set} was not declared`);
  if (!roles.includes(role)) throw new HttpError(403, `role ${role} may not do this`);
}

/** Asks the database (private.authorize) whether the caller's membership is in `set`: its company, or 403. */
export async function authorizeBySet(claims: Claims, set: string): Promise<string> {
  if (!declared.has(set)) throw new Error(`role set ${set} was not declared`);
  const [row] = await asUser(
    claims,
    (tx) => tx.unsafe(`select private.authorize(variadic private.${set}()) as company`),
  );
  return row.company as string;
}

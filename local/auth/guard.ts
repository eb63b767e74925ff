// Who is calling: GoTrue's requireAuthentication and requireAdminCredentials.
import type { RequestContext } from "./context.ts";
import { NIL_UUID } from "./db.ts";
import { errors } from "./errors.ts";
import { bearerToken } from "./request.ts";
import { findUserById, isBanned, isUuid, type User } from "./users.ts";

/** GoTrue's default JWT_ADMIN_ROLES. */
const ADMIN_ROLES = ["service_role", "supabase_admin"];

export interface Caller {
  user: User;
  /** The token's session, null for a token without one. */
  sessionId: string | null;
}

/** A signed-in user: a valid token whose user and session still exist, and who is not banned. */
export async function requireUser(ctx: RequestContext): Promise<Caller> {
  const claims = await verifiedClaims(ctx);
  const caller = await loadCaller(ctx, claims);
  // A ban also stops access tokens issued before it.
  if (isBanned(caller.user)) throw errors.userBanned();
  return caller;
}

/** A token with an admin role, such as the service_role key. */
export async function requireAdmin(ctx: RequestContext): Promise<void> {
  const claims = await verifiedClaims(ctx);
  // A user's token stops working on logout even where it carries an admin role.
  if (sessionIdOf(claims) !== null) await loadCaller(ctx, claims);
  if (typeof claims.role !== "string" || !ADMIN_ROLES.includes(claims.role)) throw errors.notAdmin();
}

async function verifiedClaims(ctx: RequestContext): Promise<Record<string, unknown>> {
  const token = bearerToken(ctx.req);
  if (!token) throw errors.noAuthorization();
  return await ctx.verifyToken(token);
}

function sessionIdOf(claims: Record<string, unknown>): string | null {
  const id = claims.session_id;
  return typeof id === "string" && id !== "" && id !== NIL_UUID ? id : null;
}

async function loadCaller(ctx: RequestContext, claims: Record<string, unknown>): Promise<Caller> {
  const { sql } = ctx.options;
  if (typeof claims.sub !== "string" || claims.sub === "") throw errors.missingSub();
  if (!isUuid(claims.sub)) throw errors.subNotUuid();
  const user = await findUserById(sql, claims.sub);
  if (!user) throw errors.userFromSubMissing();

  const sessionId = sessionIdOf(claims);
  if (sessionId !== null) {
    if (!isUuid(sessionId)) throw errors.sessionIdNotUuid();
    const [session] = await sql`select 1 from auth.sessions where id = ${sessionId}`;
    if (!session) throw errors.sessionNotFound();
  }
  return { user, sessionId };
}

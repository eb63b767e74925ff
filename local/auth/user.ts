// The signed-in user's endpoints: GET /user and POST /logout.
import type { Handler } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { requireUser } from "./guard.ts";
import { log } from "./log.ts";
import { endSessions, type LogoutScope } from "./sessions.ts";
import { userJson } from "./users.ts";

export const getUser: Handler = async (ctx) => {
  const { user } = await requireUser(ctx);
  return Response.json(userJson(user));
};

const LOGOUT_SCOPES: Record<string, LogoutScope> = { "": "global", global: "global", local: "local", others: "others" };

/** auth-js signOut(): ends sessions (default: all of the user's) and with them their refresh tokens. */
export const logout: Handler = async (ctx) => {
  const { user, sessionId } = await requireUser(ctx);
  const requested = ctx.url.searchParams.get("scope") ?? "";
  const scope = LOGOUT_SCOPES[requested];
  if (!scope) throw errors.unsupportedLogoutScope(requested);
  await authTransaction(ctx.options.sql, (tx) => endSessions(tx, user.id, sessionId, scope));
  log("logout", { user_id: user.id, session_id: sessionId, scope });
  return new Response(null, { status: 204 });
};

// The one check of the functions the database wakes (dispatch, notifications,
// webhooks-out, and the reconciliation job of gateway-webhook), each deployed
// with verify_jwt = false: the bearer token must be the service role key
// itself, compared in constant time; anything else is 401.
import type { MiddlewareHandler } from "hono";
import { timingSafeEqual } from "./crypto.ts";
import { env } from "./env.ts";
import { notAuthenticated } from "./errors.ts";
import { bearerToken } from "./jwt.ts";

/** Hono middleware: the route answers only a caller presenting the service role key as its bearer token. */
export const requireServiceRole: MiddlewareHandler = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !timingSafeEqual(token, env().SUPABASE_SERVICE_ROLE_KEY)) {
    throw notAuthenticated("the service role key is required");
  }
  await next();
};

// The Hono app every function starts from: CORS for browser clients (the
// company panel), a trailing slash treated as none, and every failure as a
// docs/spec.md §7 body, a failed validation included (route.ts declares what
// is validated).
import { type Hook, OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { errorResponse, HttpError, validationItems } from "./errors.ts";
import type { RouteEnv } from "./route.ts";

const CORS = {
  origin: "*",
  allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
  allowHeaders: ["authorization", "apikey", "content-type", "x-client-info", "gateway-signature", "idempotency-key"],
  exposeHeaders: [
    "Retry-After",
    "Allow",
    "Idempotent-Replayed",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
  ],
  maxAge: 86_400,
};
const EXPOSE_HEADERS = CORS.exposeHeaders.join(",");

/** Where each of the library's validation targets is, as docs/spec.md §7's `loc` names it. */
const LOCATIONS: Record<string, string> = { param: "path", query: "query", json: "body" };

/** Every failed validation of a route's input, as one 400 with the validation items. */
const validationFailed: Hook<unknown, RouteEnv, string, unknown> = (result) => {
  if (result.success) return;
  // On failure the library passes the input it validated as `data`.
  const { target, error, data } = result as typeof result & { data?: unknown };
  throw new HttpError(400, validationItems(error, LOCATIONS[target] ?? target, data));
};

export function createApp(): OpenAPIHono<RouteEnv> {
  const app = new OpenAPIHono<RouteEnv>({ strict: false, defaultHook: validationFailed });
  const preflight = cors(CORS);
  app.use("*", async (c, next) => {
    if (c.req.method === "OPTIONS") return await preflight(c, next);
    await next();
    // The headers Hono's cors middleware gives any other answer, set on the answer itself: that middleware sets
    // them on a stand-in before the handler runs, then copies the handler's answer into a new Response.
    try {
      c.res.headers.set("Access-Control-Allow-Origin", "*");
    } catch {
      // An answer whose headers cannot change (a fetch's): a copy that can.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("Access-Control-Allow-Origin", "*");
    }
    c.res.headers.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  });
  app.onError((error, c) => errorResponse(error, c.req.raw));
  app.notFound(() => Response.json({ detail: "Not Found" }, { status: 404 }));
  return app;
}

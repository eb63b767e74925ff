// The Hono app every function starts from: CORS for browser clients (the
// company panel), a trailing slash treated as none, and every failure as a
// docs/spec.md §7 body.
import { Hono } from "hono";
import { cors } from "hono/cors";
import { errorResponse } from "./errors.ts";

const CORS = {
  origin: "*",
  allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
  allowHeaders: ["authorization", "apikey", "content-type", "x-client-info", "gateway-signature"],
  exposeHeaders: ["Retry-After", "Allow"],
  maxAge: 86_400,
};
const EXPOSE_HEADERS = CORS.exposeHeaders.join(",");

export function createApp(): Hono {
  const app = new Hono({ strict: false });
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

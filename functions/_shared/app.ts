// The Hono app every function starts from: CORS for browser clients (the
// company panel), a trailing slash treated as none, and every failure as a
// docs/spec.md §7 body.
import { Hono } from "hono";
import { cors } from "hono/cors";
import { errorResponse } from "./errors.ts";

export function createApp(): Hono {
  const app = new Hono({ strict: false });
  app.use(
    "*",
    cors({
      origin: "*",
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      allowHeaders: ["authorization", "apikey", "content-type", "x-client-info", "gateway-signature"],
      exposeHeaders: ["Retry-After", "Allow"],
      maxAge: 86_400,
    }),
  );
  app.onError((error, c) => errorResponse(error, c.req.raw));
  app.notFound(() => Response.json({ detail: "Not Found" }, { status: 404 }));
  return app;
}

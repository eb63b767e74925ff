// The edge proxy: every /api/v1 call and /health (DESIGN.md §1, §5). Each
// request is authenticated here and runs in the database as the caller.
import { Hono } from "hono";
import { db } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { openApiDocument } from "../_shared/openapi.ts";
import { type AnyRoute, errorResponse, mount } from "../_shared/route.ts";
import companies from "./routes/companies.ts";
import deliveries from "./routes/deliveries.ts";
import drivers from "./routes/drivers.ts";
import locations from "./routes/locations.ts";
import money from "./routes/money.ts";
import settings from "./routes/settings.ts";

env(); // fail at start-up, naming the setting, rather than on the first request

// Order matters where paths overlap: /api/v1/drivers/locations before /api/v1/drivers/{id}.
export const routes: AnyRoute[] = [...companies, ...locations, ...drivers, ...settings, ...deliveries, ...money];

const app = new Hono();
app.onError((error, c) => errorResponse(error, c.req.raw));
app.notFound(() => Response.json({ detail: "Not Found" }, { status: 404 }));

async function health(): Promise<Response> {
  try {
    await db()`select 1`;
    return Response.json({ status: "ok", database: "ok" });
  } catch {
    return Response.json({ status: "degraded", database: "unreachable" }, { status: 503 });
  }
}
app.get("/health", health);
app.get("/api/health", health);

const document = openApiDocument(routes, {
  title: "Delivery platform API",
  version: "1.0.0",
  description: "Multi-tenant delivery platform on Supabase. Errors: `{\"detail\": \"message\"}`, or for a " +
    "malformed request 400 with `{\"detail\": [{type, loc, msg, input}]}`. Lists take `limit` (1..100, default 20) " +
    "and an opaque `cursor`, and answer `{items, next_cursor}`. Money is a JSON number of BRL with at most 2 decimals.",
});
app.get("/api/v1/openapi.json", (c) => c.json(document));

mount(app, routes);

export default { fetch: app.fetch };

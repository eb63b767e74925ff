// The edge proxy: every /api/v1 call and /health (DESIGN.md §1, §5). Each
// request is authenticated here and runs in the database as the caller.
import { z } from "zod";
import { createApp } from "../_shared/app.ts";
import { ping } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { openApiDocument } from "../_shared/openapi.ts";
import { type AnyRoute, defineRoute, mount } from "../_shared/route.ts";
import companies from "./routes/companies.ts";
import deliveries from "./routes/deliveries.ts";
import drivers from "./routes/drivers.ts";
import locations from "./routes/locations.ts";
import money from "./routes/money.ts";
import settings from "./routes/settings.ts";

env(); // fail at start-up, naming the setting, rather than on the first request

// Order matters where paths overlap: /api/v1/drivers/locations before /api/v1/drivers/{id}.
export const routes: AnyRoute[] = [...companies, ...locations, ...drivers, ...settings, ...deliveries, ...money];

const app = createApp();

const healthRoute = defineRoute({
  method: "get",
  path: "/health",
  tag: "platform",
  summary: "Liveness and database reachability",
  auth: "none",
  responses: {
    200: { description: "Up", schema: z.object({ status: z.literal("ok"), database: z.literal("ok") }) },
    503: {
      description: "The database is unreachable",
      schema: z.object({ status: z.literal("degraded"), database: z.literal("unreachable") }),
    },
  },
  async handler() {
    // Within a second, whatever the database does (away, restarting, every connection busy).
    if (await ping(500)) return { body: { status: "ok", database: "ok" } };
    return { status: 503, body: { status: "degraded", database: "unreachable" } };
  },
});

const openApiRoute = defineRoute({
  method: "get",
  path: "/api/v1/openapi.json",
  tag: "platform",
  summary: "This document",
  auth: "none",
  responses: { 200: { description: "The OpenAPI 3.1 document of the API" } },
  handler: () => Promise.resolve({ body: document }),
});

const documented = [healthRoute, openApiRoute, ...routes];
const document = openApiDocument(documented, {
  title: "Delivery platform API",
  version: "1.0.0",
  description: "Multi-tenant delivery platform on Supabase. Errors: `{\"detail\": \"message\"}`, or for a " +
    "malformed request 400 with `{\"detail\": [{type, loc, msg, input}]}`. Lists take `limit` (1..100, default 20) " +
    "and an opaque `cursor`, and answer `{items, next_cursor}`. Money is a JSON number of BRL with at most 2 decimals. " +
    "Browsers may call it from any origin (CORS); a trailing slash is ignored.",
});

mount(app, documented);
// Through /functions/v1/api/health the function sees its own name first.
app.get("/api/health", (c) => app.fetch(new Request(new URL("/health", c.req.url), c.req.raw)));

export default { fetch: app.fetch };

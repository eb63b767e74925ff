// The edge proxy: every /api/v1 call but the webhooks (the gateway-webhook function's), and /health
// (docs/architecture.md; docs/contract.md). Each request is authenticated here and runs in the
// database as the caller.
import { z } from "zod";
import { createApp } from "../_shared/app.ts";
import { ping } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { HttpError } from "../_shared/errors.ts";
import { type AnyRoute, defineRoute, mount, type RouteDeclaration } from "../_shared/route.ts";
import { companyWebhook, platformWebhook, WEBHOOK_FUNCTION_PATHS } from "../_shared/webhook-contract.ts";
import { openApiDocument } from "./openapi.ts";
import companies from "./routes/companies.ts";
import deliveries from "./routes/deliveries.ts";
import drivers from "./routes/drivers.ts";
import locations from "./routes/locations.ts";
import money from "./routes/money.ts";
import proof from "./routes/proof.ts";
import settings from "./routes/settings.ts";
import tracking from "./routes/tracking.ts";

env(); // fail at start-up, naming the setting, rather than on the first request

// Order matters where paths overlap: /api/v1/drivers/locations before /api/v1/drivers/{id}.
export const routes: AnyRoute[] = [
  ...companies,
  ...locations,
  ...drivers,
  ...settings,
  ...deliveries,
  ...money,
  ...tracking,
  ...proof,
];

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

/**
 * The webhooks are part of the document but served by the gateway-webhook
 * function (one function per public path); a hosted project that routes one
 * here gets a 404 that says where it lives.
 */
function servedByGatewayWebhook(declaration: RouteDeclaration): AnyRoute {
  return defineRoute({
    ...declaration,
    handler() {
      throw new HttpError(
        404,
        `The gateway webhooks are served by the gateway-webhook function: ` +
          `${declaration.method.toUpperCase()} ${WEBHOOK_FUNCTION_PATHS[declaration.path]}`,
      );
    },
  });
}

const documented = [
  healthRoute,
  openApiRoute,
  ...routes,
  servedByGatewayWebhook(companyWebhook),
  servedByGatewayWebhook(platformWebhook),
];
const document = openApiDocument(documented, {
  title: "Delivery platform API",
  version: "1.0.0",
  description: 'Multi-tenant delivery platform on Supabase. Errors: `{"detail": "message"}`, or for a ' +
    'malformed request 400 with `{"detail": [{type, loc, msg, input}]}`. Lists take `limit` (1..100, default 20) ' +
    "and an opaque `cursor`, and answer `{items, next_cursor}`. Money is a JSON number of BRL with at most 2 decimals. " +
    "Browsers may call it from any origin (CORS); a trailing slash is ignored.",
});

mount(app, documented);
// Through /functions/v1/api/health the function sees its own name first.
app.get("/api/health", (c) => app.fetch(new Request(new URL("/health", c.req.url), c.req.raw)));

export default { fetch: app.fetch };

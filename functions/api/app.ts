// The edge proxy's routes and its OpenAPI document, from the same declarations
// (functions/_shared/route.ts). Nothing here reads the configuration or the
// database when loaded, so the document can be built without a running stack
// (web/api-types/generate.ts); index.ts serves the app.
import { z } from "zod";
import { createApp } from "../_shared/app.ts";
import { ping } from "../_shared/db.ts";
import { timingSafeEqual } from "../_shared/crypto.ts";
import { env } from "../_shared/env.ts";
import { HttpError, notAuthenticated } from "../_shared/errors.ts";
import { bearerToken } from "../_shared/jwt.ts";
import { type AnyRoute, defineRoute, IDEMPOTENCY_PARAMETER, mount, type RouteDeclaration } from "../_shared/route.ts";
import { roleSets } from "../_shared/role-sets.ts";
import { companyWebhook, platformWebhook, WEBHOOK_FUNCTION_PATHS } from "../_shared/webhook-contract.ts";
import addresses from "./routes/addresses.ts";
import cash from "./routes/cash.ts";
import companies from "./routes/companies.ts";
import csv, { workImports } from "./routes/csv.ts";
import deliveries from "./routes/deliveries.ts";
import dispatch from "./routes/dispatch.ts";
import drivers from "./routes/drivers.ts";
import integrations from "./routes/integrations.ts";
import locations from "./routes/locations.ts";
import money from "./routes/money.ts";
import notifications from "./routes/notifications.ts";
import operations from "./routes/operations.ts";
import proof from "./routes/proof.ts";
import push from "./routes/push.ts";
import reports from "./routes/reports.ts";
import routePlans from "./routes/routes.ts";
import settings from "./routes/settings.ts";
import tracking from "./routes/tracking.ts";

// Order matters where paths overlap: /api/v1/drivers/locations before /api/v1/drivers/{id},
// /api/v1/deliveries/export before /api/v1/deliveries/{id}.
export const routes: AnyRoute[] = [
  ...companies,
  ...locations,
  ...drivers,
  ...settings,
  ...csv,
  ...deliveries,
  ...operations,
  ...dispatch,
  ...addresses,
  ...money,
  ...tracking,
  ...proof,
  ...notifications,
  ...reports,
  ...routePlans,
  ...cash,
  ...integrations,
  ...push,
];

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
  description: "Each operation's `x-role-set` names the role set that may call it (a function of the database's " +
    "`private` schema); `x-roles` lists that set's roles as the database returns them.",
  auth: "none",
  responses: { 200: { description: "The OpenAPI 3.1 document of the API" } },
  handler: async () => ({ body: withRoles(document, await roleSets()) }),
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

export const app = createApp();
mount(app, [
  healthRoute,
  openApiRoute,
  ...routes,
  servedByGatewayWebhook(companyWebhook),
  servedByGatewayWebhook(platformWebhook),
]);
// The import jobs' worker (routes/csv.ts), woken by the database through pg_net (supabase/schemas/20_imports.sql)
// as the service role; not a public path.
app.post("/api/imports/work", async (c) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !timingSafeEqual(token, env().SUPABASE_SERVICE_ROLE_KEY)) {
    throw notAuthenticated("the service role key is required");
  }
  return c.json(await workImports());
});
// Through /functions/v1/api/health the function sees its own name first.
app.get("/api/health", (c) => app.fetch(new Request(new URL("/health", c.req.url), c.req.raw)));

app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
  type: "http",
  scheme: "bearer",
  bearerFormat: "JWT",
});
app.openAPIRegistry.registerComponent("parameters", "IdempotencyKey", IDEMPOTENCY_PARAMETER);
app.openAPIRegistry.registerComponent("securitySchemes", "gatewaySignature", {
  type: "apiKey",
  in: "header",
  name: "gateway-signature",
  description: "Lowercase hex HMAC-SHA256 of the raw body under the webhook secret.",
});

/** The OpenAPI 3.1 document of every route above, as the library writes it from their declarations. */
export const document = app.getOpenAPI31Document({
  openapi: "3.1.0",
  info: {
    title: "Delivery platform API",
    version: "1.0.0",
    description: 'Multi-tenant delivery platform on Supabase. Errors: `{"detail": "message"}`, or for a ' +
      'malformed request 400 with `{"detail": [{type, loc, msg, input}]}`. Lists take `limit` (1..100, default 20) ' +
      "and an opaque `cursor`, and answer `{items, next_cursor}`. Money is a JSON number of BRL with at most 2 " +
      "decimals. Browsers may call it from any origin (CORS); a trailing slash is ignored. A caller whose role may " +
      "not use an operation gets 403 whatever its input: the role is checked before the input is validated.",
  },
  // Hosted, the api function answers under /functions/v1 (the function sees /api/v1/...); a domain that routes
  // /api/v1 to it, and the local stack, answer at the root too.
  servers: [{ url: "/functions/v1" }, { url: "/" }],
});

/** The document with each operation's `x-roles`: the roles of its `x-role-set`, as the database names them. */
function withRoles(doc: typeof document, sets: ReadonlyMap<string, readonly string[]>): typeof document {
  const paths = Object.fromEntries(
    Object.entries(doc.paths ?? {}).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => {
          const set = (operation as { "x-role-set"?: string })["x-role-set"];
          return [method, set ? { ...operation, "x-roles": sets.get(set) } : operation];
        }),
      ),
    ]),
  );
  return { ...doc, paths };
}

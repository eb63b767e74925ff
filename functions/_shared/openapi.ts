// The OpenAPI 3.1 document, generated from the route declarations that also
// validate the requests (functions/_shared/route.ts).
import { z } from "zod";
import { type AnyRoute, ErrorBody, ValidationErrorBody } from "./route.ts";

function schemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function parameters(route: AnyRoute): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === "path" || (json.required ?? []).includes(name), schema: property });
    }
  }
  return out;
}

const STANDARD_ERRORS: Record<number, string> = {
  400: "Malformed request: the body, query or path failed validation",
  401: "Missing, invalid or expired token",
  403: "The caller's role may not do this",
  404: "Does not exist, or belongs to another company",
};

export function openApiDocument(routes: AnyRoute[], info: { title: string; version: string; description: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? { headers: Object.fromEntries(Object.entries(response.headers).map(([h, d]) => [h, { description: d, schema: { type: "string" } }])) }
          : {}),
        ...(response.schema ? { content: { "application/json": { schema: schemaOf(response.schema, "output") } } } : {}),
      };
    }
    const errors = route.auth === "bearer" ? [400, 401, 403, 404] : [400];
    for (const status of errors) {
      if (responses[status]) continue;
      const schema = status === 400 ? ValidationErrorBody : ErrorBody;
      responses[status] = {
        description: STANDARD_ERRORS[status],
        content: { "application/json": { schema: schemaOf(schema, "output") } },
      };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      summary: route.summary,
      description: [route.description, route.roles ? `Roles: ${route.roles.join(", ")}.` : undefined]
        .filter(Boolean).join("\n\n") || undefined,
      tags: [route.tag],
      security: route.auth === "bearer" ? [{ bearerAuth: [] }] : route.auth === "signature" ? [{ gatewaySignature: [] }] : [],
      parameters: parameters(route),
      ...(route.body
        ? { requestBody: { required: !route.body.safeParse(undefined).success, content: { "application/json": { schema: schemaOf(route.body, "input") } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/" }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
        gatewaySignature: {
          type: "apiKey",
          in: "header",
          name: "gateway-signature",
          description: "Lowercase hex HMAC-SHA256 of the raw body under the webhook secret.",
        },
      },
    },
  };
}

// The OpenAPI 3.1 document, generated from the route declarations that also
// validate the requests (functions/_shared/route.ts).
import { z } from "zod";
import { ErrorBody, ValidationErrorBody } from "../_shared/errors.ts";
import type { AnyRoute } from "../_shared/route.ts";

/** Named schemas (`.meta({id})`), shared by every operation that uses them. */
type Components = Record<string, Record<string, unknown>>;

/** Rewrites `#/$defs/X` (zod's local definitions) to `#/components/schemas/X`, the document-wide ones. */
function pointAtComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pointAtComponents);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) =>
      key === "$ref" && typeof item === "string"
        ? [key, item.replace(/^#\/\$defs\//, "#/components/schemas/")]
        : [key, pointAtComponents(item)]
    ),
  );
}

/** A schema's JSON without `additionalProperties`, to compare a request's and a response's use of one schema. */
function shape(schema: unknown): string {
  return JSON.stringify(schema, (key, value) => (key === "additionalProperties" ? undefined : value));
}

function schemaOf(schema: z.ZodType, io: "input" | "output", components: Components): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Components;
  delete json.$defs;
  for (const [name, def] of Object.entries(defs)) {
    const component = pointAtComponents(def) as Record<string, unknown>;
    // Two different schemas under one name would silently document only the first. (One schema used for a
    // request and a response differs only in additionalProperties, which zod closes for outputs.)
    if (components[name] && shape(components[name]) !== shape(component)) {
      throw new Error(`two different schemas are named ${name} in the OpenAPI document`);
    }
    components[name] = component;
  }
  return pointAtComponents(json) as Record<string, unknown>;
}

/** A stable name for clients' generated methods: GET /api/v1/deliveries/{id}/trail -> getDeliveriesByIdTrail. */
export function operationId(route: AnyRoute): string {
  const words = route.path.split("/").filter((part) => part && part !== "api" && part !== "v1").map((part) => {
    const param = /^\{(\w+)\}$/.exec(part);
    const word = param ? `by_${param[1]}` : part;
    return word.split(/[^a-zA-Z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  });
  return route.method + words.join("");
}

function parameters(route: AnyRoute, components: Components): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, "input", components) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === "path" || (json.required ?? []).includes(name),
        schema: property,
      });
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
  const components: Components = {};
  const json = (schema: z.ZodType) => ({ "application/json": { schema: schemaOf(schema, "output", components) } });
  // A 400 is a validation error, or an ordinary error for a bad value found later (say, a cursor).
  const badRequest = z.union([ValidationErrorBody, ErrorBody]);
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      const errorSchema = Number(status) === 400 ? badRequest : ErrorBody;
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? {
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([h, d]) => [h, { description: d, schema: { type: "string" } }]),
            ),
          }
          : {}),
        ...(response.schema
          ? { content: json(response.schema) }
          : Number(status) >= 400
          ? { content: json(errorSchema) }
          : {}),
      };
    }
    const errors = route.auth === "bearer" ? [400, 401, 403, 404] : [400];
    for (const status of errors) {
      if (responses[status]) continue;
      responses[status] = {
        description: STANDARD_ERRORS[status],
        content: json(status === 400 ? badRequest : ErrorBody),
      };
    }
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      operationId: operationId(route),
      summary: route.summary,
      description: [route.description, route.roles ? `Roles: ${route.roles.join(", ")}.` : undefined]
        .filter(Boolean).join("\n\n") || undefined,
      tags: [route.tag],
      security: route.security ??
        (route.auth === "bearer" ? [{ bearerAuth: [] }] : route.auth === "signature" ? [{ gatewaySignature: [] }] : []),
      parameters: parameters(route, components),
      ...(route.body ?? route.rawBody
        ? {
          requestBody: {
            required: !(route.body ?? route.rawBody).safeParse(undefined).success,
            content: { "application/json": { schema: schemaOf(route.body ?? route.rawBody, "input", components) } },
          },
        }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info,
    // Hosted, the api function answers under /functions/v1 (the function sees /api/v1/...); a domain that routes
    // /api/v1 to it, and the local stack, answer at the root too.
    servers: [{ url: "/functions/v1" }, { url: "/" }],
    paths,
    components: {
      schemas: components,
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

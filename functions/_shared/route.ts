// The route table of the edge: each route is declared once (method, path, role
// set, the zod schemas of its input, its answers), and @hono/zod-openapi both
// validates requests against that declaration and writes the OpenAPI document
// from it. What the library does not do is here: one time budget per request
// (request-scope.ts), the token and the role set before any input is read (403
// before 400, docs/architecture.md), the body read within its limits, the
// Idempotency-Key of every POST but the webhooks' (idempotency.ts), the errors
// every route shares, and 405 with `Allow`.
import { BodyTooLargeError, MAX_BODY_BYTES, readBody as readBounded } from "../../common/body.ts";
import { clientAddress } from "./client-address.ts";
import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { authenticateApiKey, isApiKey, rateLimitHeaders, refuseOutsideScope } from "./api-keys.ts";
import { authenticate } from "./auth.ts";
import { asUser, asUserAtOnce, type Row, type Tx } from "./db.ts";
import { ErrorBody, errorResponse, HttpError, methodNotAllowed, ValidationErrorBody } from "./errors.ts";
import { IDEMPOTENCY_HEADER, idempotencyKeyOf, once, REPLAYED_HEADER } from "./idempotency.ts";
import { bearerToken, type Claims } from "./jwt.ts";
import { withinBudget } from "./request-scope.ts";
import { authorizeBySet, declareRoleSet, refuseOutsideSet } from "./role-sets.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";

/** What the middleware of a route leaves for its handler. */
export type RouteEnv = { Variables: { claims: Claims } };

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** The media type of a success's body, when it is not JSON (a CSV download). */
  mediaType?: string;
  headers?: Record<string, string>;
}

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  /** The verified claims (bearer routes only). */
  claims: Claims;
  /** Runs `work` in one transaction as the caller (PostgREST's `set local role`). */
  asCaller<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Statements known in advance in one transaction as the caller, queued with its
   * begin and commit at once (db.ts, asUserAtOnce): the rows of each.
   */
  asCallerAtOnce(statements: [string, unknown[]][]): Promise<Row[][]>;
  /**
   * Asks the database whether the caller's membership is in the route's role set
   * (private.authorize), before any external call: 403 otherwise; returns the caller's company.
   */
  authorize(): Promise<string>;
}

export interface Reply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** OpenAPI form: /api/v1/drivers/{id} */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** "bearer": a user's access token; "none": public; "signature": gateway HMAC. */
  auth: "bearer" | "none" | "signature";
  /**
   * Who may call it: the name of a role set, a function of the `private` schema that
   * returns its roles (`delivery_managers` is private.delivery_managers()). Bearer routes only.
   */
  roles?: string;
  /**
   * The API key scope that lets a key call it (api-keys.ts; `routes:read` is implied by `routes:write`). A route
   * without one refuses every API key (403): keys reach only what a scope names.
   */
  scope?: string;
  /**
   * Its answer carries a secret shown once (a new API key, a webhook secret): never kept for an Idempotency-Key
   * (the header is ignored; a retry makes a new one, and the first can be revoked or deleted).
   */
  answerHoldsSecret?: boolean;
  /** A request body the handler reads itself (a webhook's raw bytes): documented, not parsed. */
  rawBody?: z.ZodType;
  /** The media type of that body, when it is not JSON (a CSV upload): any other is 415 before the handler runs. */
  rawBodyType?: string;
  /** The most bytes that body may have (MAX_BODY_BYTES unless said): more is 413. */
  rawBodyLimit?: number;
  /** The document's security requirement, when it is not the one `auth` implies. */
  security?: Record<string, string[]>[];
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, ResponseSpec>;
  handler(ctx: RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<Reply | Response>;
}

// deno-lint-ignore no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;
/** A route as the document sees it, without its handler (served by another function, or given one later). */
export type RouteDeclaration = Omit<AnyRoute, "handler">;

export function defineRoute<
  P extends z.ZodType = z.ZodObject<Record<never, never>>,
  Q extends z.ZodType = z.ZodObject<Record<never, never>>,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> {
  if (spec.auth === "bearer" && !spec.roles) throw new Error(`${spec.method} ${spec.path} names no role set`);
  return spec;
}

// Section: the body

export { MAX_BODY_BYTES };
/** Deeper JSON than this is refused (400): no request of ours nests more than a few levels. */
const MAX_JSON_DEPTH = 32;

function jsonError(msg: string): HttpError {
  return new HttpError(400, [{ type: "json_invalid", loc: ["body"], msg, input: null }]);
}

function tooDeep(value: unknown): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth > MAX_JSON_DEPTH) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

const tooLarge = () => new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);

/** The request body, refused with 413 as soon as it passes `limit` bytes (common/body.ts reads it). */
export async function readBody(req: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return await readBounded(req, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw tooLarge();
    throw error;
  }
}

/**
 * Reads a JSON body within the limits (413 past 1 MiB; 400 for bytes that are
 * not UTF-8, text that is not JSON, or JSON nested too deeply) and leaves it
 * where the library's validator reads it (Hono's body cache). An empty body is
 * `null` to the schema (an optional body may be left out); for a required one
 * it is the validation error a missing body always was.
 */
function jsonBody(required: boolean): MiddlewareHandler {
  return async (c, next) => {
    const bytes = await readBody(c.req.raw);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw jsonError("JSON decode error: the body is not valid UTF-8");
    }
    if (text.trim() === "") {
      if (required) throw new HttpError(400, [{ type: "missing", loc: ["body"], msg: "Field required", input: null }]);
      text = "null";
    } else {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw jsonError(`JSON decode error: ${(error as Error).message}`);
      }
      if (tooDeep(value)) throw jsonError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    // The bytes as they came (the library checks a body without a media type is empty), the text to parse;
    // Hono keeps each as a promise, whatever its type says.
    c.req.bodyCache.arrayBuffer = Promise.resolve(bytes.buffer) as never;
    c.req.bodyCache.text = Promise.resolve(text) as never;
    await next();
  };
}

// Section: the caller

/** The request's one time budget: every outgoing call and transaction under it ends in time (request-scope.ts). */
const budget: MiddlewareHandler = (_c, next) => withinBudget(next);

/** 415 for a raw body of another media type than the route's (a CSV upload sent as anything but text/csv). */
const mediaType = (type: string): MiddlewareHandler => async (c, next) => {
  const sent = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (sent !== type) throw new HttpError(415, `Unsupported Media Type: send the body with Content-Type: ${type}`);
  await next();
};

/**
 * A person's access token, or an API key (docs/integrations.md): a key is
 * looked up and counted against its company's rate limit first (401, 429), and
 * every answer to it carries the RateLimit-* headers.
 */
const bearer: MiddlewareHandler<RouteEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !isApiKey(token)) {
    c.set("claims", await authenticate(c.req.raw));
    await next();
    return;
  }
  const caller = await authenticateApiKey(token);
  c.set("claims", caller.claims);
  await next();
  try {
    for (const [name, value] of Object.entries(rateLimitHeaders(caller.rateLimit))) c.res.headers.set(name, value);
  } catch {
    // An answer whose headers cannot change (a fetch's): a copy that can.
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(rateLimitHeaders(caller.rateLimit))) c.res.headers.set(name, value);
  }
};

/** 403 for a caller whose claimed role is outside the route's set, before its input is read (role-sets.ts). */
const inRoleSet = (set: string, scope: string | undefined): MiddlewareHandler<RouteEnv> => async (c, next) => {
  await refuseOutsideSet(c.get("claims"), set);
  refuseOutsideScope(c.get("claims"), scope);
  await next();
};

// Section: the document

/** A stable name for clients' generated methods: GET /api/v1/deliveries/{id}/trail -> getDeliveriesByIdTrail. */
export function operationId(route: RouteDeclaration): string {
  const words = route.path.split("/").filter((part) => part && part !== "api" && part !== "v1").map((part) => {
    const param = /^\{(\w+)\}$/.exec(part);
    const word = param ? `by_${param[1]}` : part;
    return word.split(/[^a-zA-Z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  });
  return route.method + words.join("");
}

const json = (schema: z.ZodType, type = "application/json") => ({ [type]: { schema } });
const headersOf = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: "string" as const } }]),
  );
const RETRY_AFTER = { "Retry-After": "Whole seconds to wait before trying again" };

/** A 429 of a rate limit the database keeps (PT429, mapped in errors.ts), with the wait in `Retry-After`. */
export function rateLimited(description: string, maxSeconds: number): ResponseSpec {
  return {
    description,
    headers: { "Retry-After": `Whole seconds until a request will be answered again (1 to ${maxSeconds})` },
  };
}

/** The errors every route of its kind may answer, unless it documents them itself. */
function sharedErrors(route: RouteDeclaration): Record<number, ResponseSpec> {
  const errors: Record<number, ResponseSpec> = {
    // A validation error, or an ordinary error for a bad value found later (say, a cursor).
    400: {
      description: "Malformed request: the body, query or path failed validation",
      schema: z.union([ValidationErrorBody, ErrorBody]),
    },
  };
  if (route.auth === "bearer") {
    errors[401] = { description: "Missing, invalid or expired token, or an unknown or revoked API key" };
    errors[403] = {
      description: "The caller's role may not do this (answered before the request's input is validated)",
    };
    errors[404] = { description: "Does not exist, or belongs to another company" };
  }
  if (route.body ?? route.rawBody) {
    errors[413] = { description: `The body is larger than ${MAX_BODY_BYTES} bytes (1 MiB)` };
  }
  // A raw body (a webhook's) is read as bytes whatever its media type; a parsed one must say it is JSON.
  if (route.body) errors[415] = { description: "The body is not sent as application/json" };
  errors[503] = {
    description: "The database is unavailable or too busy to answer in time; nothing was done",
    headers: RETRY_AFTER,
  };
  return errors;
}

/** Whether a route takes an Idempotency-Key: every POST but the webhooks' and those whose answer holds a secret. */
export function takesIdempotencyKey(route: RouteDeclaration): boolean {
  return route.method === "post" && route.auth !== "signature" && !route.answerHoldsSecret;
}

/** The Idempotency-Key header as the document describes it once (components.parameters.IdempotencyKey). */
export const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: "header" as const,
  required: false,
  description: "1 to 255 printable ASCII characters, unique per request you mean (a UUID, say), to make a retry " +
    "harmless: the first request with a key (per caller) runs, and its answer (status and body) is kept for at " +
    "least 24 hours; the same key with the same request (method, path and body) gets that answer again, with " +
    `\`${REPLAYED_HEADER}: true\`, and nothing runs again. The same key with another request is 422; while the ` +
    "first is still running, 409. A 429 or a 5xx after which nothing changed is not kept: the key may be tried " +
    "again. A request cut off before its answer was kept is run again only if it changed nothing; otherwise the " +
    "retry is 422. Without the header, every request runs.",
  schema: { type: "string" as const, minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
};

const IDEMPOTENCY_ERRORS: Record<number, string> = {
  409: `a request with the same ${IDEMPOTENCY_HEADER} is still running`,
  422: `the ${IDEMPOTENCY_HEADER} was used with another request, or its first request was cut off after it changed ` +
    "data",
};

/** The answers of a route as documented: its own, the shared errors, and those of an Idempotency-Key. */
function responsesOf(route: RouteDeclaration): Record<number, ResponseSpec> {
  const responses: Record<number, ResponseSpec> = { ...sharedErrors(route), ...route.responses };
  if (!takesIdempotencyKey(route)) return responses;
  for (const [status, reason] of Object.entries(IDEMPOTENCY_ERRORS)) {
    const own = responses[Number(status)];
    responses[Number(status)] = own
      ? { ...own, description: `${own.description}; or ${reason}` }
      : { description: reason[0].toUpperCase() + reason.slice(1) };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) >= 300) continue;
    responses[Number(status)] = {
      ...response,
      headers: {
        ...response.headers,
        [REPLAYED_HEADER]:
          `\`true\` when this is the kept answer of an earlier request with the same ${IDEMPOTENCY_HEADER}`,
      },
    };
  }
  return responses;
}

/** The route as @hono/zod-openapi takes it: what it validates and documents, and the middleware before that. */
export function routeConfig(route: RouteDeclaration, middleware: MiddlewareHandler[] = []): RouteConfig {
  const body = route.body ?? route.rawBody;
  const responses = responsesOf(route);
  return createRoute({
    method: route.method,
    path: route.path,
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    description: [
      route.description,
      route.roles ? `Roles: the set \`${route.roles}\`.` : undefined,
      route.auth === "bearer"
        ? route.scope
          ? `API keys: with the scope \`${route.scope}\` (rate limited per company; RateLimit-* headers).`
          : "API keys: refused (403)."
        : undefined,
    ]
      .filter(Boolean).join("\n\n") || undefined,
    security: route.security ??
      (route.auth === "bearer" ? [{ bearerAuth: [] }] : route.auth === "signature" ? [{ gatewaySignature: [] }] : []),
    ...(route.roles ? { "x-role-set": route.roles } : {}),
    ...(route.scope ? { "x-api-key-scope": route.scope } : {}),
    // Its answer holds a secret shown once: never kept for an Idempotency-Key, so the header is not documented.
    ...(route.answerHoldsSecret ? { "x-answer-holds-secret": true } : {}),
    ...(takesIdempotencyKey(route) ? { parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }] } : {}),
    request: {
      params: route.params as z.ZodObject | undefined,
      query: route.query as z.ZodObject | undefined,
      body: body ? { required: !body.safeParse(undefined).success, content: json(body, route.rawBodyType) } : undefined,
    },
    responses: Object.fromEntries(
      Object.entries(responses).map(([status, response]) => [status, {
        description: response.description,
        ...(response.headers ? { headers: headersOf(response.headers) } : {}),
        ...(response.schema
          ? { content: json(response.schema, response.mediaType) }
          : Number(status) >= 400
          ? { content: json(ErrorBody) }
          : {}),
      }]),
    ),
    // Only for app.openapi, which leaves it out of the document; registerPath would keep it.
    ...(middleware.length > 0 ? { middleware } : {}),
  });
}

// Section: serving

function handlerOf(route: AnyRoute) {
  return async (c: Context<RouteEnv>): Promise<Response> => {
    const claims = c.get("claims") ?? {};
    const valid = (target: "param" | "query" | "json") => c.req.valid(target as never);
    const run = async (req: Request): Promise<Response> => {
      const reply = await route.handler({
        // A raw-body route's path is not validated by the library: its handler reads the parameters as they came.
        params: route.rawBody ? c.req.param() : valid("param"),
        query: valid("query"),
        body: valid("json"),
        req,
        claims,
        asCaller: (work) => asUser(claims, work),
        asCallerAtOnce: (statements) => asUserAtOnce(claims, statements),
        authorize: () => authorizeBySet(claims, route.roles!),
      });
      if (reply instanceof Response) return reply;
      return Response.json(reply.body, { status: reply.status ?? 200, headers: reply.headers });
    };
    const key = takesIdempotencyKey(route) ? idempotencyKeyOf(c.req.raw) : undefined;
    if (key === undefined) return await run(c.req.raw);
    // The body the request was validated with (jsonBody keeps it), or a raw body read here within its limit and
    // handed on; a route without a body is told apart by its method and path alone.
    let req = c.req.raw;
    let bytes = new Uint8Array(0);
    if (route.body) bytes = new Uint8Array(await c.req.arrayBuffer());
    else if (route.rawBody) {
      bytes = await readBody(c.req.raw, route.rawBodyLimit);
      req = new Request(c.req.raw, { body: bytes });
    }
    const url = new URL(c.req.url);
    return await once(
      {
        caller: typeof claims.sub === "string" ? claims.sub : null,
        client: clientAddress(c.req.raw),
        key,
        method: route.method,
        path: url.pathname.replace(/\/+$/, "") + url.search,
        body: bytes,
      },
      // Its answer, an error's too, is the one kept.
      () => run(req).catch((error) => errorResponse(error, c.req.raw)),
    );
  };
}

/**
 * Registers each route: the token and the role set first, then the body read
 * within its limits, then the library's validation of path, query and body,
 * then the handler. A route with a raw body is documented and served, its body
 * left to the handler. Then, right after the last route of each path, a 405
 * with an `Allow` header for the methods it does not have (after that path's
 * own routes, so a declared method always wins, and before any later path
 * that would also match, so /deliveries/import is not taken for
 * /deliveries/{id}; HEAD is served as GET).
 */
export function mount(app: OpenAPIHono<RouteEnv>, routes: AnyRoute[]): void {
  const honoPath = (route: AnyRoute) => route.path.replace(/\{(\w+)\}/g, ":$1");
  const methods = new Map<string, Set<string>>();
  const last = new Map<string, AnyRoute>();
  for (const route of routes) {
    const path = honoPath(route);
    const allowed = methods.get(path) ?? new Set<string>();
    allowed.add(route.method.toUpperCase());
    if (route.method === "get") allowed.add("HEAD");
    methods.set(path, allowed);
    last.set(path, route);
  }
  for (const route of routes) {
    const middleware: MiddlewareHandler[] = [budget];
    if (route.auth === "bearer") {
      middleware.push(bearer, inRoleSet(declareRoleSet(route.roles!), route.scope) as MiddlewareHandler);
    }
    if (route.body) middleware.push(jsonBody(!route.body.safeParse(undefined).success));
    if (route.rawBody && route.rawBodyType) middleware.push(mediaType(route.rawBodyType));
    const path = honoPath(route);
    if (route.rawBody) {
      app.openAPIRegistry.registerPath(routeConfig(route));
      app.on([route.method.toUpperCase()], [path], ...middleware, handlerOf(route) as never);
    } else {
      app.openapi(routeConfig(route, middleware), handlerOf(route) as never);
    }
    if (last.get(path) !== route) continue;
    const allowed = methods.get(path)!;
    app.all(path, (c) => {
      if (allowed.has(c.req.method)) return c.notFound();
      throw methodNotAllowed(c.req.method, [...allowed, "OPTIONS"]);
    });
  }
}

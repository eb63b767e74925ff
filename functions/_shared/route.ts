// The route table of the edge proxy. Each route is declared once, with zod
// schemas for its params, query and body and the responses it documents; the
// same declaration validates requests, registers the Hono handler and feeds
// the OpenAPI document (functions/_shared/openapi.ts).
import type { Context, Hono } from "hono";
import { z } from "zod";
import { authenticate } from "./auth.ts";
import { asUser, type Tx } from "./db.ts";
import { HttpError, statusForSqlState, validationItems } from "./errors.ts";
import type { Claims } from "./jwt.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
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
  /** Who may call it, for the document; the database enforces it. */
  roles?: string[];
  /** A request body the handler reads itself (a webhook's raw bytes): documented, not parsed. */
  rawBody?: z.ZodType;
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

export function defineRoute<
  P extends z.ZodType = z.ZodObject<Record<never, never>>,
  Q extends z.ZodType = z.ZodObject<Record<never, never>>,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> {
  return spec;
}

function parse<S extends z.ZodType>(schema: S | undefined, input: unknown, location: string): z.infer<S> {
  if (!schema) return input as z.infer<S>;
  const result = schema.safeParse(input);
  if (!result.success) throw new HttpError(400, validationItems(result.error, location, input));
  return result.data;
}

/** Request bodies larger than this are refused (413) before they are parsed. */
export const MAX_BODY_BYTES = 1_048_576;
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

async function readJson(req: Request): Promise<unknown> {
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (bytes.length > MAX_BODY_BYTES) throw new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw jsonError("JSON decode error: the body is not valid UTF-8");
  }
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw jsonError(`JSON decode error: ${(error as Error).message}`);
  }
  if (tooDeep(value)) throw jsonError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

const GENERIC_DETAIL: Record<number, string> = {
  400: "The request contains characters or values the service cannot store",
  403: "Not allowed",
  409: "Conflicts with an existing resource",
  422: "The request does not fit the data it refers to",
  503: "The service is busy; try again",
};

/** postgres.js's codes for a database it cannot reach or lost. */
const CONNECTION_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

/** Database errors become HTTP errors here and only here. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && CONNECTION_ERRORS.has(code)) {
    return new HttpError(503, "The database is unavailable; try again", { "Retry-After": "1" });
  }
  const pg = error as { code?: string; message?: string; severity?: string };
  if (pg && typeof pg.code === "string" && pg.severity) {
    const status = statusForSqlState(pg.code);
    // Our own PTnnn messages are written for callers; Postgres's own are not.
    if (pg.code.startsWith("PT")) return new HttpError(status, pg.message ?? "error");
    if (status in GENERIC_DETAIL) return new HttpError(status, GENERIC_DETAIL[status]);
  }
  return new HttpError(500, "Internal Server Error");
}

/** Calls `public.<fn>(name => value, ...)` and returns its jsonb result. */
export async function rpc<T = unknown>(tx: Tx, fn: string, args: Record<string, unknown> = {}): Promise<T> {
  const names = Object.keys(args);
  // Names go into the statement itself; only plain identifiers, never input.
  for (const name of [fn, ...names]) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not an SQL identifier: ${name}`);
  }
  const call = `select public.${fn}(${names.map((name, i) => `${name} => $${i + 1}`).join(", ")}) as result`;
  // deno-lint-ignore no-explicit-any
  const [row] = await tx.unsafe(call, names.map((name) => args[name] ?? null) as any[]);
  return row.result as T;
}

export function mount(app: Hono, routes: AnyRoute[]): void {
  for (const route of routes) {
    const honoPath = route.path.replace(/\{(\w+)\}/g, ":$1");
    app.on(route.method.toUpperCase(), honoPath, async (c: Context) => {
      const claims = route.auth === "bearer" ? await authenticate(c.req.raw) : ({} as Claims);
      const params = parse(route.params, c.req.param(), "path");
      const query = parse(route.query, c.req.query(), "query");
      const body = route.body ? parse(route.body, await readJson(c.req.raw), "body") : undefined;
      const reply = await route.handler({
        params,
        query,
        body,
        req: c.req.raw,
        claims,
        asCaller: (work) => asUser(claims, work),
      });
      if (reply instanceof Response) return reply;
      return Response.json(reply.body, { status: reply.status ?? 200, headers: reply.headers });
    });
  }
}

/** Hono's error handler: every failure as a SPEC.md §7 body, never a stack trace. */
export function errorResponse(error: unknown, req: Request): Response {
  const http = toHttpError(error);
  if (http.status >= 500) {
    console.error(JSON.stringify({
      event: "request_failed",
      method: req.method,
      path: new URL(req.url).pathname,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      code: (error as { code?: string })?.code,
    }));
  }
  return Response.json({ detail: http.detail }, { status: http.status, headers: http.headers });
}

/** Shared schemas. */
export const IdParams = z.object({ id: z.uuid() });
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(500).optional(),
});
export const ErrorBody = z.object({ detail: z.string() }).meta({ id: "Error" });
export const ValidationErrorBody = z.object({
  detail: z.array(z.object({
    type: z.string(),
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    input: z.unknown(),
  })),
}).meta({ id: "ValidationError" });

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() });
}

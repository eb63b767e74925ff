// The route table of the edge proxy. Each route is declared once, with zod
// schemas for its params, query and body and the responses it documents; the
// same declaration validates requests, registers the Hono handler and feeds
// the OpenAPI document (functions/api/openapi.ts).
import type { Context, Hono } from "hono";
import { z } from "zod";
import { authenticate } from "./auth.ts";
import { asUser, type FollowUp, type Tx } from "./db.ts";
import { HttpError, validationItems } from "./errors.ts";
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
  /**
   * Runs `work` in one transaction as the caller (PostgREST's `set local role`);
   * `followUp`, a short transaction as the service role after it (db.ts).
   */
  asCaller<T>(work: (tx: Tx) => Promise<T>, followUp?: FollowUp<T>): Promise<T>;
  /**
   * Refuses (403) a caller whose effective role is not one of `roles`, before any
   * external call; returns the caller's company (private.authorize).
   */
  authorize(roles: string[]): Promise<string>;
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
/** A route as the document sees it, without its handler (served by another function, or given one later). */
export type RouteDeclaration = Omit<AnyRoute, "handler">;

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

const tooLarge = () => new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes`);

/**
 * The request body, refused with 413 as soon as it passes `limit` bytes: a
 * declared Content-Length is checked first, and a chunked body is counted as
 * it arrives, never read whole.
 */
export async function readBody(req: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array<ArrayBuffer>> {
  const length = req.headers.get("content-length");
  const declared = Number(length ?? 0);
  if (declared > limit) throw tooLarge();
  // A declared length within the limit: the HTTP server delivers no byte past it, so the body is read whole,
  // before anything touches `req.body` (which would make it a JS stream, where Deno reads it natively).
  if (length !== null && /^\d+$/.test(length)) {
    const bytes = new Uint8Array(await req.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge();
    return bytes;
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

async function readJson(req: Request): Promise<unknown> {
  const bytes = await readBody(req);
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

const honoPathOf = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/**
 * Registers each route's handler, then for each path a 405 with an `Allow`
 * header for the methods it does not have (registered last, so a declared
 * method always wins; HEAD is served as GET).
 */
export function mount(app: Hono, routes: AnyRoute[]): void {
  const methods = new Map<string, Set<string>>();
  for (const route of routes) {
    const honoPath = honoPathOf(route.path);
    const allowed = methods.get(honoPath) ?? new Set<string>();
    allowed.add(route.method.toUpperCase());
    if (route.method === "get") allowed.add("HEAD");
    methods.set(honoPath, allowed);
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
        asCaller: (work, followUp) => asUser(claims, work, { followUp }),
        authorize: (roles) =>
          asUser(
            claims,
            async (tx) =>
              (await tx<{ company: string }[]>`select private.authorize(variadic ${roles}::text[]) as company`)[0]
                .company,
          ),
      });
      if (reply instanceof Response) return reply;
      return Response.json(reply.body, { status: reply.status ?? 200, headers: reply.headers });
    });
  }
  for (const [honoPath, allowed] of methods) {
    const allow = [...allowed, "OPTIONS"].join(", ");
    app.all(honoPath, (c) => {
      if (allowed.has(c.req.method)) return c.notFound();
      throw new HttpError(405, `Method ${c.req.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
    });
  }
}

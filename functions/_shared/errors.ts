// One place that turns failures into docs/spec.md §7 responses: `{"detail": msg}`,
// or for a malformed body 400 with `{"detail": [{type, loc, msg, input}]}`. Every
// SQLSTATE's status and every header an error carries (Retry-After, Allow,
// WWW-Authenticate) is decided here; the rest of the code throws these errors.
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { isConnectionError } from "../../common/connection.ts";

export { isConnectionError };

export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationItem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : "validation error");
  }
}

/** An answer the caller may try again after `seconds` (429 or 503), saying so in `Retry-After`. */
export function retryLater(status: 429 | 503, detail: string, seconds: number): HttpError {
  return new HttpError(status, detail, { "Retry-After": String(seconds) });
}

/** 401 with the challenge RFC 6750 asks for: `invalid_token` when a token was sent and refused. */
export function notAuthenticated(detail: string, invalidToken = false): HttpError {
  return new HttpError(401, detail, { "WWW-Authenticate": invalidToken ? 'Bearer error="invalid_token"' : "Bearer" });
}

/** 405 for a method a known path does not have, naming those it has in `Allow`. */
export function methodNotAllowed(method: string, allowed: string[]): HttpError {
  const allow = allowed.join(", ");
  return new HttpError(405, `Method ${method} is not allowed here; allowed: ${allow}`, { Allow: allow });
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const ISSUE_TYPES: Record<string, string> = {
  invalid_type: "type_error",
  too_small: "value_error",
  too_big: "value_error",
  invalid_format: "value_error",
  invalid_value: "enum",
  unrecognized_keys: "extra_forbidden",
  custom: "value_error",
};

/** zod issues as docs/spec.md §7 validation items; `location` is "body", "query" or "path". */
export function validationItems(error: z.ZodError, location: string, input: unknown): ValidationItem[] {
  return error.issues.map((issue) => {
    const at = valueAt(input, issue.path);
    const missing = issue.code === "invalid_type" && at === undefined;
    return {
      type: missing ? "missing" : ISSUE_TYPES[issue.code] ?? issue.code,
      loc: [location, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
      msg: missing ? "Field required" : issue.message,
      input: at ?? null,
    };
  });
}

/** SQLSTATE → HTTP status: `PTnnn` is nnn (PostgREST's convention), plus the standard classes. */
export function statusForSqlState(code: string | undefined): number {
  if (!code) return 500;
  const pt = /^PT([45]\d\d)$/.exec(code);
  if (pt) return Number(pt[1]);
  switch (code) {
    case "22021": // character_not_in_repertoire (e.g. a NUL byte in text)
    case "22P05": // untranslatable_character
    case "22001": // string_data_right_truncation
      return 400;
    case "42501": // insufficient_privilege
      return 403;
    case "23505": // unique_violation
      return 409;
    case "23503": // foreign_key_violation
    case "23502": // not_null_violation
    case "23514": // check_violation
    case "22P02": // invalid_text_representation
    case "22003": // numeric_value_out_of_range
    case "22023": // invalid_parameter_value
      return 422;
    case "55P03": // lock_not_available
    case "57014": // query_canceled (statement timeout)
      return 503;
    case "40001": // serialization_failure
    case "40P01": // deadlock_detected
      return 503;
    default:
      return 500;
  }
}

const GENERIC_DETAIL: Record<number, string> = {
  400: "The request contains characters or values the service cannot store",
  403: "Not allowed",
  409: "Conflicts with an existing resource",
  422: "The request does not fit the data it refers to",
  503: "The service is busy; try again",
};

/** 503: the database is unreachable, restarting, or too busy to answer in time. */
export class DatabaseUnavailable extends HttpError {
  constructor(reason = "The database is unavailable; try again") {
    super(503, reason, { "Retry-After": "1" });
  }
}

/** Seconds a PT429 asks to wait when its detail names none we can read. */
const DEFAULT_RETRY_AFTER_S = 60;

/**
 * A rate limit's wait: our functions raise PT429 with `{"retry_after": n}` (whole
 * seconds) in the error's detail (update_my_location, admit_tracking_request).
 */
function retryAfterOf(detail: string | undefined): number {
  try {
    const seconds = JSON.parse(detail ?? "").retry_after;
    if (Number.isInteger(seconds) && seconds > 0) return seconds;
  } catch { /* no readable wait */ }
  return DEFAULT_RETRY_AFTER_S;
}

/** Database errors (and the framework's own) become HTTP errors here and only here. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  // Hono's, e.g. @hono/zod-openapi's 415 for a body that is not application/json.
  if (error instanceof HTTPException) {
    if (error.status === 415) {
      return new HttpError(415, "Unsupported Media Type: send the body as JSON with Content-Type: application/json");
    }
    return new HttpError(error.status, error.message || "Bad Request");
  }
  if (isConnectionError(error)) return new DatabaseUnavailable();
  const pg = error as { code?: string; message?: string; severity?: string; detail?: string };
  if (pg && typeof pg.code === "string" && pg.severity) {
    const status = statusForSqlState(pg.code);
    if (pg.code === "PT429") return retryLater(429, pg.message ?? "Too Many Requests", retryAfterOf(pg.detail));
    // Our own PTnnn messages are written for callers; Postgres's own are not.
    if (pg.code.startsWith("PT")) return new HttpError(status, pg.message ?? "error");
    if (status === 503) return retryLater(503, GENERIC_DETAIL[503], 1);
    if (status in GENERIC_DETAIL) return new HttpError(status, GENERIC_DETAIL[status]);
  }
  return new HttpError(500, "Internal Server Error");
}

/** Hono's error handler: every failure as a docs/spec.md §7 body, never a stack trace. */
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

export const ErrorBody = z.object({ detail: z.string() }).meta({ id: "Error" });
export const ValidationErrorBody = z.object({
  detail: z.array(z.object({
    type: z.string(),
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    input: z.unknown(),
  })),
}).meta({ id: "ValidationError" });

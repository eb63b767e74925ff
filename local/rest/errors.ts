// Every error the local PostgREST answers with, in one place: PostgREST's
// codes, messages and HTTP statuses (src/PostgREST/Error.hs of the version in
// local/versions.ts), in its body shape {code, details, hint, message}.
import postgres from "postgres";

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: string | unknown[] | null = null,
    readonly hint: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "RestError";
  }
}

export const errors = {
  // Connection errors (PGRST0xx)
  connection: (details: string) =>
    new RestError(503, "PGRST000", "Database connection error. Retrying the connection.", details),

  // Postgres' own refusal of a NUL in a text value (mapped to 400 like every class 22 error).
  nulCharacter: () => new RestError(400, "22021", 'invalid byte sequence for encoding "UTF8": 0x00'),

  // ApiRequestError (PGRST1xx)
  queryParam: (message: string, details: string) => new RestError(400, "PGRST100", message, details),
  invalidRpcMethod: (method: string) => new RestError(405, "PGRST101", `Cannot use the ${method} method on RPC`),
  invalidBody: (message: string) => new RestError(400, "PGRST102", message),
  invalidFilters: () =>
    new RestError(405, "PGRST105", "Filters must include all and only primary key columns with 'eq' operators"),
  negativeLimit: () =>
    new RestError(416, "PGRST103", "Requested range not satisfiable", "Limit should be greater than or equal to zero."),
  lowerGtUpper: () =>
    new RestError(
      416,
      "PGRST103",
      "Requested range not satisfiable",
      "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
    ),
  outOfBounds: (lower: number, total: number) =>
    new RestError(
      416,
      "PGRST103",
      "Requested range not satisfiable",
      `An offset of ${lower} was requested, but there are only ${total} rows.`,
    ),
  unacceptableSchema: (schema: string, exposed: string[]) =>
    new RestError(
      406,
      "PGRST106",
      `Invalid schema: ${schema}`,
      null,
      `Only the following schemas are exposed: ${exposed.join(", ")}`,
    ),
  mediaType: (types: string[]) =>
    new RestError(406, "PGRST107", `None of these media types are available: ${types.join(", ")}`),
  notEmbedded: (resource: string) =>
    new RestError(
      400,
      "PGRST108",
      `'${resource}' is not an embedded resource in this request`,
      null,
      `Verify that '${resource}' is included in the 'select' query parameter.`,
    ),
  singularity: (rows: number) =>
    new RestError(
      406,
      "PGRST116",
      "Cannot coerce the result to a single JSON object",
      `The result contains ${rows} rows`,
    ),
  putLimitNotAllowed: () =>
    new RestError(400, "PGRST114", "limit/offset querystring parameters are not allowed for PUT"),
  putMatchingPk: () => new RestError(400, "PGRST115", "Payload values do not match URL in primary key column(s)"),
  unsupportedMethod: (method: string) => new RestError(405, "PGRST117", `Unsupported HTTP method: ${method}`),
  relatedOrderNotToOne: (origin: string, target: string) =>
    new RestError(
      400,
      "PGRST118",
      `A related order on '${target}' is not possible`,
      `'${origin}' and '${target}' do not form a many-to-one or one-to-one relationship`,
    ),
  unacceptableFilter: (target: string) =>
    new RestError(
      400,
      "PGRST120",
      `Bad operator on the '${target}' embedded resource`,
      "Only is null or not is null filters are allowed on embedded resources",
    ),
  invalidPreferences: (prefs: string[]) =>
    new RestError(
      400,
      "PGRST122",
      "Invalid preferences given with handling=strict",
      `Invalid preferences: ${prefs.join(", ")}`,
    ),
  aggregatesNotAllowed: () => new RestError(400, "PGRST123", "Use of aggregate functions is not allowed"),
  maxAffected: (rows: number) =>
    new RestError(
      400,
      "PGRST124",
      "Query result exceeds max-affected preference constraint",
      `The query affects ${rows} rows`,
    ),
  invalidResourcePath: () => new RestError(404, "PGRST125", "Invalid path specified in request URL"),
  openApiDisabled: () => new RestError(404, "PGRST126", "Root endpoint metadata is disabled"),
  notImplemented: (details: string) => new RestError(400, "PGRST127", "Feature not implemented", details),
  maxAffectedRpc: () =>
    new RestError(
      400,
      "PGRST128",
      "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
    ),

  // SchemaCacheError (PGRST2xx)
  noRelBetween: (parent: string, child: string, hint: string | undefined, schema: string, suggestion: string | null) =>
    new RestError(
      400,
      "PGRST200",
      `Could not find a relationship between '${parent}' and '${child}' in the schema cache`,
      `Searched for a foreign key relationship between '${parent}' and '${child}${
        hint ? `' using the hint '${hint}` : ""
      }' in the schema '${schema}', but no matches were found.`,
      suggestion,
    ),
  ambiguousRelBetween: (parent: string, child: string, details: unknown[], hint: string) =>
    new RestError(
      300,
      "PGRST201",
      `Could not embed because more than one relationship was found for '${parent}' and '${child}'`,
      details,
      hint,
    ),
  /**
   * No function matched. `rawBody` names the type of a single unnamed parameter the body's media type
   * could have filled (text, xml, bytea); "json" when a JSON body could also fill a json/jsonb one.
   */
  noRpc: (
    schema: string,
    name: string,
    keys: string[],
    rawBody: "json" | "text" | "xml" | "bytea" | null,
    hint: string | null,
  ) => {
    const fn = `${schema}.${name}`;
    const onlyRaw = rawBody !== null && rawBody !== "json";
    const withParams = keys.length === 0
      ? " without parameters"
      : ` with parameter${keys.length > 1 ? "s" : ""} ${keys.join(", ")}`;
    return new RestError(
      404,
      "PGRST202",
      `Could not find the function ${fn}${
        onlyRaw ? "" : keys.length === 0 ? " without parameters" : `(${keys.join(", ")})`
      } in the schema cache`,
      `Searched for the function ${fn}${
        onlyRaw
          ? ` with a single unnamed ${rawBody} parameter`
          : `${withParams}${rawBody === "json" ? " or with a single unnamed json/jsonb parameter" : ""}`
      }, but no matches were found in the schema cache.`,
      onlyRaw ? null : hint,
    );
  },
  ambiguousRpc: (signatures: string[]) =>
    new RestError(
      300,
      "PGRST203",
      `Could not choose the best candidate function between: ${signatures.join(", ")}`,
      null,
      "Try renaming the parameters or the function itself in the database so function overloading can be resolved",
    ),
  columnNotFound: (relation: string, column: string) =>
    new RestError(400, "PGRST204", `Could not find the '${column}' column of '${relation}' in the schema cache`),
  tableNotFound: (schema: string, name: string, suggestion: string | null) =>
    new RestError(
      404,
      "PGRST205",
      `Could not find the table '${schema}.${name}' in the schema cache`,
      null,
      suggestion ? `Perhaps you meant the table '${schema}.${suggestion}'` : null,
    ),

  // JwtError (PGRST3xx)
  jwtDecode: (message: string) =>
    new RestError(401, "PGRST301", message, null, null, {
      "www-authenticate": `Bearer error="invalid_token", error_description=${JSON.stringify(message)}`,
    }),
  jwtClaims: (message: string) =>
    new RestError(401, "PGRST303", message, null, null, {
      "www-authenticate": `Bearer error="invalid_token", error_description=${JSON.stringify(message)}`,
    }),

  /** What Postgres itself would answer for an unknown column (checked before any SQL runs). */
  undefinedColumn: (relation: string, column: string) =>
    new RestError(400, "42703", `column ${relation}.${quoteIfNeeded(column)} does not exist`),
};

function quoteIfNeeded(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** PostgREST's mapping of a SQLSTATE to an HTTP status (Error.hs, pgErrorStatus). */
export function pgStatus(code: string, message: string, authed: boolean): number {
  if (code.startsWith("08")) return 503;
  if (code.startsWith("09")) return 500;
  if (code.startsWith("0L") || code.startsWith("0P")) return 403;
  if (code === "23503" || code === "23505") return 409;
  if (code === "25006") return 405;
  if (code === "21000") return message.endsWith("requires a WHERE clause") ? 400 : 500;
  if (code === "22023") return message.startsWith("role") && message.endsWith("does not exist") ? 401 : 400;
  if (code.startsWith("25")) return 500;
  if (code.startsWith("28")) return 403;
  if (["2D", "38", "39", "3B", "40"].some((p) => code.startsWith(p))) return 500;
  if (code === "53400") return 500;
  if (code.startsWith("53")) return 503;
  if (code.startsWith("54") || code.startsWith("55")) return 500;
  if (code === "57P01") return 503;
  if (code.startsWith("57") || code.startsWith("58") || code.startsWith("F0") || code.startsWith("HV")) return 500;
  if (code === "P0001") return 400;
  if (code.startsWith("P0") || code.startsWith("XX")) return 500;
  if (code === "42883") return message.startsWith("function xmlagg(") ? 406 : 404;
  if (code === "42P01") return 404;
  if (code === "42P17") return 500;
  if (code === "42501") return authed ? 403 : 401;
  if (code.startsWith("PT")) {
    const status = Number(code.slice(2));
    return Number.isInteger(status) && status >= 100 && status <= 999 && /^\d+$/.test(code.slice(2)) ? status : 500;
  }
  return 400;
}

/** A Postgres error in PostgREST's body, with the status PostgREST gives it. */
export function fromPostgres(error: postgres.PostgresError, authed: boolean): RestError {
  if (error.code === "PGRST") return raisedPgrst(error.message, error.detail ?? null);
  const status = pgStatus(error.code, error.message, authed);
  return new RestError(
    status,
    error.code,
    error.message,
    error.detail ?? null,
    error.hint ?? null,
    status === 401 ? { "www-authenticate": "Bearer" } : {},
  );
}

/**
 * `raise sqlstate 'PGRST' using message = '{"code": ..., "message": ...}', detail = '{"status": ..., "headers": {...}}'`:
 * the function chooses the whole answer (PostgREST's "raise errors with HTTP status codes").
 */
function raisedPgrst(message: string, detail: string | null): RestError {
  const parseError = (details: string, hint: string) =>
    new RestError(500, "PGRST121", "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error", details, hint);
  const messageHint = "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: " +
    "'details', 'hint'.";
  const detailHint = "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: " +
    "'status_text'.";
  let body: { code?: unknown; message?: unknown; details?: unknown; hint?: unknown };
  try {
    body = JSON.parse(message);
  } catch {
    return parseError(`Invalid JSON value for MESSAGE: '${message}'`, messageHint);
  }
  if (typeof body !== "object" || body === null || typeof body.code !== "string" || typeof body.message !== "string") {
    return parseError(`Invalid JSON value for MESSAGE: '${message}'`, messageHint);
  }
  if (detail === null) return parseError("DETAIL is missing in the RAISE statement", detailHint);
  let response: { status?: unknown; headers?: unknown };
  try {
    response = JSON.parse(detail);
  } catch {
    return parseError(`Invalid JSON value for DETAIL: '${detail}'`, detailHint);
  }
  if (
    typeof response !== "object" || response === null || !Number.isInteger(response.status) ||
    typeof response.headers !== "object" || response.headers === null ||
    Object.values(response.headers).some((v) => typeof v !== "string")
  ) {
    return parseError(`Invalid JSON value for DETAIL: '${detail}'`, detailHint);
  }
  return new RestError(
    response.status as number,
    body.code,
    body.message,
    typeof body.details === "string" ? body.details : null,
    typeof body.hint === "string" ? body.hint : null,
    response.headers as Record<string, string>,
  );
}

export function errorResponse(error: RestError, extraHeaders: Headers): Response {
  const headers = new Headers(extraHeaders);
  headers.set("content-type", "application/json; charset=utf-8");
  headers.set("proxy-status", `PostgREST; error=${error.code}`);
  for (const [name, value] of Object.entries(error.headers)) headers.set(name, value);
  const body = JSON.stringify({ code: error.code, details: error.details, hint: error.hint, message: error.message });
  return new Response(body, { status: error.status, headers });
}

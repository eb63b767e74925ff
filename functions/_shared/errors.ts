// One place that turns failures into SPEC.md §7 responses: `{"detail": msg}`,
// or for a malformed body 400 with `{"detail": [{type, loc, msg, input}]}`.
import type { z } from "zod";

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

/** zod issues as SPEC.md §7 validation items; `location` is "body", "query" or "path". */
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

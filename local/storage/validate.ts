// What Storage checks before it acts: object keys and bucket names (its
// limits.ts rules), file size limits written with units, and request bodies
// against each route's schema, refused with the words Fastify's validator
// (ajv) uses ("body/paths must be array") so that a body of the wrong shape is
// a 400, never a 500.
import { z } from "zod";
import { ERRORS, validationError } from "./errors.ts";

// S3-safe characters, as Storage allows them (the hyphen last, a literal).
const VALID_OBJECT_KEY = /^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$/;
const VALID_BUCKET_NAME = /^[A-Za-z0-9_!.*'() &$=@;:+,?-]*$/;

export function mustBeValidKey(key: string): void {
  if (!key || !VALID_OBJECT_KEY.test(key)) throw ERRORS.invalidKey(key);
}

export function mustBeValidBucketName(name: string): void {
  if (!name || name.length > 100 || !VALID_BUCKET_NAME.test(name)) throw ERRORS.invalidBucketName();
}

/** Storage's parseFileSizeToBytes: "20GB", "1.5mb", "30KB", "3B" (decimal units). */
export function parseFileSize(value: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(gb|mb|kb|b)$/i.exec(value);
  if (!match) throw ERRORS.invalidFileSizeLimit();
  const amount = Number(Number.parseFloat(match[1]).toPrecision(3));
  const unit = { GB: 1e9, MB: 1e6, KB: 1e3, B: 1 }[match[2].toUpperCase() as "GB" | "MB" | "KB" | "B"];
  return amount * unit;
}

/** The Supabase CLI's sizes in config.toml ("5MiB", "50MB"): binary units, as the CLI reads them. */
export function parseConfigSize(value: string): number {
  const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b)?\s*$/i.exec(value);
  if (!match) throw new Error(`unreadable size: ${value}`);
  const power = ["", "k", "m", "g", "t"].indexOf(match[2].toLowerCase());
  return Math.floor(Number(match[1]) * 1024 ** power);
}

/** Storage's validateMimeType for a bucket's allowed types. */
export function checkAllowedMimeTypes(types: string[]): void {
  for (const type of types) {
    if (type.length > 1000 || !/^([a-zA-Z0-9\-+.]+)\/([a-zA-Z0-9\-+.]+)(;\s*charset=[a-zA-Z0-9\-]+)?$|\*$/.test(type)) {
      throw ERRORS.invalidMimeType(type);
    }
  }
}

// Every number Storage's routes take is an integer.
const AJV_TYPES: Record<string, string> = { int: "integer", number: "integer", record: "object" };

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function ajvMessage(location: string, issue: z.core.$ZodIssue, input: unknown): string {
  const where = (path: PropertyKey[]) => [location, ...path.map(String)].join("/");
  switch (issue.code) {
    case "invalid_type": {
      if (issue.path.length > 0 && valueAt(input, issue.path) === undefined) {
        return `${where(issue.path.slice(0, -1))} must have required property '${String(issue.path.at(-1))}'`;
      }
      return `${where(issue.path)} must be ${AJV_TYPES[issue.expected] ?? issue.expected}`;
    }
    case "too_small":
      return issue.origin === "array"
        ? `${where(issue.path)} must NOT have fewer than ${issue.minimum} items`
        : `${where(issue.path)} must be >= ${issue.minimum}`;
    case "too_big":
      return issue.origin === "array"
        ? `${where(issue.path)} must NOT have more than ${issue.maximum} items`
        : `${where(issue.path)} must be <= ${issue.maximum}`;
    case "invalid_value":
      return `${where(issue.path)} must be equal to one of the allowed values`;
    case "invalid_union":
      return `${where(issue.path)} must match a schema in anyOf`;
    case "invalid_format":
      return `${where(issue.path)} must match pattern`;
    default:
      return `${where(issue.path)} ${issue.message}`;
  }
}

/** The value, parsed by `schema`, or a 400 naming the first problem as Storage's framework does. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  location: "body" | "querystring",
): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(ajvMessage(location, result.error.issues[0], input));
  return result.data;
}

const fileSizeLimit = z.union([
  z.int().min(0),
  z.string().regex(/^[0-9]+(?:\.[0-9]+)?(?:[gG][bB]|[mM][bB]|[kK][bB]|[bB])$/),
]).nullable();
const sortOrder = z.enum(["asc", "desc"]);

export const schemas = {
  createBucket: z.object({
    name: z.string(),
    id: z.string().optional(),
    public: z.boolean().optional(),
    type: z.enum(["STANDARD", "ANALYTICS"]).optional(),
    file_size_limit: fileSizeLimit.optional(),
    allowed_mime_types: z.array(z.string()).nullable().optional(),
  }),
  updateBucket: z.object({
    public: z.boolean().optional(),
    file_size_limit: fileSizeLimit.optional(),
    allowed_mime_types: z.array(z.string()).nullable().optional(),
  }),
  listBuckets: z.object({
    limit: z.int().min(1).optional(),
    offset: z.int().min(0).optional(),
    sortColumn: z.enum(["id", "name", "created_at", "updated_at"]).optional(),
    sortOrder: sortOrder.optional(),
    search: z.string().optional(),
  }),
  list: z.object({
    prefix: z.string(),
    limit: z.int().min(1).optional(),
    offset: z.int().min(0).optional(),
    sortBy: z.object({
      column: z.enum(["name", "updated_at", "created_at", "last_accessed_at"]),
      order: sortOrder.optional(),
    }).optional(),
    search: z.string().optional(),
  }),
  listV2: z.object({
    prefix: z.string().optional(),
    limit: z.int().min(1).optional(),
    cursor: z.string().optional(),
    with_delimiter: z.boolean().optional(),
    sortBy: z.object({ column: z.enum(["name", "updated_at", "created_at"]), order: sortOrder.optional() }).optional(),
  }).optional().transform((body) => body ?? {}),
  deleteObjects: z.object({ prefixes: z.array(z.string()).min(1) }),
  signOne: z.object({ expiresIn: z.int().min(1), transform: z.record(z.string(), z.unknown()).optional() }),
  signMany: z.object({ expiresIn: z.int().min(1), paths: z.array(z.string()).min(1).max(1000) }),
  move: z.object({
    bucketId: z.string(),
    sourceKey: z.string(),
    destinationKey: z.string(),
    destinationBucket: z.string().optional(),
  }),
  copy: z.object({
    bucketId: z.string(),
    sourceKey: z.string(),
    destinationKey: z.string(),
    destinationBucket: z.string().optional(),
    metadata: z.object({ cacheControl: z.string().optional(), mimetype: z.string().optional() }).optional(),
    copyMetadata: z.boolean().optional(),
  }),
};

/** A query string's integer (ajv coerces query strings), or undefined when absent. */
export function queryInteger(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

// The latest `exp` a signed URL token may carry (the end of year 9999, as JWT libraries can date).
const MAX_EXPIRY_SECONDS = 253_402_300_799;

/** Storage's assertValidNumericJWTExpiration. */
export function checkExpiresIn(expiresIn: number): void {
  if (!Number.isSafeInteger(expiresIn) || expiresIn < 1 || Date.now() / 1000 + expiresIn > MAX_EXPIRY_SECONDS) {
    throw ERRORS.invalidParameter("expiresIn");
  }
}

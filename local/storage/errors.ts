// Storage's errors, as its API renders them (storage-api src/internal/errors):
// a body `{statusCode, code, error, message}` whose `statusCode` is the error's
// own status as a string, sent with HTTP 400 (500 for internal errors), as
// Storage's error handler does for every StorageBackendError; and the errors
// Storage leaves to its HTTP framework (an unknown route, a body that fails
// its schema or is too large), which keep their own HTTP status.
import postgres from "postgres";

export interface ErrorBody {
  statusCode: string;
  code: string;
  error: string;
  message: string;
}

export class StorageError extends Error {
  constructor(
    /** Storage's ErrorCode, e.g. NoSuchKey. */
    readonly code: string,
    /** The status the body names. */
    readonly statusCode: number,
    message: string,
    /** The older `error` field, when it differs from `code`. */
    readonly error: string = code,
    /** The HTTP status: Storage answers 400 for every error it raises but internal ones (and a few it overrides). */
    readonly httpStatus: number = statusCode === 500 ? 500 : 400,
  ) {
    super(message);
  }

  body(): ErrorBody {
    return { statusCode: String(this.statusCode), code: this.code, error: this.error, message: this.message };
  }
}

export const ERRORS = {
  noSuchBucket: () => new StorageError("NoSuchBucket", 404, "Bucket not found", "Bucket not found"),
  noSuchKey: () => new StorageError("NoSuchKey", 404, "Object not found", "not_found"),
  invalidKey: (key: string) => new StorageError("InvalidKey", 400, `Invalid key: ${key}`),
  invalidBucketName: () => new StorageError("InvalidBucketName", 400, "Bucket name invalid", "Invalid Input"),
  invalidJwt: (message: string) => new StorageError("InvalidJWT", 400, message || "Invalid JWT"),
  invalidSignature: (message = "Invalid signature") => new StorageError("InvalidSignature", 400, message),
  expiredSignature: () => new StorageError("ExpiredToken", 400, "The provided token has expired."),
  invalidParameter: (name: string, message = `Invalid Parameter ${name}`) =>
    new StorageError("InvalidParameter", 400, message),
  invalidRequest: (message: string) => new StorageError("InvalidRequest", 400, message),
  noContent: (message = "No content provided") => new StorageError("InvalidRequest", 400, message),
  accessDenied: (message = "Access denied", httpStatus?: number) =>
    new StorageError("AccessDenied", 403, message, "Unauthorized", httpStatus),
  resourceAlreadyExists: () =>
    new StorageError("ResourceAlreadyExists", 409, "The resource already exists", "Duplicate"),
  keyAlreadyExists: () => new StorageError("KeyAlreadyExists", 409, "The resource already exists", "Duplicate"),
  bucketAlreadyExists: () => new StorageError("BucketAlreadyExists", 409, "The resource already exists", "Duplicate"),
  bucketNotEmpty: () => new StorageError("ResourceNotEmpty", 409, "The bucket you tried to delete is not empty"),
  unableToEmptyBucket: (message: string) => new StorageError("InvalidRequest", 409, message),
  entityTooLarge: (entity = "object") =>
    new StorageError("EntityTooLarge", 413, `The ${entity} exceeded the maximum allowed size`, "Payload too large"),
  invalidMimeType: (mime: string) =>
    new StorageError("InvalidMimeType", 415, `mime type ${mime} is not supported`, "invalid_mime_type"),
  invalidFileSizeLimit: () =>
    new StorageError("InvalidRequest", 400, "Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B"),
  invalidRange: () => new StorageError("InvalidRange", 400, "invalid range provided", "invalid_range"),
  resourceReferenced: () =>
    new StorageError(
      "ResourceReferenced",
      409,
      "The resource could not be updated or removed due to a foreign key constraint",
    ),
  relatedResourceNotFound: () => new StorageError("InvalidRequest", 404, "The related resource does not exist"),
  databaseError: (code: string) => new StorageError("DatabaseError", 500, `database error, code: ${code}`),
  internal: () => new StorageError("InternalError", 500, "Internal server error"),
};

/**
 * The errors Fastify raises before Storage's handlers run, rendered by
 * Storage's error handler with their own HTTP status.
 */
export class FrameworkError extends Error {
  constructor(readonly status: number, readonly code: string, readonly error: string, message: string) {
    super(message);
  }

  body(): ErrorBody {
    return { statusCode: String(this.status), code: this.code, error: this.error, message: this.message };
  }
}

/** A body or query that fails its schema (Fastify's FST_ERR_VALIDATION, formatted as ajv words it). */
export const validationError = (message: string) => new FrameworkError(400, "InvalidRequest", "Error", message);
export const invalidJsonBody = () =>
  new FrameworkError(
    400,
    "InvalidRequest",
    "FastifyError",
    "Body is not valid JSON but content-type is set to 'application/json'",
  );
/** A JSON body over Fastify's bodyLimit (1 MiB). */
export const bodyTooLarge = () =>
  new FrameworkError(413, "EntityTooLarge", "FastifyError", "Request body is too large");
/** A path with a percent-escape that does not decode (Fastify's FST_ERR_BAD_URL). */
export const badUrl = (path: string) =>
  new FrameworkError(400, "InvalidRequest", "FastifyError", `'${path}' is not a valid url component`);
/** Storage's not-found handler for a route it does not have. */
export const routeNotFound = (method: string, url: string) =>
  new FrameworkError(404, "InvalidRequest", "Not Found", `Route ${method}:${url} not found`);

/** What Storage's DBError.fromDBError makes of a Postgres error. */
export function fromDatabaseError(error: unknown): unknown {
  if (!(error instanceof postgres.PostgresError)) return error;
  switch (error.code) {
    case "42501":
      return ERRORS.accessDenied(
        error.message.includes("row-level security") ? "new row violates row-level security policy" : error.message,
      );
    case "23505":
      return ERRORS.resourceAlreadyExists();
    case "23503":
      return error.detail?.includes("is still referenced from table")
        ? ERRORS.resourceReferenced()
        : ERRORS.relatedResourceNotFound();
    case "22P02":
      return ERRORS.invalidParameter("value", error.message || "Invalid value format or type conversion failed");
    default:
      // A value Postgres cannot hold (a NUL, a lone surrogate, an overlong string) is the request's fault: 400.
      if (error.code.startsWith("22")) return ERRORS.invalidRequest(`Invalid input: ${error.message}`);
      return ERRORS.databaseError(error.code);
  }
}

export function errorResponse(error: StorageError | FrameworkError, headers?: HeadersInit): Response {
  const status = error instanceof StorageError ? error.httpStatus : error.status;
  return Response.json(error.body(), { status, headers });
}

// Every error the local identity provider answers with, in one place: the
// status, error code and message Supabase Auth (GoTrue) uses for the same
// case, and the body shapes it sends them in, so auth-js sees what it would
// see against the real service.

/** An error answered to the client as GoTrue would answer it. */
export class AuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra top-level fields of the body (GoTrue's `weak_password`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AuthError";
  }
}

export const errors = {
  badJson: (detail: string) => new AuthError(400, "bad_json", `Could not parse request body as JSON: ${detail}`),
  // GoTrue's router answers these two in plain text; JSON here, so clients parse one shape.
  notFound: () => new AuthError(404, "not_found", "Not Found"),
  methodNotAllowed: () => new AuthError(405, "method_not_allowed", "Method Not Allowed"),

  // Sign-in (internal/api/token.go, token_refresh.go).
  unsupportedGrantType: () => new AuthError(400, "invalid_credentials", "unsupported_grant_type"),
  emailAndPhone: () =>
    new AuthError(400, "validation_failed", "Only an email address or phone number should be provided on login."),
  missingEmailOrPhone: () => new AuthError(400, "validation_failed", "missing email or phone"),
  refreshTokenMalformed: () => new AuthError(400, "validation_failed", "Refresh token is not valid"),
  invalidCredentials: () => new AuthError(400, "invalid_credentials", "Invalid login credentials"),
  emailNotConfirmed: () => new AuthError(400, "email_not_confirmed", "Email not confirmed"),
  userBannedAtLogin: () => new AuthError(400, "user_banned", "User is banned"),
  phoneLoginsDisabled: () => new AuthError(422, "phone_provider_disabled", "Phone logins are disabled"),

  // Refresh (internal/tokens/service.go).
  refreshTokenNotFound: () =>
    new AuthError(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found"),
  refreshTokenAlreadyUsed: () =>
    new AuthError(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used"),
  userBannedAtRefresh: () => new AuthError(400, "user_banned", "Invalid Refresh Token: User Banned"),

  // Bearer tokens (internal/api/auth.go, middleware.go).
  noAuthorization: () => new AuthError(401, "no_authorization", "This endpoint requires a valid Bearer token"),
  badJwt: (reason: string) =>
    new AuthError(403, "bad_jwt", `invalid JWT: unable to parse or verify signature, ${reason}`),
  missingSub: () => new AuthError(403, "bad_jwt", "invalid claim: missing sub claim"),
  subNotUuid: () => new AuthError(400, "bad_jwt", "invalid claim: sub claim must be a UUID"),
  sessionIdNotUuid: () => new AuthError(403, "bad_jwt", "invalid claim: session_id claim must be a UUID"),
  userFromSubMissing: () => new AuthError(403, "user_not_found", "User from sub claim in JWT does not exist"),
  sessionNotFound: () => new AuthError(403, "session_not_found", "Session from session_id claim in JWT does not exist"),
  userBanned: () => new AuthError(403, "user_banned", "User is banned"),
  notAdmin: () => new AuthError(403, "not_admin", "User not allowed"),
  unsupportedLogoutScope: (scope: string) =>
    new AuthError(400, "validation_failed", `Unsupported logout scope ${JSON.stringify(scope)}`),

  // Admin (internal/api/admin.go).
  userIdNotUuid: () => new AuthError(404, "validation_failed", "user_id must be an UUID"),
  missingEmail: () => new AuthError(400, "validation_failed", "Cannot create a user without either an email or phone"),
  emailTooLong: () => new AuthError(400, "validation_failed", "An email address is too long"),
  invalidEmail: () => new AuthError(400, "validation_failed", "Unable to validate email address: invalid format"),
  idNotUuid: () => new AuthError(400, "validation_failed", "ID must conform to the uuid v4 format"),
  idNil: () => new AuthError(400, "validation_failed", "ID cannot be a nil uuid"),
  invalidBanDuration: (value: string) =>
    new AuthError(400, "validation_failed", `invalid format for ban duration: time: invalid duration "${value}"`),
  passwordTooLongForBcrypt: () => new AuthError(400, "validation_failed", "bcrypt: password length exceeds 72 bytes"),
  passwordTooLong: () => new AuthError(400, "validation_failed", "Password cannot be longer than 72 characters"),
  userNotFound: () => new AuthError(404, "user_not_found", "User not found"),
  emailExists: () => new AuthError(422, "email_exists", "A user with this email address has already been registered"),
  weakPassword: (minLength: number) =>
    new AuthError(422, "weak_password", `Password should be at least ${minLength} characters.`, {
      weak_password: { reasons: ["length"] },
    }),
  unsupported: (field: string) =>
    new AuthError(400, "validation_failed", `${field} is not supported by the local identity provider`),

  // Sign-up (internal/api/api.go, signup.go).
  signupDisabled: () => new AuthError(422, "signup_disabled", "Signups not allowed for this instance"),
  anonymousDisabled: () => new AuthError(422, "anonymous_provider_disabled", "Anonymous sign-ins are disabled"),

  // Recovery and verification (internal/api/recover.go, verify.go).
  recoverNeedsEmail: () => new AuthError(400, "validation_failed", "Password recovery requires an email"),
  verifyNeedsType: () => new AuthError(400, "validation_failed", "Verify requires a verification type"),
  verifyNeedsToken: () => new AuthError(400, "validation_failed", "Verify requires a token or a token hash"),
  verifyTokenOrHash: () => new AuthError(400, "validation_failed", "Verify requires either a token or a token hash"),
  verifyOnlyHash: () => new AuthError(400, "validation_failed", "Only the token_hash and type should be provided"),
  unsupportedVerifyType: () => new AuthError(400, "validation_failed", "Unsupported verification type"),
  otpExpired: () => new AuthError(403, "otp_expired", "Token has expired or is invalid"),
  emailLinkExpired: () => new AuthError(403, "otp_expired", "Email link is invalid or has expired"),

  // The signed-in user (internal/api/user.go).
  samePassword: () => new AuthError(422, "same_password", "New password should be different from the old password."),
  appMetadataNeedsAdmin: () => new AuthError(403, "not_admin", "Updating app_metadata requires admin privileges"),
  phoneChangeUnsupported: () => new AuthError(422, "phone_provider_disabled", "Phone logins are disabled"),
  badPagination: (detail: string) => new AuthError(400, "validation_failed", `Bad Pagination Parameters: ${detail}`),

  // Custom access token hook (internal/hooks, internal/tokens/service.go).
  // GoTrue gives these no error code; its error handler then answers
  // `unexpected_failure` for a 500 and `unknown` for anything else.
  hook: (status: number, message: string) =>
    new AuthError(status, status === 500 ? "unexpected_failure" : "unknown", message),

  unexpected: () =>
    new AuthError(500, "unexpected_failure", "Unexpected failure, please check server logs for more information"),
};

const API_VERSION_HEADER = "X-Supabase-Api-Version";
const API_VERSION_2024 = "2024-01-01";

/**
 * GoTrue picks the body shape from the X-Supabase-Api-Version request header:
 * from 2024-01-01 on (auth-js always sends it) `{code: <error code>, message}`,
 * echoing the version; before that, or when absent or malformed,
 * `{code: <status>, error_code, msg}`.
 */
export function errorResponse(error: AuthError, requestedVersion: string | null): Response {
  const headers = new Headers({ "x-sb-error-code": error.code });
  if (isVersion2024(requestedVersion)) {
    headers.set(API_VERSION_HEADER, API_VERSION_2024);
    return Response.json({ code: error.code, message: error.message, ...error.extra }, {
      status: error.status,
      headers,
    });
  }
  return Response.json({ code: error.status, error_code: error.code, msg: error.message, ...error.extra }, {
    status: error.status,
    headers,
  });
}

function isVersion2024(version: string | null): boolean {
  if (!version || !/^\d{4}-\d{2}-\d{2}$/.test(version) || Number.isNaN(Date.parse(version))) return false;
  return version >= API_VERSION_2024;
}

export function requestedApiVersion(req: Request): string | null {
  return req.headers.get(API_VERSION_HEADER);
}

/** The API gateway in front of GoTrue (Kong locally, Supabase's gateway hosted) rejects a missing or wrong key. */
export function gatewayError(kind: "missing_api_key" | "invalid_api_key"): Response {
  const body = kind === "missing_api_key"
    ? { message: "No API key found in request", hint: "No `apikey` request header or url param was found." }
    : { message: "Invalid API key", hint: "Double check your Supabase `anon` or `service_role` API key." };
  return Response.json(body, { status: 401 });
}

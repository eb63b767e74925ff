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

  // Every request (internal/api/helpers.go, middleware.go, errors.go, apilimiter).
  requestTooLarge: (limit: number) =>
    new AuthError(413, "request_entity_too_large", `Request body too large (max ${limit} bytes)`),
  overRequestRateLimit: () => new AuthError(429, "over_request_rate_limit", "Request rate limit reached"),
  overEmailSendRateLimit: () => new AuthError(429, "over_email_send_rate_limit", "email rate limit exceeded"),
  sentTooRecently: (seconds: number) =>
    new AuthError(
      429,
      "over_email_send_rate_limit",
      `For security purposes, you can only request this after ${seconds} seconds.`,
    ),
  emailRequired: () => new AuthError(400, "validation_failed", "An email address is required"),
  emailLoginsDisabled: (status = 422) => new AuthError(status, "email_provider_disabled", "Email logins are disabled"),
  phoneLoginsDisabledBadRequest: () => new AuthError(400, "phone_provider_disabled", "Phone logins are disabled"),

  // Sign-up (internal/api/api.go, signup.go).
  signupDisabled: () => new AuthError(422, "signup_disabled", "Signups not allowed for this instance"),
  anonymousDisabled: () => new AuthError(422, "anonymous_provider_disabled", "Anonymous sign-ins are disabled"),
  signupNeedsPassword: () => new AuthError(400, "validation_failed", "Signup requires a valid password"),
  signupEmailAndPhone: () =>
    new AuthError(400, "validation_failed", "Only an email address or phone number should be provided on signup."),
  emailSignupsDisabled: () => new AuthError(400, "email_provider_disabled", "Email signups are disabled"),
  phoneSignupsDisabled: () => new AuthError(400, "phone_provider_disabled", "Phone signups are disabled"),
  userAlreadyExists: () => new AuthError(422, "user_already_exists", "User already registered"),

  // PKCE (internal/api/pkce.go, token.go, security/pkce.go).
  pkceParams: () =>
    new AuthError(400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge"),
  codeChallengeLength: () =>
    new AuthError(400, "validation_failed", "code challenge has to be between 43 and 128 characters"),
  codeChallengeCharacters: () =>
    new AuthError(
      400,
      "validation_failed",
      "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes",
    ),
  codeChallengeMethod: (method: string) =>
    new AuthError(400, "validation_failed", `unsupported code_challenge method ${JSON.stringify(method)}`),
  pkceGrantParams: () =>
    new AuthError(400, "validation_failed", "invalid request: both auth code and code verifier should be non-empty"),
  flowStateNotFound: () => new AuthError(404, "flow_state_not_found", "invalid flow state, no valid flow state found"),
  flowStateExpired: () => new AuthError(422, "flow_state_expired", "invalid flow state, flow state has expired"),
  badCodeVerifier: () =>
    new AuthError(400, "bad_code_verifier", "code challenge does not match previously saved code verifier"),
  noFlowStateForUser: () => new AuthError(422, "flow_state_not_found", "No valid flow state found for user."),

  // OTP and magic links (internal/api/otp.go, magic_link.go).
  otpDisabled: () => new AuthError(422, "otp_disabled", "Signups not allowed for otp"),
  otpEmailAndPhone: () =>
    new AuthError(400, "validation_failed", "Only an email address or phone number should be provided"),
  otpChannelWithEmail: () => new AuthError(400, "validation_failed", "Channel should only be specified with Phone OTP"),
  otpNeedsEmailOrPhone: () => new AuthError(400, "validation_failed", "One of email or phone must be set"),
  unsupportedPhoneProvider: () => new AuthError(400, "phone_provider_disabled", "Unsupported phone provider"),
  magicLinkNeedsEmail: () => new AuthError(422, "validation_failed", "Password recovery requires an email"),

  // Recovery and verification (internal/api/recover.go, verify.go).
  recoverNeedsEmail: () => new AuthError(400, "validation_failed", "Password recovery requires an email"),
  verifyNeedsType: () => new AuthError(400, "validation_failed", "Verify requires a verification type"),
  verifyNeedsToken: () => new AuthError(400, "validation_failed", "Verify requires a token or a token hash"),
  verifyTokenOrHash: () => new AuthError(400, "validation_failed", "Verify requires either a token or a token hash"),
  verifyOnlyHash: () => new AuthError(400, "validation_failed", "Only the token_hash and type should be provided"),
  unsupportedVerifyType: () => new AuthError(400, "validation_failed", "Unsupported verification type"),
  invalidEmailVerificationType: () => new AuthError(400, "validation_failed", "Invalid email verification type"),
  verifyInvalidEmail: () => new AuthError(422, "validation_failed", "Invalid email format"),
  verifyEmailOrPhone: () =>
    new AuthError(400, "validation_failed", "Only an email address or phone number should be provided on verify"),

  // Resend (internal/api/resend.go).
  resendType: () =>
    new AuthError(400, "validation_failed", "Missing one of these types: signup, email_change, sms, phone_change"),
  resendNeedsEmail: () => new AuthError(400, "validation_failed", "Type provided requires an email address"),
  resendNeedsPhone: () => new AuthError(400, "validation_failed", "Type provided requires a phone number"),
  resendEmailAndPhone: () =>
    new AuthError(400, "validation_failed", "Only an email address or phone number should be provided."),
  resendNeedsContact: () => new AuthError(400, "validation_failed", "Missing email address or phone number"),

  // Reauthentication (internal/api/reauthenticate.go, user.go).
  reauthenticationNeedsContact: () =>
    new AuthError(
      400,
      "validation_failed",
      "Reauthentication requires the user to have an email or a phone number",
    ),
  verifyEmailFirst: () => new AuthError(422, "email_not_confirmed", "Please verify your email first."),
  reauthenticationNeeded: () =>
    new AuthError(400, "reauthentication_needed", "Password update requires reauthentication"),
  reauthenticationNotValid: () => new AuthError(422, "reauthentication_not_valid", "Nonce has expired or is invalid"),

  // Invitations and links (internal/api/invite.go, mail.go).
  userWithEmailNotFound: () => new AuthError(404, "user_not_found", "User with this email not found"),
  invalidLinkType: (type: string) =>
    new AuthError(400, "validation_failed", `Invalid email action link type requested: ${type}`),
  secureEmailChangeNeeded: () =>
    new AuthError(400, "validation_failed", "Enable secure email change to generate link for current email"),

  // Features this project does not turn on (internal/api/middleware.go, mfa.go, external.go, token_oidc.go, web3.go).
  mfaEnrollDisabled: (factor: "phone" | "totp" | "webauthn") =>
    new AuthError(
      422,
      `mfa_${factor}_enroll_not_enabled`,
      `MFA enroll is disabled for ${({ phone: "Phone", totp: "TOTP", webauthn: "WebAuthn" })[factor]}`,
    ),
  factorType: () => new AuthError(400, "validation_failed", "factor_type needs to be totp, phone, or webauthn"),
  factorIdNotUuid: () => new AuthError(404, "validation_failed", "factor_id must be an UUID"),
  factorNotFound: () => new AuthError(404, "mfa_factor_not_found", "Factor not found"),
  passkeyNotFound: () => new AuthError(404, "validation_failed", "Passkey not found"),
  passkeysDisabled: () => new AuthError(404, "passkey_disabled", "Passkeys are disabled"),
  samlDisabled: () => new AuthError(404, "saml_provider_disabled", "SAML 2.0 is disabled"),
  manualLinkingDisabled: () => new AuthError(404, "manual_linking_disabled", "Manual linking is disabled"),
  oauthServerDisabled: () => new AuthError(404, "feature_disabled", "OAuth server is disabled"),
  customProvidersDisabled: () => new AuthError(404, "feature_disabled", "Custom OAuth providers are disabled"),
  unsupportedProvider: (reason: string) => new AuthError(400, "validation_failed", `Unsupported provider: ${reason}`),
  idTokenProviderDisabled: (issuer: string) =>
    new AuthError(400, "provider_disabled", `Provider (issuer ${JSON.stringify(issuer)}) is not enabled`),
  idTokenProviderNotAllowed: (provider: string) =>
    new AuthError(400, "validation_failed", `Custom OIDC provider ${JSON.stringify(provider)} not allowed`),
  customOAuthDisabled: () => new AuthError(400, "validation_failed", "Custom OAuth providers are disabled"),
  idTokenIssuerUndetected: (provider: string) =>
    new AuthError(400, "validation_failed", `Unable to detect issuer in ID token for ${provider} provider`),
  web3Disabled: () => new AuthError(422, "web3_provider_disabled", "Web3 provider is disabled"),
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

  // A value Postgres cannot hold (a NUL, a lone surrogate, a string over a column's length): a request's fault.
  unstorableValue: () =>
    new AuthError(400, "validation_failed", "A value in the request has a character or a length that cannot be stored"),

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

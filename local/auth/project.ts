// The [auth] settings of supabase/config.toml that the local Auth reads beyond
// those local/config.ts passes it (sign-up switches, redirect URLs, e-mail
// codes and confirmations, rate limits), with the Supabase CLI's defaults where
// the file is silent (its template config.toml). `supabase start` hands them to
// GoTrue as GOTRUE_* variables; the same variables, when set, override the file
// here, as they configure GoTrue itself (the test suite lifts the rate limits
// that way). Parsed and checked once, at start-up.
import { z } from "zod";

export interface RateLimits {
  /** `email_sent`: e-mails per hour, for the whole project (GOTRUE_RATE_LIMIT_EMAIL_SENT). */
  emailSent: number;
  /** `sign_in_sign_ups`: sign-ups, OTP and magic-link, recovery and resend requests per 5 minutes per IP (GOTRUE_RATE_LIMIT_OTP). */
  signInSignUps: number;
  /** `token_verifications`: /verify requests per 5 minutes per IP (GOTRUE_RATE_LIMIT_VERIFY). */
  tokenVerifications: number;
  /** `token_refresh`: /token requests (password, refresh, PKCE) per 5 minutes per IP (GOTRUE_RATE_LIMIT_TOKEN_REFRESH). */
  tokenRefresh: number;
  /** `anonymous_users`: anonymous sign-ins per hour per IP (GOTRUE_RATE_LIMIT_ANONYMOUS_USERS). */
  anonymousUsers: number;
}

export interface AuthProject {
  siteUrl: string;
  additionalRedirectUrls: string[];
  /** [auth] enable_signup (GOTRUE_DISABLE_SIGNUP, inverted). */
  enableSignup: boolean;
  /** [auth.email] enable_signup: the e-mail provider itself (GOTRUE_EXTERNAL_EMAIL_ENABLED). */
  emailEnabled: boolean;
  enableAnonymousSignIns: boolean;
  /** Not [auth.email] enable_confirmations: users are confirmed on sign-up (GOTRUE_MAILER_AUTOCONFIRM). */
  mailerAutoconfirm: boolean;
  /** [auth.email] secure_password_change: a password change in a session older than 24 h needs a reauthentication code. */
  securePasswordChange: boolean;
  /** [auth.email] double_confirm_changes: an e-mail change is confirmed from both addresses. */
  doubleConfirmChanges: boolean;
  otpLength: number;
  /** Seconds an e-mailed code or link stays valid. */
  otpExpiry: number;
  /** [auth.email] max_frequency, in milliseconds: the least time between two mails of one kind to one user. */
  maxFrequencyMs: number;
  minimumPasswordLength: number;
  rateLimits: RateLimits;
}

const durationUnitsMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration, in milliseconds ("1s", "1m30s", "500ms"); null when malformed. */
export function parseGoDuration(text: string): number | null {
  const sign = text.startsWith("-") ? -1 : 1;
  const body = text.replace(/^[-+]/, "");
  if (body === "0") return 0;
  if (body === "") return null;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  while (part.lastIndex < body.length) {
    const match = part.exec(body);
    if (!match) return null;
    total += Number(match[1]) * durationUnitsMs[match[2] === "μs" ? "µs" : match[2]];
  }
  return sign * total;
}

const duration = z.string().transform((text, ctx) => {
  const ms = parseGoDuration(text);
  if (ms === null || ms < 0) {
    ctx.addIssue({ code: "custom", message: `not a duration such as "1s" or "1m": ${text}` });
    return z.NEVER;
  }
  return ms;
});
const count = z.number().int().min(0);

/** The CLI's template config.toml is the default of every setting the file leaves out. */
const AuthSection = z.looseObject({
  site_url: z.string().default("http://127.0.0.1:3000"),
  additional_redirect_urls: z.array(z.string()).default([]),
  enable_signup: z.boolean().default(true),
  enable_anonymous_sign_ins: z.boolean().default(false),
  minimum_password_length: z.number().int().min(6).default(6),
  rate_limit: z.looseObject({
    email_sent: count.default(2),
    token_refresh: count.default(150),
    sign_in_sign_ups: count.default(30),
    token_verifications: count.default(30),
    anonymous_users: count.default(30),
  }).default({ email_sent: 2, token_refresh: 150, sign_in_sign_ups: 30, token_verifications: 30, anonymous_users: 30 }),
  email: z.looseObject({
    enable_signup: z.boolean().default(true),
    double_confirm_changes: z.boolean().default(true),
    enable_confirmations: z.boolean().default(false),
    secure_password_change: z.boolean().default(false),
    max_frequency: duration.default(1_000),
    otp_length: z.number().int().min(6).max(10).default(6),
    otp_expiry: z.number().int().positive().default(3600),
  }).default({
    enable_signup: true,
    double_confirm_changes: true,
    enable_confirmations: false,
    secure_password_change: false,
    max_frequency: 1_000,
    otp_length: 6,
    otp_expiry: 3600,
  }),
});

const flag = z.enum(["true", "false"]).transform((text) => text === "true");
const rate = z.coerce.number().min(0);

/** The GOTRUE_* variables the local Auth honours, as GoTrue names them. */
const GotrueEnv = z.object({
  GOTRUE_DISABLE_SIGNUP: flag.optional(),
  GOTRUE_EXTERNAL_EMAIL_ENABLED: flag.optional(),
  GOTRUE_MAILER_AUTOCONFIRM: flag.optional(),
  GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: flag.optional(),
  GOTRUE_SMTP_MAX_FREQUENCY: duration.optional(),
  GOTRUE_RATE_LIMIT_EMAIL_SENT: rate.optional(),
  GOTRUE_RATE_LIMIT_OTP: rate.optional(),
  GOTRUE_RATE_LIMIT_VERIFY: rate.optional(),
  GOTRUE_RATE_LIMIT_TOKEN_REFRESH: rate.optional(),
  GOTRUE_RATE_LIMIT_ANONYMOUS_USERS: rate.optional(),
});

export type SettingsResult = { project: AuthProject } | { problems: string[] };

/** The settings from config.toml's `[auth]` table and the environment, or what is wrong with them. */
export function parseAuthProject(auth: unknown, env: Record<string, string | undefined>): SettingsResult {
  const file = AuthSection.safeParse(auth ?? {});
  const overrides = GotrueEnv.safeParse(env);
  const problems = [
    ...(file.success
      ? []
      : file.error.issues.map((i) => `supabase/config.toml auth.${i.path.join(".")}: ${i.message}`)),
    ...(overrides.success
      ? []
      : overrides.error.issues.map((i) => `environment variable ${String(i.path[0])}: ${i.message}`)),
  ];
  if (!file.success || !overrides.success) return { problems };
  const a = file.data;
  const e = overrides.data;
  // GoTrue answers `max_frequency = 0` as its own default, a minute.
  const maxFrequencyMs = e.GOTRUE_SMTP_MAX_FREQUENCY ?? a.email.max_frequency;
  return {
    project: {
      siteUrl: a.site_url,
      additionalRedirectUrls: a.additional_redirect_urls,
      enableSignup: e.GOTRUE_DISABLE_SIGNUP === undefined ? a.enable_signup : !e.GOTRUE_DISABLE_SIGNUP,
      emailEnabled: e.GOTRUE_EXTERNAL_EMAIL_ENABLED ?? a.email.enable_signup,
      enableAnonymousSignIns: a.enable_anonymous_sign_ins,
      mailerAutoconfirm: e.GOTRUE_MAILER_AUTOCONFIRM ?? !a.email.enable_confirmations,
      securePasswordChange: e.GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION ??
        a.email.secure_password_change,
      doubleConfirmChanges: a.email.double_confirm_changes,
      otpLength: a.email.otp_length,
      otpExpiry: a.email.otp_expiry,
      maxFrequencyMs: maxFrequencyMs === 0 ? 60_000 : maxFrequencyMs,
      minimumPasswordLength: a.minimum_password_length,
      rateLimits: {
        emailSent: e.GOTRUE_RATE_LIMIT_EMAIL_SENT ?? a.rate_limit.email_sent,
        signInSignUps: e.GOTRUE_RATE_LIMIT_OTP ?? a.rate_limit.sign_in_sign_ups,
        tokenVerifications: e.GOTRUE_RATE_LIMIT_VERIFY ?? a.rate_limit.token_verifications,
        tokenRefresh: e.GOTRUE_RATE_LIMIT_TOKEN_REFRESH ?? a.rate_limit.token_refresh,
        anonymousUsers: e.GOTRUE_RATE_LIMIT_ANONYMOUS_USERS ?? a.rate_limit.anonymous_users,
      },
    },
  };
}

/**
 * GoTrue's GetReferrer: the request's `redirect_to` (header or query), else its
 * Referer, when the project allows it; else the site URL.
 */
export function referrer(project: AuthProject, req: Request, redirectTo?: string | null): string {
  const requested = redirectTo ?? req.headers.get("redirect_to") ?? new URL(req.url).searchParams.get("redirect_to");
  if (requested && isRedirectAllowed(project, requested)) return requested;
  const referer = req.headers.get("referer");
  if (referer && isRedirectAllowed(project, referer)) return referer;
  return project.siteUrl;
}

/**
 * GoTrue's IsRedirectURLValid: the site URL's host, a loopback address, or a
 * match of `additional_redirect_urls` (globs: `*` within a host label or path
 * segment, `**` across them), the fragment left out.
 */
export function isRedirectAllowed(project: AuthProject, redirectTo: string): boolean {
  if (!redirectTo) return false;
  let target: URL;
  try {
    target = new URL(redirectTo);
  } catch {
    return false;
  }
  const host = target.hostname.replace(/^\[|\]$/g, "");
  if (host === new URL(project.siteUrl).hostname) return true;
  if (/^[0-9]+$/.test(host)) return false;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return host.startsWith("127.");
  if (host.includes(":")) return host === "::1";
  const isHttp = target.protocol === "http:" || target.protocol === "https:";
  if (isHttp && !/^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/.test(host)) return false;
  const withoutFragment = redirectTo.split("#")[0];
  return project.additionalRedirectUrls.some((pattern) => globPattern(pattern).test(withoutFragment));
}

/** gobwas/glob with `.` and `/` as separators, as GoTrue compiles its allow list. */
function globPattern(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (char === "*") source += "[^./]*";
    else if (char === "?") source += "[^./]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

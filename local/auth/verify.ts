// GET and POST /verify (GoTrue's verify.go): a mailed code (with its e-mail),
// a token hash, or the mailed link itself, for every kind of mail: sign-up
// confirmation, invitation, magic link, recovery, e-mail change, and `email`
// (a sign-up or magic-link code, whichever it is). POST answers a session; GET
// redirects to the app with the session in the fragment, or, for a PKCE flow,
// with `?code=` to exchange at /token?grant_type=pkce, or with the error.
import type postgres from "postgres";
import { z } from "zod";
import type { RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { AuthError, errors } from "./errors.ts";
import { issueSession, sessionResponse } from "./grants.ts";
import { log } from "./log.ts";
import { tokenHash } from "./mail.ts";
import { issueAuthCode } from "./pkce.ts";
import { referrer } from "./project.ts";
import { readJson } from "./request.ts";
import type { AuthenticationMethod } from "./tokens.ts";
import { confirmUser, hashPassword, isBanned, randomPassword, type UserRow, validateEmail } from "./users.ts";

const VerifyBody = z.looseObject({
  type: z.string().nullish(),
  token: z.string().nullish(),
  token_hash: z.string().nullish(),
  email: z.string().nullish(),
  phone: z.string().nullish(),
  redirect_to: z.string().nullish(),
});

type MailType = "signup" | "invite" | "magiclink" | "recovery" | "email_change";
const SINGLE_CONFIRMATION = "Confirmation link accepted. Please proceed to confirm link sent to the other email";

/** The method a PKCE flow of each type was stored under (GoTrue's ParseAuthenticationMethod). */
const FLOW_METHOD: Record<MailType, AuthenticationMethod> = {
  signup: "email/signup",
  invite: "invite",
  magiclink: "magiclink",
  recovery: "recovery",
  email_change: "email_change",
};

interface VerifyParams {
  type: string;
  /** The code, when given with the e-mail (POST). */
  token: string | null;
  /** The token hash: of the link (GET), or given (POST), or computed from the e-mail and the code. */
  tokenHash: string;
  email: string | null;
  phone: string | null;
  byHash: boolean;
}

/** GoTrue's VerifyParams.Validate. */
function validate(body: z.infer<typeof VerifyBody>, get: boolean): VerifyParams {
  if (!body.type) throw errors.verifyNeedsType();
  if (get) {
    if (!body.token) throw errors.verifyNeedsToken();
    return { type: body.type, token: null, tokenHash: body.token, email: null, phone: null, byHash: true };
  }
  if ((!body.token && !body.token_hash) || (body.token && body.token_hash)) throw errors.verifyTokenOrHash();
  if (body.token) {
    if (body.phone && !body.email) {
      return { type: body.type, token: body.token, tokenHash: "", email: null, phone: body.phone, byHash: false };
    }
    if (!body.email || body.phone) throw errors.verifyEmailOrPhone();
    let email: string;
    try {
      email = validateEmail(body.email);
    } catch {
      throw errors.verifyInvalidEmail();
    }
    return {
      type: body.type,
      token: body.token,
      tokenHash: tokenHash(email, body.token),
      email,
      phone: null,
      byHash: false,
    };
  }
  if (body.email || body.phone || body.redirect_to) throw errors.verifyOnlyHash();
  return { type: body.type, token: null, tokenHash: body.token_hash!, email: null, phone: null, byHash: true };
}

const sentAtOf: Record<MailType, (u: UserRow) => Date | null> = {
  signup: (u) => u.confirmation_sent_at,
  invite: (u) => u.confirmation_sent_at,
  magiclink: (u) => u.recovery_sent_at,
  recovery: (u) => u.recovery_sent_at,
  email_change: (u) => u.email_change_sent_at,
};

const matches = (stored: string | null, hash: string) =>
  Boolean(stored) && (stored === hash || stored === `pkce_${hash}`);

function expired(ctx: RequestContext, sentAt: Date | null): boolean {
  return sentAt === null || Date.now() > sentAt.getTime() + ctx.project.otpExpiry * 1000;
}

/** GoTrue's verifyTokenHash: the user whose token the hash is, of the type's kind, not expired. */
async function userByHash(
  ctx: RequestContext,
  tx: postgres.TransactionSql,
  params: VerifyParams,
): Promise<{ user: UserRow; type: MailType }> {
  const hash = params.tokenHash;
  const either = [hash, hash.startsWith("pkce_") ? hash : `pkce_${hash}`];
  let rows: UserRow[];
  switch (params.type) {
    case "email":
      rows = await tx<UserRow[]>`
        select * from auth.users where confirmation_token in ${tx(either)} or recovery_token in ${
        tx(either)
      } for update`;
      break;
    case "signup":
    case "invite":
      rows = await tx<UserRow[]>`select * from auth.users where confirmation_token in ${tx(either)} for update`;
      break;
    case "recovery":
    case "magiclink":
      rows = await tx<UserRow[]>`select * from auth.users where recovery_token in ${tx(either)} for update`;
      break;
    case "email_change":
      rows = await tx<UserRow[]>`
        select * from auth.users
        where email_change_token_new in ${tx(either)} or email_change_token_current in ${tx(either)} for update`;
      break;
    default:
      throw errors.invalidEmailVerificationType();
  }
  const [user] = rows;
  if (!user) throw errors.emailLinkExpired();
  if (isBanned(user)) throw errors.userBanned();
  let type = params.type as MailType | "email";
  if (type === "email") type = matches(user.recovery_token, hash) ? "magiclink" : "signup";
  if (expired(ctx, sentAtOf[type](user))) throw errors.emailLinkExpired();
  return { user, type };
}

/** GoTrue's verifyUserAndToken: the user of the e-mail, whose code of the type's kind this is. */
async function userByCode(
  ctx: RequestContext,
  tx: postgres.TransactionSql,
  params: VerifyParams,
): Promise<{ user: UserRow; type: MailType }> {
  // No user has a phone here (phone sign-in is off), so a phone code is never valid.
  if (params.phone !== null) throw errors.otpExpired();
  const email = params.email!;
  const hash = params.tokenHash;
  const [user] = params.type === "email_change"
    ? await tx<UserRow[]>`
        select * from auth.users
        where aud = 'authenticated' and (
          (${ctx.project.doubleConfirmChanges} and lower(email) = ${email}
             and email_change_token_current in ${tx([hash, `pkce_${hash}`])})
          or (lower(email_change) = ${email} and email_change_token_new in ${tx([hash, `pkce_${hash}`])}))
        for update`
    : await tx<UserRow[]>`select * from auth.users where lower(email) = ${email} and aud = 'authenticated' for update`;
  if (!user) throw errors.otpExpired();
  if (isBanned(user)) throw errors.userBanned();
  const valid = (stored: string | null, sentAt: Date | null) => matches(stored, hash) && !expired(ctx, sentAt);
  let type: MailType;
  switch (params.type) {
    case "email":
      if (valid(user.confirmation_token, user.confirmation_sent_at)) type = "signup";
      else if (valid(user.recovery_token, user.recovery_sent_at)) type = "magiclink";
      else throw errors.otpExpired();
      return { user, type };
    case "signup":
    case "invite":
      if (!valid(user.confirmation_token, user.confirmation_sent_at)) throw errors.otpExpired();
      return { user, type: params.type };
    case "recovery":
    case "magiclink":
      if (!valid(user.recovery_token, user.recovery_sent_at)) throw errors.otpExpired();
      return { user, type: params.type };
    case "email_change":
      if (
        !valid(user.email_change_token_current, user.email_change_sent_at) &&
        !valid(user.email_change_token_new, user.email_change_sent_at)
      ) throw errors.otpExpired();
      return { user, type: "email_change" };
    default:
      throw errors.unsupportedVerifyType();
  }
}

/** What the verification did to the user: signed them in (when it completed), or recorded one of two confirmations. */
type Applied = "verified" | "single_confirmation";

async function applyVerification(
  ctx: RequestContext,
  tx: postgres.TransactionSql,
  user: UserRow,
  type: MailType,
  hash: string,
): Promise<Applied> {
  switch (type) {
    case "signup":
    case "invite":
      // An invited user has no password yet: they get one nobody knows, and the app asks for a new one.
      if (!user.encrypted_password && user.invited_at) {
        const encrypted = await hashPassword(randomPassword(), errors.passwordTooLong);
        await tx`update auth.users set encrypted_password = ${encrypted} where id = ${user.id}`;
      }
      await confirmUser(tx, user.id);
      return "verified";
    case "recovery":
    case "magiclink":
      await tx`update auth.users set recovery_token = '', updated_at = now() where id = ${user.id}`;
      if (!user.email_confirmed_at) await confirmUser(tx, user.id);
      return "verified";
    case "email_change": {
      // With secure e-mail change (and confirmations on), the first of the two links only records itself.
      if (
        !ctx.project.mailerAutoconfirm && ctx.project.doubleConfirmChanges &&
        user.email_change_confirm_status === 0 && user.email
      ) {
        const current = matches(user.email_change_token_current, hash);
        await tx`update auth.users set email_change_confirm_status = 1,
                   ${tx(current ? "email_change_token_current" : "email_change_token_new")} = ''
                 where id = ${user.id}`;
        return "single_confirmation";
      }
      await tx`update auth.users set email = email_change, email_change = '', email_change_token_new = '',
                 email_change_token_current = '', email_change_confirm_status = 0, email_change_sent_at = null,
                 email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
               where id = ${user.id}`;
      await tx`update auth.identities
               set identity_data = identity_data || jsonb_build_object('email', ${user.email_change}::text,
                                                                        'email_verified', true),
                   updated_at = now()
               where user_id = ${user.id} and provider = 'email'`;
      return "verified";
    }
  }
}

type Outcome =
  | { kind: "session"; response: Response; fragment: Record<string, string> }
  | { kind: "code"; code: string }
  | { kind: "single" };

async function run(ctx: RequestContext, params: VerifyParams, pkce: boolean): Promise<Outcome> {
  return await authTransaction(ctx.options.sql, async (tx) => {
    const { user, type } = params.byHash ? await userByHash(ctx, tx, params) : await userByCode(ctx, tx, params);
    const applied = await applyVerification(ctx, tx, user, type, params.tokenHash);
    if (applied === "single_confirmation") return { kind: "single" as const };
    if (pkce) return { kind: "code" as const, code: await issueAuthCode(tx, user.id, FLOW_METHOD[type]) };
    const issued = await issueSession(tx, ctx.options, ctx.req, user.id, "otp");
    log("verified", { type, user_id: user.id, session_id: issued.sessionId });
    return {
      kind: "session" as const,
      response: sessionResponse(issued.accessToken, issued.refreshToken, issued.user),
      fragment: {
        access_token: issued.accessToken.token,
        token_type: "bearer",
        expires_in: String(issued.accessToken.expiresAt - Math.floor(Date.now() / 1000)),
        expires_at: String(issued.accessToken.expiresAt),
        refresh_token: issued.refreshToken,
      },
    };
  });
}

const OAUTH_ERRORS: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized_client",
  403: "access_denied",
  500: "server_error",
  501: "unsupported_grant_type",
};

/** GET (the mailed link) and POST (a code, or a token hash) /verify. */
export async function verify(ctx: RequestContext): Promise<Response> {
  if (ctx.req.method === "POST") {
    const params = validate(await readJson(ctx.req, VerifyBody), false);
    const outcome = await run(ctx, params, false);
    if (outcome.kind === "single") return Response.json({ msg: SINGLE_CONFIRMATION, code: "200" });
    return (outcome as Extract<Outcome, { kind: "session" }>).response;
  }
  const query = ctx.url.searchParams;
  const redirectTo = referrer(ctx.project, ctx.req);
  const params = validate({ type: query.get("type"), token: query.get("token") }, true);
  const pkce = params.tokenHash.startsWith("pkce_");
  const target = new URL(redirectTo);
  const fragment = new URLSearchParams();
  try {
    const outcome = await run(ctx, params, pkce);
    if (outcome.kind === "single") {
      fragment.set("message", SINGLE_CONFIRMATION);
      if (pkce) target.searchParams.set("message", SINGLE_CONFIRMATION);
    } else if (outcome.kind === "code") {
      target.searchParams.set("code", outcome.code);
      return new Response(null, { status: 303, headers: { location: target.toString() } });
    } else {
      fragment.set("type", params.type);
      for (const [name, value] of Object.entries(outcome.fragment)) fragment.set(name, value);
    }
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    const oauthError = OAUTH_ERRORS[error.status];
    if (oauthError) fragment.set("error", oauthError);
    fragment.set("error_code", error.code);
    fragment.set("error_description", error.message);
    if (pkce) {
      if (oauthError) target.searchParams.set("error", oauthError);
      target.searchParams.set("error_code", error.code);
      target.searchParams.set("error_description", error.message);
    }
  }
  fragment.set("sb", "");
  target.hash = fragment.toString();
  return new Response(null, { status: 303, headers: { location: target.toString() } });
}

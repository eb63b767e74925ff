// Password recovery and e-mail verification (GoTrue's recover.go, verify.go,
// mail.go): POST /recover mails a link and a code to the local mailbox;
// POST /verify takes the code (with the e-mail) or the link's token hash and
// answers a session; GET /verify is the link itself, redirecting to the app
// with the session (or the error) in the fragment. The same paths confirm an
// e-mail change requested with PUT /user.
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { AuthError, errors } from "./errors.ts";
import { sessionResponse } from "./grants.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";
import { type AuthProject, referrer } from "./project.ts";
import { readJson } from "./request.ts";
import { startSession } from "./sessions.ts";
import { issueAccessToken } from "./tokens.ts";
import { findUserByEmail, findUserById, isBanned, type User, type UserRow, validateEmail } from "./users.ts";

/** GoTrue's crypto.GenerateTokenHash: hex SHA-224 of the address and the code. */
export function tokenHash(address: string, otp: string): string {
  return createHash("sha224").update(address + otp).digest("hex");
}

/** A code of `digits` decimal digits. */
export function generateOtp(digits: number): string {
  const values = crypto.getRandomValues(new Uint32Array(digits));
  return [...values].map((v) => String(v % 10)).join("");
}

/** GoTrue's encodeRedirectURL: a redirect the caller did not encode is encoded here. */
function encodeRedirect(url: string): string {
  return /[&=#]/.test(url) ? encodeURIComponent(url) : url;
}

/** The link of a mail: `{issuer}/verify?token=...&type=...&redirect_to=...` (GoTrue's getPath). */
export function verifyLink(issuer: string, hash: string, type: string, redirectTo: string): string {
  return `${issuer}/verify?token=${encodeURIComponent(hash)}&type=${type}&redirect_to=${encodeRedirect(redirectTo)}`;
}

/** GoTrue's default templates, with the link and the code. */
export function actionMail(
  to: string,
  subject: string,
  heading: string,
  sentence: string,
  linkText: string,
  link: string,
  otp: string,
): Mail {
  const html = `<h2>${heading}</h2>\n\n<p>${sentence}</p>\n<p><a href="${link}">${linkText}</a></p>\n` +
    `<p>Alternatively, enter the code: ${otp}</p>`;
  const text = `${heading}\n\n${sentence}\n${linkText} ( ${link} )\n\nAlternatively, enter the code: ${otp}`;
  return { to, subject, html, text };
}

const RecoverBody = z.looseObject({
  email: z.string().nullish(),
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

/** POST /recover: mails a recovery link and code; answers `{}` whether or not the address has a user. */
export const recover: Handler = async (ctx) => {
  const body = await readJson(ctx.req, RecoverBody);
  if (!body.email) throw errors.recoverNeedsEmail();
  const email = validateEmail(body.email);
  if (body.code_challenge) throw errors.unsupported("code_challenge (PKCE)");
  const user = await findUserByEmail(ctx.options.sql, email);
  if (!user) {
    log("recovery_requested", { result: "no_such_user" });
    return Response.json({});
  }
  const otp = generateOtp(ctx.project.otpLength);
  const hash = tokenHash(email, otp);
  await authTransaction(
    ctx.options.sql,
    (tx) => tx`update auth.users set recovery_token = ${hash}, recovery_sent_at = now() where id = ${user.id}`,
  );
  const redirectTo = referrer(ctx.project, ctx.url.searchParams.get("redirect_to"));
  const link = verifyLink(ctx.options.issuer, hash, "recovery", redirectTo);
  ctx.mailbox.send(
    actionMail(
      user.email!,
      "Reset Your Password",
      "Reset password",
      "Follow this link to reset the password for your user:",
      "Reset password",
      link,
      otp,
    ),
  );
  log("recovery_requested", { user_id: user.id });
  return Response.json({});
};

const VerifyBody = z.looseObject({
  type: z.string().nullish(),
  token: z.string().nullish(),
  token_hash: z.string().nullish(),
  email: z.string().nullish(),
  phone: z.string().nullish(),
  redirect_to: z.string().nullish(),
});

type VerifyType = "recovery" | "email_change";
const SINGLE_CONFIRMATION = "Confirmation link accepted. Please proceed to confirm link sent to the other email";

interface VerifyParams {
  type: string;
  /** The code, when given with the e-mail. */
  token: string | null;
  tokenHash: string | null;
  email: string | null;
}

/** VerifyParams.Validate: a type, and a code with its e-mail or a token hash alone. */
type Maybe = string | null | undefined;
function validate(
  params: { type?: Maybe; token?: Maybe; token_hash?: Maybe; email?: Maybe; phone?: Maybe },
  get: boolean,
): VerifyParams {
  if (!params.type) throw errors.verifyNeedsType();
  if (get) {
    if (!params.token) throw errors.verifyNeedsToken();
    return { type: params.type, token: null, tokenHash: params.token, email: null };
  }
  if ((!params.token && !params.token_hash) || (params.token && params.token_hash)) throw errors.verifyTokenOrHash();
  if (params.token) {
    if (params.phone) throw errors.unsupported("phone");
    if (!params.email) throw errors.verifyTokenOrHash();
    const email = validateEmail(params.email);
    return { type: params.type, token: params.token, tokenHash: tokenHash(email, params.token), email };
  }
  if (params.email || params.phone) throw errors.verifyOnlyHash();
  return { type: params.type, token: null, tokenHash: params.token_hash!, email: null };
}

function isExpired(sentAt: Date | null, project: AuthProject): boolean {
  return sentAt === null || sentAt.getTime() + project.otpExpiry * 1000 < Date.now();
}

type Outcome = { kind: "session"; response: Response; token: Record<string, string> } | { kind: "single" };

/** Finds the user the token belongs to and applies the verification, in one transaction. */
async function apply(ctx: RequestContext, params: VerifyParams): Promise<Outcome> {
  const type = params.type as VerifyType;
  if (type !== "recovery" && type !== "email_change") throw errors.unsupportedVerifyType();
  const byHash = params.email === null;
  const expiredError = byHash ? errors.emailLinkExpired : errors.otpExpired;
  return await authTransaction(ctx.options.sql, async (tx) => {
    const [row] = type === "recovery"
      ? byHash
        ? await tx<UserRow[]>`select * from auth.users where recovery_token = ${params.tokenHash} for update`
        : await tx<
          UserRow[]
        >`select * from auth.users where lower(email) = ${params.email} and recovery_token = ${params.tokenHash} for update`
      : await tx<UserRow[]>`
          select * from auth.users
          where (email_change_token_new = ${params.tokenHash} or email_change_token_current = ${params.tokenHash})
          for update`;
    if (!row) throw expiredError();
    if (isBanned(row)) throw new AuthError(403, "user_banned", "User is banned");
    if (type === "recovery") {
      if (isExpired(row.recovery_sent_at, ctx.project)) throw expiredError();
      await tx`update auth.users set recovery_token = '',
                 email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
               where id = ${row.id}`;
    } else {
      if (isExpired(row.email_change_sent_at, ctx.project)) throw expiredError();
      const current = row.email_change_token_current === params.tokenHash;
      // With double confirmation, the first link only records itself (GoTrue's email_change_confirm_status).
      if (ctx.project.doubleConfirmChanges && row.email_change_confirm_status === 0 && row.email) {
        await tx`update auth.users set email_change_confirm_status = 1,
                   ${tx(current ? "email_change_token_current" : "email_change_token_new")} = ''
                 where id = ${row.id}`;
        return { kind: "single" as const };
      }
      await tx`update auth.users set email = email_change, email_change = '', email_change_token_new = '',
                 email_change_token_current = '', email_change_confirm_status = 0, email_change_sent_at = null,
                 email_confirmed_at = now(), updated_at = now()
               where id = ${row.id}`;
      await tx`update auth.identities set identity_data = identity_data || jsonb_build_object('email', ${row.email_change}::text),
                 updated_at = now()
               where user_id = ${row.id} and provider = 'email'`;
    }
    const { session, refreshToken } = await startSession(tx, row.id, ctx.req.headers.get("user-agent"));
    const [signedIn] = await tx<UserRow[]>`
      update auth.users set last_sign_in_at = now() where id = ${row.id} returning *`;
    const user: User = { ...signedIn, identities: (await findUserById(tx, row.id))!.identities };
    const accessToken = await issueAccessToken(tx, ctx.options, signedIn, session, "otp");
    log("verified", { type, user_id: row.id, session_id: session.id });
    return {
      kind: "session" as const,
      response: sessionResponse(accessToken, refreshToken, user),
      token: {
        access_token: accessToken.token,
        token_type: "bearer",
        expires_in: String(accessToken.expiresAt - Math.floor(Date.now() / 1000)),
        expires_at: String(accessToken.expiresAt),
        refresh_token: refreshToken,
      },
    };
  });
}

/** GET (the mailed link) and POST (a code, or a token hash) /verify. */
export const verify: Handler = async (ctx) => {
  if (ctx.req.method === "POST") {
    const body = await readJson(ctx.req, VerifyBody);
    const outcome = await apply(ctx, validate(body, false));
    if (outcome.kind === "single") return Response.json({ msg: SINGLE_CONFIRMATION, code: "200" });
    return outcome.response;
  }
  const query = ctx.url.searchParams;
  const redirectTo = referrer(ctx.project, query.get("redirect_to"));
  const params = validate({ type: query.get("type") ?? undefined, token: query.get("token") ?? undefined }, true);
  const target = new URL(redirectTo);
  const fragment = new URLSearchParams();
  try {
    const outcome = await apply(ctx, params);
    if (outcome.kind === "single") fragment.set("message", SINGLE_CONFIRMATION);
    else {
      fragment.set("type", params.type);
      for (const [name, value] of Object.entries(outcome.token)) fragment.set(name, value);
    }
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    const oauthError =
      ({ 400: "invalid_request", 401: "unauthorized_client", 403: "access_denied", 500: "server_error" } as Record<
        number,
        string
      >)[error.status];
    if (oauthError) fragment.set("error", oauthError);
    fragment.set("error_code", error.code);
    fragment.set("error_description", error.message);
  }
  fragment.set("sb", "");
  target.hash = fragment.toString();
  return new Response(null, { status: 303, headers: { location: target.toString() } });
};

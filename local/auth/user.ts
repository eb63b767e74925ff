// The signed-in user's endpoints: GET and PUT /user, GET /reauthenticate and
// POST /logout (GoTrue's user.go, reauthenticate.go, logout.go).
import type postgres from "postgres";
import { timingSafeEqual } from "../../common/crypto.ts";
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { authTransaction, jsonb } from "./db.ts";
import { errors } from "./errors.ts";
import { requireUser } from "./guard.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";
import { checkFrequency, newToken, renderMail, takeEmailAllowance, tokenHash, verifyLink } from "./mail.ts";
import { type CodeChallenge, codeChallengeOf, startFlow } from "./pkce.ts";
import { referrer } from "./project.ts";
import { readJson } from "./request.ts";
import { endSessions, type LogoutScope } from "./sessions.ts";
import {
  checkPasswordStrength,
  findUserByEmail,
  findUserById,
  hashPassword,
  mergeMetadata,
  userJson,
  type UserRow,
  validateEmail,
  verifyPassword,
} from "./users.ts";

export const getUser: Handler = async (ctx) => {
  const { user } = await requireUser(ctx);
  return Response.json(userJson(user));
};

const LOGOUT_SCOPES: Record<string, LogoutScope> = { "": "global", global: "global", local: "local", others: "others" };

/** auth-js signOut(): ends sessions (default: all of the user's) and with them their refresh tokens. */
export const logout: Handler = async (ctx) => {
  const { user, sessionId } = await requireUser(ctx);
  const requested = ctx.url.searchParams.get("scope") ?? "";
  const scope = LOGOUT_SCOPES[requested];
  if (!scope) throw errors.unsupportedLogoutScope(requested);
  await authTransaction(ctx.options.sql, (tx) => endSessions(tx, user.id, sessionId, scope));
  log("logout", { user_id: user.id, session_id: sessionId, scope });
  return new Response(null, { status: 204 });
};

/**
 * GET /reauthenticate, auth-js reauthenticate(): mails a code (the nonce) that
 * a password change then presents when `secure_password_change` asks for it.
 */
export const reauthenticate: Handler = async (ctx) => {
  const { user } = await requireUser(ctx);
  if (!user.email && !user.phone) throw errors.reauthenticationNeedsContact();
  if (!user.email) throw errors.phoneLoginsDisabledBadRequest();
  if (!user.email_confirmed_at) throw errors.verifyEmailFirst();
  checkFrequency(ctx, user.reauthentication_sent_at);
  takeEmailAllowance(ctx);
  const { otp, stored } = newToken(user.email, ctx.project.otpLength);
  await authTransaction(
    ctx.options.sql,
    (tx) =>
      tx`update auth.users set reauthentication_token = ${stored}, reauthentication_sent_at = now()
       where id = ${user.id}`,
  );
  ctx.mailbox.send(renderMail("reauthentication", { to: user.email, otp }));
  log("reauthentication_sent", { user_id: user.id });
  return Response.json({});
};

/** GoTrue's verifyReauthentication: the nonce is the code last mailed by /reauthenticate, within its expiry. */
async function consumeNonce(ctx: RequestContext, tx: postgres.TransactionSql, user: UserRow, nonce: string) {
  const sentAt = user.reauthentication_sent_at;
  if (!user.reauthentication_token || !sentAt) throw errors.reauthenticationNotValid();
  const valid = timingSafeEqual(user.reauthentication_token, tokenHash(user.email ?? "", nonce)) &&
    Date.now() <= sentAt.getTime() + ctx.project.otpExpiry * 1000;
  if (!valid) throw errors.reauthenticationNotValid();
  await tx`update auth.users set reauthentication_token = '' where id = ${user.id}`;
}

/**
 * GoTrue's sendEmailChange: a code and link to the new address and, with
 * double confirmation, to the current one, at most once per `max_frequency`.
 * Returns the mails, to send once the transaction commits.
 */
export async function sendEmailChange(
  ctx: RequestContext,
  tx: postgres.TransactionSql,
  user: UserRow,
  newEmail: string,
  challenge: CodeChallenge | null,
): Promise<Mail[]> {
  checkFrequency(ctx, user.email_change_sent_at);
  const pkce = challenge !== null;
  const toNew = newToken(newEmail, ctx.project.otpLength, pkce);
  const double = ctx.project.doubleConfirmChanges && Boolean(user.email);
  const toCurrent = double ? newToken(user.email!, ctx.project.otpLength, pkce) : null;
  takeEmailAllowance(ctx);
  await tx`update auth.users set email_change = ${newEmail}, email_change_token_new = ${toNew.stored},
             email_change_token_current = ${toCurrent?.stored ?? ""}, email_change_confirm_status = 0,
             email_change_sent_at = now(), updated_at = now()
           where id = ${user.id}`;
  const redirectTo = referrer(ctx.project, ctx.req);
  const mail = (to: string, token: { otp: string; stored: string }) =>
    renderMail("email_change", {
      to,
      otp: token.otp,
      link: verifyLink(ctx.options.issuer, token.stored, "email_change", redirectTo),
      email: user.email ?? "",
      newEmail,
    });
  return [...(toCurrent ? [mail(user.email!, toCurrent)] : []), mail(newEmail, toNew)];
}

const UserUpdateBody = z.looseObject({
  email: z.string().nullish(),
  password: z.string().nullable().optional(),
  data: z.record(z.string(), z.unknown()).nullable().optional(),
  app_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  phone: z.string().nullish(),
  nonce: z.string().nullish(),
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

/** A session older than this must reauthenticate to change the password, with secure_password_change on. */
const RECENT_SIGN_IN_MS = 24 * 3_600_000;

/**
 * PUT /user, auth-js updateUser() (GoTrue's UserUpdate): a new password
 * (not the current one) ends the user's other sessions, and, with
 * `secure_password_change`, needs the nonce from /reauthenticate unless the
 * session began within 24 hours; `data` is merged into the user metadata; a
 * new e-mail is not applied at once but mailed for confirmation, to the new
 * address and, with double confirmation, the current one.
 */
export const updateCurrentUser: Handler = async (ctx) => {
  const { user, sessionId } = await requireUser(ctx);
  ctx.limit("user");
  const body = await readJson(ctx.req, UserUpdateBody);
  const newEmail = body.email ? validateEmail(body.email) : null;
  if (typeof body.password === "string") checkPasswordStrength(body.password, ctx.project.minimumPasswordLength);
  if (body.app_metadata) throw errors.appMetadataNeedsAdmin();
  if (body.phone && body.phone !== user.phone) throw errors.phoneChangeUnsupported();
  const changesEmail = newEmail !== null && newEmail !== user.email;
  if (changesEmail) {
    const existing = await findUserByEmail(ctx.options.sql, newEmail);
    if (existing && existing.id !== user.id) throw errors.emailExists();
  }
  const challenge = changesEmail ? codeChallengeOf(body) : null;
  let needsNonce = false;
  let encryptedPassword: string | null = null;
  if (typeof body.password === "string") {
    if (ctx.project.securePasswordChange) {
      const [session] = sessionId
        ? await ctx.options.sql<{ created_at: Date }[]>`select created_at from auth.sessions where id = ${sessionId}`
        : [];
      needsNonce = !session || Date.now() > session.created_at.getTime() + RECENT_SIGN_IN_MS;
      if (needsNonce && !body.nonce) throw errors.reauthenticationNeeded();
    }
    if (body.password !== "" && await verifyPassword(body.password, user.encrypted_password)) {
      throw errors.samePassword();
    }
    encryptedPassword = await hashPassword(body.password, errors.passwordTooLong);
  }

  const mails: Mail[] = [];
  const updated = await authTransaction(ctx.options.sql, async (tx) => {
    if (needsNonce) await consumeNonce(ctx, tx, user, body.nonce!);
    if (encryptedPassword) {
      await tx`update auth.users set encrypted_password = ${encryptedPassword}, updated_at = now() where id = ${user.id}`;
      await tx`delete from auth.sessions where user_id = ${user.id} and id is distinct from ${sessionId}`;
    }
    if (body.data) {
      await tx`update auth.users set raw_user_meta_data = ${
        jsonb(tx, mergeMetadata(user.raw_user_meta_data ?? {}, body.data))
      }, updated_at = now() where id = ${user.id}`;
    }
    if (changesEmail) {
      if (challenge) await startFlow(tx, user.id, challenge, "email_change");
      mails.push(...await sendEmailChange(ctx, tx, user, newEmail, challenge));
    }
    return (await findUserById(tx, user.id))!;
  });
  for (const mail of mails) ctx.mailbox.send(mail);
  log("user_updated", {
    user_id: user.id,
    password_changed: encryptedPassword !== null,
    metadata_changed: Boolean(body.data),
    email_change_requested: changesEmail,
  });
  return Response.json(userJson(updated));
};

// The signed-in user's endpoints: GET and PUT /user, and POST /logout.
import { z } from "zod";
import type { Handler } from "./context.ts";
import { authTransaction, jsonb } from "./db.ts";
import { errors } from "./errors.ts";
import { requireUser } from "./guard.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";
import { referrer } from "./project.ts";
import { actionMail, generateOtp, tokenHash, verifyLink } from "./recovery.ts";
import { readJson } from "./request.ts";
import { endSessions, type LogoutScope } from "./sessions.ts";
import {
  checkPasswordStrength,
  findUserByEmail,
  findUserById,
  hashPassword,
  mergeMetadata,
  userJson,
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

const UserUpdateBody = z.looseObject({
  email: z.string().nullish(),
  password: z.string().nullable().optional(),
  data: z.record(z.string(), z.unknown()).nullable().optional(),
  app_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  phone: z.string().nullish(),
  nonce: z.string().nullish(),
  code_challenge: z.string().nullish(),
});

/**
 * PUT /user, auth-js updateUser() (GoTrue's UserUpdate): a new password
 * (not the current one) ends the user's other sessions; `data` is merged
 * into the user metadata; a new e-mail is not applied at once but mailed for
 * confirmation, to the new address and, with double confirmation, the current
 * one, even with sign-up confirmations off.
 */
export const updateCurrentUser: Handler = async (ctx) => {
  const { user, sessionId } = await requireUser(ctx);
  const body = await readJson(ctx.req, UserUpdateBody);
  if (body.app_metadata) throw errors.appMetadataNeedsAdmin();
  if (body.phone && body.phone !== user.phone) throw errors.phoneChangeUnsupported();
  if (body.code_challenge) throw errors.unsupported("code_challenge (PKCE)");
  const newEmail = body.email ? validateEmail(body.email) : null;
  const changesEmail = newEmail !== null && newEmail !== user.email;
  if (changesEmail) {
    const existing = await findUserByEmail(ctx.options.sql, newEmail);
    if (existing && existing.id !== user.id) throw errors.emailExists();
  }
  let encryptedPassword: string | null = null;
  if (typeof body.password === "string") {
    if (body.password !== "" && await verifyPassword(body.password, user.encrypted_password)) {
      throw errors.samePassword();
    }
    encryptedPassword = await hashPassword(checkPasswordStrength(body.password), errors.passwordTooLong);
  }

  const mails: Mail[] = [];
  const updated = await authTransaction(ctx.options.sql, async (tx) => {
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
      const redirectTo = referrer(ctx.project, ctx.url.searchParams.get("redirect_to"));
      const otpNew = generateOtp(ctx.project.otpLength);
      const hashNew = tokenHash(newEmail, otpNew);
      const double = ctx.project.doubleConfirmChanges && Boolean(user.email);
      const otpCurrent = double ? generateOtp(ctx.project.otpLength) : "";
      const hashCurrent = double ? tokenHash(user.email!, otpCurrent) : "";
      await tx`update auth.users set email_change = ${newEmail}, email_change_token_new = ${hashNew},
                 email_change_token_current = ${hashCurrent}, email_change_confirm_status = 0,
                 email_change_sent_at = now(), updated_at = now()
               where id = ${user.id}`;
      const mail = (to: string, hash: string, otp: string) =>
        actionMail(
          to,
          "Confirm Email Change",
          "Confirm Change of Email",
          `Follow this link to confirm the update of your email from ${user.email} to ${newEmail}:`,
          "Change Email",
          verifyLink(ctx.options.issuer, hash, "email_change", redirectTo),
          otp,
        );
      if (double) mails.push(mail(user.email!, hashCurrent, otpCurrent));
      mails.push(mail(newEmail, hashNew, otpNew));
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

// The admin's invitations and links (GoTrue's invite.go, and adminGenerateLink
// in mail.go), for service_role callers: POST /invite (auth-js
// admin.inviteUserByEmail) creates the user without a password and mails an
// invitation; POST /admin/generate_link (admin.generateLink) makes the link
// and code of any kind of mail without sending it.
import { z } from "zod";
import type { Handler } from "./context.ts";
import { authTransaction, jsonb } from "./db.ts";
import { errors } from "./errors.ts";
import { requireAdmin } from "./guard.ts";
import { log } from "./log.ts";
import { newToken, renderMail, takeEmailAllowance, tokenHash, verifyLink } from "./mail.ts";
import { isRedirectAllowed, referrer } from "./project.ts";
import { readJson } from "./request.ts";
import {
  checkPasswordStrength,
  findUserByEmail,
  findUserById,
  hashPassword,
  insertUser,
  mergeMetadata,
  randomPassword,
  type User,
  userJson,
  validateEmail,
} from "./users.ts";

const metadata = z.record(z.string(), z.unknown()).nullish();

const InviteBody = z.looseObject({ email: z.string().nullish(), data: metadata });

export const invite: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const body = await readJson(ctx.req, InviteBody);
  const email = validateEmail(body.email ?? "");
  const existing = await findUserByEmail(ctx.options.sql, email);
  if (existing?.email_confirmed_at) throw errors.emailExists();
  const { otp, stored } = newToken(email, ctx.project.otpLength);
  const user = await authTransaction(ctx.options.sql, async (tx) => {
    const user = existing ??
      await insertUser(tx, { email, encryptedPassword: "", confirmed: false, userMetadata: body.data ?? {} });
    takeEmailAllowance(ctx);
    await tx`update auth.users set confirmation_token = ${stored}, confirmation_sent_at = now(), invited_at = now()
             where id = ${user.id}`;
    return (await findUserById(tx, user.id))!;
  });
  const link = verifyLink(ctx.options.issuer, stored, "invite", referrer(ctx.project, ctx.req));
  ctx.mailbox.send(renderMail("invite", { to: email, otp, link, siteUrl: ctx.project.siteUrl }));
  log("user_invited", { user_id: user.id });
  return Response.json(userJson(user));
};

const GenerateLinkBody = z.looseObject({
  type: z.string().nullish(),
  email: z.string().nullish(),
  new_email: z.string().nullish(),
  password: z.string().nullish(),
  data: metadata,
  redirect_to: z.string().nullish(),
});

type LinkType = "signup" | "invite" | "magiclink" | "recovery" | "email_change_current" | "email_change_new";
const LINK_TYPES = ["signup", "invite", "magiclink", "recovery", "email_change_current", "email_change_new"];

/**
 * POST /admin/generate_link: GoTrue's GenerateLinkResponse, the user's fields
 * with `action_link`, `email_otp`, `hashed_token`, `verification_type` and
 * `redirect_to`. A magic link for an unknown address signs it up (with a
 * password nobody knows); recovery and e-mail change links need a user.
 */
export const generateLink: Handler = async (ctx) => {
  await requireAdmin(ctx);
  const body = await readJson(ctx.req, GenerateLinkBody);
  const email = validateEmail(body.email ?? "");
  const redirectTo = body.redirect_to && isRedirectAllowed(ctx.project, body.redirect_to)
    ? body.redirect_to
    : referrer(ctx.project, ctx.req);
  const existing = await findUserByEmail(ctx.options.sql, email);
  let type = (body.type ?? "") as LinkType;
  let password = body.password ?? "";
  if (!existing) {
    if (type === "magiclink") {
      type = "signup";
      password = randomPassword();
    } else if (type === "recovery" || type === "email_change_current" || type === "email_change_new") {
      throw errors.userWithEmailNotFound();
    }
  }
  if (!LINK_TYPES.includes(type)) throw errors.invalidLinkType(type);
  // A new user of a sign-up link is validated as a sign-up is, and hashed before the transaction.
  let encryptedPassword = "";
  if (type === "signup" && !existing) {
    if (password === "") throw errors.signupNeedsPassword();
    checkPasswordStrength(password, ctx.project.minimumPasswordLength);
    encryptedPassword = await hashPassword(password, errors.passwordTooLong);
  }
  const { otp, stored: hash } = newToken(email, ctx.project.otpLength);
  const result = await authTransaction(ctx.options.sql, async (tx) => {
    let user: User | null = existing;
    let linkToken = hash;
    switch (type) {
      case "magiclink":
      case "recovery":
        await tx`update auth.users set recovery_token = ${hash}, recovery_sent_at = now() where id = ${user!.id}`;
        break;
      case "invite":
      case "signup":
        if (user?.email_confirmed_at) throw errors.emailExists();
        if (user && type === "signup" && body.data) {
          await tx`update auth.users set raw_user_meta_data = ${
            jsonb(tx, mergeMetadata(user.raw_user_meta_data ?? {}, body.data))
          } where id = ${user.id}`;
        }
        user ??= await insertUser(tx, {
          email,
          encryptedPassword,
          confirmed: false,
          userMetadata: body.data ?? {},
        });
        await tx`update auth.users set confirmation_token = ${hash}, confirmation_sent_at = now(),
                   invited_at = case when ${type === "invite"} then now() else invited_at end
                 where id = ${user.id}`;
        break;
      case "email_change_current":
      case "email_change_new": {
        if (!ctx.project.doubleConfirmChanges && type === "email_change_current") {
          throw errors.secureEmailChangeNeeded();
        }
        const newEmail = validateEmail(body.new_email ?? "");
        const taken = await findUserByEmail(tx, newEmail);
        if (taken && taken.id !== user!.id) throw errors.emailExists();
        const newHash = tokenHash(newEmail, otp);
        if (type === "email_change_new") linkToken = newHash;
        await tx`update auth.users set email_change = ${newEmail}, email_change_sent_at = now(),
                   email_change_confirm_status = 0,
                   email_change_token_current = case when ${type === "email_change_current"} then ${hash}
                                                     else email_change_token_current end,
                   email_change_token_new = case when ${type === "email_change_new"} then ${newHash}
                                                 else email_change_token_new end
                 where id = ${user!.id}`;
        break;
      }
    }
    return { user: (await findUserById(tx, user!.id))!, linkToken };
  });
  const verificationType = type.startsWith("email_change") ? "email_change" : type;
  log("link_generated", { type, user_id: result.user.id });
  return Response.json({
    ...userJson(result.user),
    action_link: verifyLink(ctx.options.issuer, result.linkToken, verificationType, redirectTo),
    email_otp: otp,
    hashed_token: hash,
    verification_type: type,
    redirect_to: redirectTo,
  });
};

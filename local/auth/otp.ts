// POST /otp and POST /magiclink (GoTrue's otp.go, magic_link.go): auth-js's
// signInWithOtp. For an e-mail, a magic link and a code to the local mailbox,
// verified at /verify as `magiclink` or `email`. An address without a confirmed
// user is signed up first (with a password nobody knows), where sign-up is on;
// with `create_user: false` it is refused with `otp_disabled`. Phone OTPs are
// refused as phone sign-in is off.
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import { checkFrequency, newToken, renderMail, takeEmailAllowance, verifyLink } from "./mail.ts";
import { codeChallengeOf, startFlow } from "./pkce.ts";
import { referrer } from "./project.ts";
import { readJson } from "./request.ts";
import { signUp } from "./signup.ts";
import { findUserByEmail, randomPassword, validateEmail } from "./users.ts";

const metadata = z.record(z.string(), z.unknown()).nullish();

const OtpBody = z.looseObject({
  email: z.string().nullish(),
  phone: z.string().nullish(),
  create_user: z.boolean().nullish(),
  data: metadata,
  channel: z.string().nullish(),
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

const MagicLinkBody = z.looseObject({
  email: z.string().nullish(),
  data: metadata,
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

export const otp: Handler = async (ctx) => {
  const body = await readJson(ctx.req, OtpBody);
  if (body.email && body.phone) throw errors.otpEmailAndPhone();
  if (body.email && body.channel) throw errors.otpChannelWithEmail();
  codeChallengeOf(body);
  // GoTrue's shouldCreateUser: without create_user, only an existing user gets a code.
  if (body.create_user === false && (body.email || body.phone)) {
    const user = body.email ? await findUserByEmail(ctx.options.sql, validateEmail(body.email)) : null;
    if (!user) throw errors.otpDisabled();
  }
  if (body.email) return await sendMagicLink(ctx, body);
  if (body.phone) throw errors.unsupportedPhoneProvider();
  throw errors.otpNeedsEmailOrPhone();
};

export const magicLink: Handler = async (ctx) => await sendMagicLink(ctx, await readJson(ctx.req, MagicLinkBody));

async function sendMagicLink(ctx: RequestContext, body: z.infer<typeof MagicLinkBody>): Promise<Response> {
  if (!ctx.project.emailEnabled) throw errors.emailLoginsDisabled();
  if (!body.email) throw errors.magicLinkNeedsEmail();
  const email = validateEmail(body.email);
  const challenge = codeChallengeOf(body);
  const user = await findUserByEmail(ctx.options.sql, email);
  if (!user?.email_confirmed_at) {
    // A new (or unconfirmed) address is signed up; with confirmations on, its confirmation mail is the link.
    const signUpParams = { email, phone: "", password: randomPassword(), data: body.data ?? {}, challenge: body };
    await signUp(ctx, signUpParams);
    if (!ctx.project.mailerAutoconfirm) return Response.json({});
    return await sendMagicLink(ctx, { ...body, data: {} });
  }
  const { otp, stored } = newToken(email, ctx.project.otpLength, challenge !== null);
  await authTransaction(ctx.options.sql, async (tx) => {
    if (challenge) await startFlow(tx, user.id, challenge, "magiclink");
    // A magic link is a recovery with another template: it shares the recovery token and its interval.
    checkFrequency(ctx, user.recovery_sent_at);
    takeEmailAllowance(ctx);
    await tx`update auth.users set recovery_token = ${stored}, recovery_sent_at = now() where id = ${user.id}`;
  });
  const link = verifyLink(ctx.options.issuer, stored, "magiclink", referrer(ctx.project, ctx.req));
  ctx.mailbox.send(renderMail("magiclink", { to: user.email!, otp, link }));
  log("magiclink_sent", { user_id: user.id });
  return Response.json({});
}

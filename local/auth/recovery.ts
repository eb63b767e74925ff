// POST /recover (GoTrue's recover.go): mails a recovery link and code to the
// local mailbox; the link and the code are verified at /verify (verify.ts).
// It answers `{}` whether or not the address has a user, and, unlike GoTrue,
// takes as long either way: an unknown address goes through the same
// transaction as a known one (writing nothing), so the time of the answer does
// not tell which addresses have an account.
import { z } from "zod";
import type { Handler } from "./context.ts";
import { authTransaction, NIL_UUID } from "./db.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import { checkFrequency, newToken, renderMail, takeEmailAllowance, verifyLink } from "./mail.ts";
import { codeChallengeOf, startFlow } from "./pkce.ts";
import { referrer } from "./project.ts";
import { readJson } from "./request.ts";
import { type UserRow, validateEmail } from "./users.ts";

const RecoverBody = z.looseObject({
  email: z.string().nullish(),
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

export const recover: Handler = async (ctx) => {
  if (!ctx.project.emailEnabled) throw errors.emailLoginsDisabled(400);
  const body = await readJson(ctx.req, RecoverBody);
  if (!body.email) throw errors.recoverNeedsEmail();
  const email = validateEmail(body.email);
  const challenge = codeChallengeOf(body);
  // One statement, whether or not a user has the address (no identities looked up after it).
  const [user] = await ctx.options.sql<UserRow[]>`
    select * from auth.users where lower(email) = ${email} and aud = 'authenticated' and not is_sso_user`;
  if (user) {
    checkFrequency(ctx, user.recovery_sent_at);
    takeEmailAllowance(ctx);
  }
  // The same statement either way; for an unknown address it matches no row.
  const { otp, stored } = newToken(email, ctx.project.otpLength, challenge !== null);
  await authTransaction(ctx.options.sql, async (tx) => {
    // Nor does the commit wait for the disk when it wrote (a lost recovery token is asked for again), which is
    // what a transaction that writes nothing would otherwise answer faster than one that does.
    await tx`set local synchronous_commit = off`;
    if (user && challenge) await startFlow(tx, user.id, challenge, "recovery");
    await tx`update auth.users set recovery_token = ${stored}, recovery_sent_at = now()
             where id = ${user?.id ?? NIL_UUID}`;
  });
  // The mail is written either way, and sent only to a user.
  const link = verifyLink(ctx.options.issuer, stored, "recovery", referrer(ctx.project, ctx.req));
  const mail = renderMail("recovery", { to: user?.email ?? email, otp, link });
  if (user) ctx.mailbox.send(mail);
  log("recovery_requested", user ? { user_id: user.id } : { result: "no_such_user" });
  return Response.json({});
};

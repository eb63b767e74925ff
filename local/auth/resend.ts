// POST /resend (GoTrue's resend.go): auth-js's resend(). Sends the sign-up
// confirmation or the e-mail change mail again, within `max_frequency`; an
// unknown address, a confirmed user or no pending change answers `{}` and sends
// nothing. SMS types are refused as phone sign-in is off.
import { z } from "zod";
import type { Handler } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";
import { codeChallengeOf, startFlow } from "./pkce.ts";
import { sendConfirmation } from "./signup.ts";
import { sendEmailChange } from "./user.ts";
import { findUserByEmail, validateEmail } from "./users.ts";
import { readJson } from "./request.ts";

const ResendBody = z.looseObject({
  type: z.string().nullish(),
  email: z.string().nullish(),
  phone: z.string().nullish(),
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

export const resend: Handler = async (ctx) => {
  const body = await readJson(ctx.req, ResendBody);
  const type = body.type ?? "";
  let challenge = null;
  if (type === "signup" || type === "email_change") challenge = codeChallengeOf(body);
  else if (type !== "sms" && type !== "phone_change") throw errors.resendType();
  if (!body.email && type === "signup") throw errors.resendNeedsEmail();
  if (!body.phone && type === "sms") throw errors.resendNeedsPhone();
  if (body.email && body.phone) throw errors.resendEmailAndPhone();
  if (body.phone) throw errors.phoneLoginsDisabledBadRequest();
  if (!body.email) throw errors.resendNeedsContact();
  if (!ctx.project.emailEnabled) throw errors.emailLoginsDisabled(400);
  const email = validateEmail(body.email);

  const user = await findUserByEmail(ctx.options.sql, email);
  if (!user) return Response.json({});
  if (type === "signup" && user.email_confirmed_at) return Response.json({});
  if (type === "email_change" && !user.email_change) return Response.json({});
  // An e-mail owner may still ask for an SMS type with their address: nothing is sent then.
  if (type !== "signup" && type !== "email_change") return Response.json({});

  const mails: Mail[] = await authTransaction(ctx.options.sql, async (tx) => {
    if (type === "signup") {
      if (challenge) await startFlow(tx, user.id, challenge, "email/signup");
      return [await sendConfirmation(ctx, tx, user, challenge)];
    }
    if (challenge) await startFlow(tx, user.id, challenge, "email_change");
    return await sendEmailChange(ctx, tx, user, user.email_change!, challenge);
  });
  for (const mail of mails) ctx.mailbox.send(mail);
  log("resent", { type, user_id: user.id });
  return Response.json({});
};

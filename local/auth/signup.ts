// POST /signup (GoTrue's api.go and signup.go), as supabase/config.toml sets
// it up: `[auth] enable_signup`, `[auth.email] enable_signup` and
// `enable_confirmations`. A body without e-mail and phone is an anonymous
// sign-in, which this stand-in does not offer; a phone sign-up is refused as
// phone sign-in is off. An e-mail sign-up creates the user and then either
// signs them in (confirmations off) or mails a confirmation link and code to
// the local mailbox (confirmations on), to be verified at /verify.
import type postgres from "postgres";
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { issueSession, sessionResponse } from "./grants.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";
import { checkFrequency, newToken, renderMail, takeEmailAllowance, verifyLink } from "./mail.ts";
import { type CodeChallenge, codeChallengeOf, startFlow } from "./pkce.ts";
import { referrer } from "./project.ts";
import { readJson } from "./request.ts";
import {
  checkPasswordStrength,
  confirmUser,
  findUserByEmail,
  findUserById,
  hashPassword,
  insertUser,
  type User,
  userJson,
  type UserRow,
  validateEmail,
} from "./users.ts";

const metadata = z.record(z.string(), z.unknown()).nullish();

const SignupBody = z.looseObject({
  email: z.string().nullish(),
  phone: z.string().nullish(),
  password: z.string().nullish(),
  data: metadata,
  code_challenge: z.string().nullish(),
  code_challenge_method: z.string().nullish(),
});

export const signup: Handler = async (ctx) => {
  const body = await readJson(ctx.req, SignupBody);
  if (!body.email && !body.phone) {
    if (!ctx.project.enableAnonymousSignIns) throw errors.anonymousDisabled();
    ctx.limit("anonymous");
    throw errors.unsupported("anonymous sign-in");
  }
  ctx.limit("signup");
  return await signUp(ctx, {
    email: body.email ?? "",
    phone: body.phone ?? "",
    password: body.password ?? "",
    data: body.data ?? {},
    challenge: body,
  });
};

export interface SignupParams {
  email: string;
  phone: string;
  password: string;
  data: Record<string, unknown>;
  challenge: { code_challenge?: string | null; code_challenge_method?: string | null };
}

/** GoTrue's Signup, in its order of checks; also what an OTP or magic link does for a new address. */
export async function signUp(ctx: RequestContext, params: SignupParams): Promise<Response> {
  if (!ctx.project.enableSignup) throw errors.signupDisabled();
  if (params.password === "") throw errors.signupNeedsPassword();
  checkPasswordStrength(params.password, ctx.project.minimumPasswordLength);
  if (params.email && params.phone) throw errors.signupEmailAndPhone();
  const challenge = codeChallengeOf(params.challenge);
  if (params.phone) throw errors.phoneSignupsDisabled();
  if (!ctx.project.emailEnabled) throw errors.emailSignupsDisabled();
  const email = validateEmail(params.email);

  const existing = await findUserByEmail(ctx.options.sql, email);
  // Hashing is slow: done before the transaction opens, as GoTrue does.
  const encryptedPassword = existing ? null : await hashPassword(params.password, errors.passwordTooLong);
  const mails: Mail[] = [];
  const result = await authTransaction(ctx.options.sql, async (tx) => {
    if (existing?.email_confirmed_at) return { kind: "exists" as const };
    // An unconfirmed user is not updated (who they are is not proven); their confirmation is sent again.
    const user = existing ?? await insertUser(tx, {
      email,
      encryptedPassword: encryptedPassword!,
      confirmed: false,
      userMetadata: params.data,
      identityData: params.data,
    });
    if (ctx.project.mailerAutoconfirm) {
      await confirmUser(tx, user.id);
      const issued = await issueSession(tx, ctx.options, ctx.req, user.id, "password");
      return {
        kind: "session" as const,
        response: sessionResponse(issued.accessToken, issued.refreshToken, issued.user),
      };
    }
    if (challenge) await startFlow(tx, user.id, challenge, "email/signup");
    mails.push(await sendConfirmation(ctx, tx, user, challenge));
    return { kind: "user" as const, user: (await findUserById(tx, user.id))! };
  });
  for (const mail of mails) ctx.mailbox.send(mail);

  if (result.kind === "exists") {
    log("signup", { result: "repeated", user_id: existing!.id });
    if (ctx.project.mailerAutoconfirm) throw errors.userAlreadyExists();
    // With confirmations on, GoTrue answers a made-up user, so that a sign-up does not tell who has an account.
    return Response.json(obfuscatedUser(existing!, params.data));
  }
  if (result.kind === "session") {
    log("signup", { result: "signed_in" });
    return result.response;
  }
  log("signup", { result: "confirmation_sent", user_id: result.user.id });
  return Response.json(userJson(result.user));
}

/**
 * GoTrue's sendConfirmation: at most one per `max_frequency`, a new code and
 * link (a PKCE flow's marked `pkce_`), within the project's e-mail limit.
 * Returns the mail, to send once the transaction commits.
 */
export async function sendConfirmation(
  ctx: RequestContext,
  tx: postgres.TransactionSql,
  user: UserRow,
  challenge: CodeChallenge | null,
): Promise<Mail> {
  checkFrequency(ctx, user.confirmation_sent_at);
  takeEmailAllowance(ctx);
  const { otp, stored } = newToken(user.email!, ctx.project.otpLength, challenge !== null);
  await tx`update auth.users set confirmation_token = ${stored}, confirmation_sent_at = now() where id = ${user.id}`;
  const link = verifyLink(ctx.options.issuer, stored, "signup", referrer(ctx.project, ctx.req));
  return renderMail("signup", { to: user.email!, otp, link });
}

/** GoTrue's sanitizeUser: a user with a new id and nothing of the real one but the address. */
function obfuscatedUser(user: User, data: Record<string, unknown>): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    aud: user.aud,
    role: "",
    email: user.email ?? "",
    phone: "",
    confirmation_sent_at: now,
    app_metadata: { provider: "email", providers: ["email"] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}

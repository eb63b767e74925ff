// POST /signup as GoTrue answers it for this project, where supabase/config.toml
// turns off both sign-up and anonymous sign-in (internal/api/api.go): a body
// without e-mail and phone is an anonymous sign-in; anything else a sign-up.
import { z } from "zod";
import type { Handler } from "./context.ts";
import { errors } from "./errors.ts";
import { readJson } from "./request.ts";

const SignupBody = z.looseObject({ email: z.string().nullish(), phone: z.string().nullish() });

export const signup: Handler = async (ctx) => {
  const body = await readJson(ctx.req, SignupBody);
  if (!body.email && !body.phone) {
    if (!ctx.project.enableAnonymousSignIns) throw errors.anonymousDisabled();
    throw errors.unsupported("anonymous sign-in");
  }
  if (!ctx.project.enableSignup) throw errors.signupDisabled();
  throw errors.unsupported("sign-up");
};

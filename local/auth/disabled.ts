// The endpoints of features this project does not turn on, answered as GoTrue
// answers them when they are off (internal/api/api.go's middlewares,
// mfa.go, external.go): never a bare 404. MFA factors cannot be enrolled
// (`mfa_*_enroll_not_enabled`), so any factor is `mfa_factor_not_found`;
// passkeys, SAML SSO, manual identity linking, the OAuth server and custom
// OAuth providers each answer their own disabled code; no OAuth provider is
// configured, so /authorize refuses every one.
import { z } from "zod";
import type { Handler, RequestContext } from "./context.ts";
import { errors } from "./errors.ts";
import { requireUser } from "./guard.ts";
import { readJson } from "./request.ts";
import { isUuid } from "./users.ts";

const EnrollBody = z.looseObject({ factor_type: z.string().nullish() });

/** POST /factors (auth-js mfa.enroll). */
export const enrollFactor: Handler = async (ctx) => {
  await requireUser(ctx);
  const body = await readJson(ctx.req, EnrollBody);
  switch (body.factor_type) {
    case "phone":
      throw errors.mfaEnrollDisabled("phone");
    case "totp":
      throw errors.mfaEnrollDisabled("totp");
    case "webauthn":
      throw errors.mfaEnrollDisabled("webauthn");
    default:
      throw errors.factorType();
  }
};

/** The factor of the path, as GoTrue's loadFactor finds it: none can exist here. */
async function loadFactor(ctx: RequestContext): Promise<never> {
  await requireUser(ctx);
  if (!isUuid(ctx.params.factor_id ?? "")) throw errors.factorIdNotUuid();
  throw errors.factorNotFound();
}

/** POST /factors/{id}/challenge and /verify (auth-js mfa.challenge, mfa.verify). */
export const challengeFactor: Handler = (ctx) => loadFactor(ctx);

/** DELETE /factors/{id} (auth-js mfa.unenroll). */
export const unenrollFactor: Handler = (ctx) => loadFactor(ctx);

/** /passkeys/* (auth-js passkey sign-in and registration). */
export const passkeys: Handler = () => Promise.reject(errors.passkeysDisabled());

/** POST /sso, /sso/saml/* (auth-js signInWithSSO). */
export const singleSignOn: Handler = () => Promise.reject(errors.samlDisabled());

/** GET /user/identities/authorize, DELETE /user/identities/{id} (auth-js linkIdentity, unlinkIdentity). */
export const identities: Handler = async (ctx) => {
  await requireUser(ctx);
  throw errors.manualLinkingDisabled();
};

/** The OAuth 2.1 server (/oauth/*, /user/oauth/*, /admin/oauth/*) and custom providers (/admin/custom-providers). */
export const oauthServer: Handler = (ctx) =>
  Promise.reject(
    ctx.url.pathname.includes("/admin/custom-providers")
      ? errors.customProvidersDisabled()
      : errors.oauthServerDisabled(),
  );

/** Providers GoTrue knows by name (internal/api/external.go's Provider). */
const KNOWN_PROVIDERS = new Set([
  "apple",
  "azure",
  "bitbucket",
  "discord",
  "facebook",
  "figma",
  "fly",
  "github",
  "gitlab",
  "google",
  "kakao",
  "keycloak",
  "linkedin",
  "linkedin_oidc",
  "notion",
  "slack",
  "slack_oidc",
  "snapchat",
  "spotify",
  "twitch",
  "twitter",
  "x",
  "vercel_marketplace",
  "workos",
  "zoom",
]);

/** GET /authorize?provider= (auth-js signInWithOAuth sends the browser here): no provider is configured. */
export const authorize: Handler = (ctx) => {
  const provider = (ctx.url.searchParams.get("provider") ?? "").toLowerCase();
  if (provider.startsWith("custom:")) {
    return Promise.reject(errors.unsupportedProvider("custom OAuth providers are disabled"));
  }
  if (KNOWN_PROVIDERS.has(provider)) return Promise.reject(errors.unsupportedProvider("provider is not enabled"));
  return Promise.reject(errors.unsupportedProvider(`Provider ${provider} could not be found`));
};

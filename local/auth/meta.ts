// The endpoints that describe the service: health, settings and the JWKS.
import { EMULATED } from "../versions.ts";
import type { Handler } from "./context.ts";

export const health: Handler = () =>
  Promise.resolve(Response.json({
    version: EMULATED.auth,
    name: "GoTrue",
    description: "GoTrue is a user registration and authentication API",
  }));

/** OAuth providers GoTrue lists in /settings; none is configured in this project. */
const OAUTH_PROVIDERS = [
  "apple",
  "azure",
  "bitbucket",
  "discord",
  "facebook",
  "snapchat",
  "figma",
  "fly",
  "github",
  "gitlab",
  "google",
  "keycloak",
  "kakao",
  "linkedin",
  "linkedin_oidc",
  "notion",
  "spotify",
  "slack",
  "slack_oidc",
  "workos",
  "twitch",
  "twitter",
  "zoom",
];

/** What this provider offers, from supabase/config.toml (GoTrue's settings.go). */
export const settings: Handler = ({ project }) =>
  Promise.resolve(Response.json({
    external: {
      anonymous_users: false,
      ...Object.fromEntries(OAUTH_PROVIDERS.map((name) => [name, false])),
      email: project.emailEnabled,
      phone: false,
    },
    disable_signup: !project.enableSignup,
    mailer_autoconfirm: project.mailerAutoconfirm,
    phone_autoconfirm: false,
    sms_provider: "",
    saml_enabled: false,
    passkeys_enabled: false,
  }));

/** The public half of the signing key; clients cache it for 10 minutes, as GoTrue tells them to. */
export const jwks: Handler = ({ options }) =>
  Promise.resolve(Response.json(options.keys.jwks, { headers: { "cache-control": "public, max-age=600" } }));

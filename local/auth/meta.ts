// The endpoints that describe the service: health, settings and the JWKS.
import { EMULATED } from "../versions.ts";
import type { Handler } from "./context.ts";

export const health: Handler = () =>
  Promise.resolve(Response.json({
    version: EMULATED.auth,
    name: "GoTrue",
    description: "GoTrue is a user registration and authentication API",
  }));

/** What this provider offers: e-mail and password sign-in only, no sign-up (supabase/config.toml). */
export const settings: Handler = () =>
  Promise.resolve(Response.json({
    external: { anonymous_users: false, email: true, phone: false },
    disable_signup: true,
    mailer_autoconfirm: true,
    phone_autoconfirm: false,
    sms_provider: "",
    saml_enabled: false,
    saml_private_key_next_configured: false,
    passkeys_enabled: false,
  }));

/** The public half of the signing key; clients cache it for 10 minutes, as GoTrue tells them to. */
export const jwks: Handler = ({ options }) =>
  Promise.resolve(Response.json(options.keys.jwks, { headers: { "cache-control": "public, max-age=600" } }));

// The [auth] settings of supabase/config.toml that the local Auth reads beyond
// those local/config.ts passes it: sign-up switches, redirect URLs and e-mail
// OTPs, with the Supabase CLI's defaults where the file is silent.
import { parse as parseToml } from "smol-toml";

export interface AuthProject {
  siteUrl: string;
  additionalRedirectUrls: string[];
  enableSignup: boolean;
  enableAnonymousSignIns: boolean;
  /** [auth.email] double_confirm_changes: an e-mail change is confirmed from both addresses. */
  doubleConfirmChanges: boolean;
  otpLength: number;
  /** Seconds an e-mailed code or link stays valid. */
  otpExpiry: number;
}

export async function loadAuthProject(configUrl: URL): Promise<AuthProject> {
  // deno-lint-ignore no-explicit-any
  const auth = (parseToml(await Deno.readTextFile(configUrl)) as any).auth ?? {};
  const email = auth.email ?? {};
  return {
    siteUrl: typeof auth.site_url === "string" ? auth.site_url : "http://127.0.0.1:3000",
    additionalRedirectUrls: Array.isArray(auth.additional_redirect_urls) ? auth.additional_redirect_urls : [],
    enableSignup: auth.enable_signup !== false,
    enableAnonymousSignIns: auth.enable_anonymous_sign_ins === true,
    doubleConfirmChanges: email.double_confirm_changes !== false,
    otpLength: typeof email.otp_length === "number" ? email.otp_length : 6,
    otpExpiry: typeof email.otp_expiry === "number" ? email.otp_expiry : 3600,
  };
}

/** GoTrue's GetReferrer: a redirect_to the project allows (site URL or an additional URL, globs allowed), else the site URL. */
export function referrer(project: AuthProject, redirectTo: string | null): string {
  if (!redirectTo) return project.siteUrl;
  const allowed = [project.siteUrl, ...project.additionalRedirectUrls];
  const matches = allowed.some((pattern) => {
    if (!pattern.includes("*")) return redirectTo === pattern || redirectTo.startsWith(pattern.replace(/\/?$/, "/"));
    const regex = new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
    return regex.test(redirectTo);
  });
  return matches ? redirectTo : project.siteUrl;
}

// The local Auth beyond passwords, through the real supabase-js client against the shared stack, whose
// config.toml turns sign-up off and confirmations off (written from GoTrue's otp.go, magic_link.go,
// invite.go, mail.go, resend.go, reauthenticate.go, verify.go): magic links and e-mail codes, invitations,
// generateLink of every type, resend, reauthenticate, the per-user interval between mails, and the features
// this project does not turn on, each answered with GoTrue's own code for it.
import { createClient } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { api, createUser, stack, uniqueEmail } from "../../support/api.ts";
import { codeIn, latestMailTo, linkIn, mailsTo } from "../../support/mailbox.ts";
import { supabaseClient } from "../../support/supabase.ts";

const PASSWORD = "flows-password-123";

function admin() {
  return createClient(stack().apiUrl, stack().serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  }).auth.admin;
}

async function signedIn(email: string, password = PASSWORD) {
  const client = supabaseClient();
  const { error } = await client.auth.signInWithPassword({ email, password });
  expect(error).toBeNull();
  return client;
}

/** Follows a mailed link as a browser would, and reads the app's URL it is sent back to. */
async function follow(link: string): Promise<{ url: URL; fragment: URLSearchParams }> {
  const res = await fetch(link, { redirect: "manual" });
  expect(res.status).toBe(303);
  const url = new URL(res.headers.get("location")!);
  return { url, fragment: new URLSearchParams(url.hash.slice(1)) };
}

describe("magic link and e-mail code (signInWithOtp)", () => {
  it("mails a magic link and a code to an existing user; the code signs in once", async () => {
    const email = uniqueEmail("otp");
    await createUser(email, PASSWORD);
    const client = supabaseClient();
    expect((await client.auth.signInWithOtp({ email, options: { shouldCreateUser: false } })).error).toBeNull();
    const mail = await latestMailTo(stack().apiUrl, email);
    expect(mail.Subject).toBe("Your Magic Link");
    expect(linkIn(mail)).toMatch(/\/auth\/v1\/verify\?token=[0-9a-f]{56}&type=magiclink&redirect_to=/);

    const wrong = await client.auth.verifyOtp({ email, token: "000000", type: "email" });
    expect(wrong.error).toMatchObject({ status: 403, code: "otp_expired" });
    const { data, error } = await client.auth.verifyOtp({ email, token: codeIn(mail), type: "email" });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    const claims = JSON.parse(Buffer.from(data.session!.access_token.split(".")[1], "base64url").toString());
    expect(claims.amr).toEqual([{ method: "otp", timestamp: expect.any(Number) }]);
    const again = await supabaseClient().auth.verifyOtp({ email, token: codeIn(mail), type: "magiclink" });
    expect(again.error?.code).toBe("otp_expired");
  });

  it("signs in through the link, on the way back to the app", async () => {
    const email = uniqueEmail("otp-link");
    await createUser(email, PASSWORD);
    expect((await supabaseClient().auth.signInWithOtp({ email })).error).toBeNull();
    const { url, fragment } = await follow(linkIn(await latestMailTo(stack().apiUrl, email)));
    expect(url.origin).toBe("http://127.0.0.1:3000");
    expect(fragment.get("type")).toBe("magiclink");
    const user = await api("/auth/v1/user", {
      token: fragment.get("access_token")!,
      headers: { apikey: stack().anonKey },
    });
    expect(user).toMatchObject({ status: 200, body: { email } });
  });

  it("allows one mail per user per max_frequency (config.toml: 60 s), then 429", async () => {
    const email = uniqueEmail("otp-twice");
    await createUser(email, PASSWORD);
    expect((await supabaseClient().auth.signInWithOtp({ email })).error).toBeNull();
    const second = await supabaseClient().auth.signInWithOtp({ email });
    expect(second.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    expect(second.error?.message).toMatch(/^For security purposes, you can only request this after \d+ seconds\.$/);
    // The same interval covers recovery: a magic link is a recovery with another template.
    const recovery = await supabaseClient().auth.resetPasswordForEmail(email);
    expect(recovery.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    expect(await mailsTo(stack().apiUrl, email)).toHaveLength(1);
  });

  it("refuses an unknown address: otp_disabled without create_user, signup_disabled with it", async () => {
    const email = uniqueEmail("otp-unknown");
    const without = await supabaseClient().auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
    expect(without.error).toMatchObject({ status: 422, code: "otp_disabled", message: "Signups not allowed for otp" });
    const withCreate = await supabaseClient().auth.signInWithOtp({ email });
    expect(withCreate.error).toMatchObject({ status: 422, code: "signup_disabled" });
    expect(await mailsTo(stack().apiUrl, email)).toEqual([]);
  });
});

describe("invitations (admin.inviteUserByEmail)", () => {
  it("creates the user without a password, mails the invitation, and its link signs them in to set one", async () => {
    const email = uniqueEmail("invited");
    const { data, error } = await admin().inviteUserByEmail(email, {
      data: { name: "Invited" },
      redirectTo: "http://127.0.0.1:3000/welcome",
    });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, user_metadata: { name: "Invited" }, invited_at: expect.any(String) });
    expect(data.user?.email_confirmed_at).toBeUndefined();
    const mail = await latestMailTo(stack().apiUrl, email);
    expect(mail.Subject).toBe("You have been invited");
    // No password yet: nothing signs in with one.
    const guess = await supabaseClient().auth.signInWithPassword({ email, password: "" });
    expect(guess.error?.code).toBe("invalid_credentials");

    const { url, fragment } = await follow(linkIn(mail));
    expect(url.pathname).toBe("/welcome");
    expect(fragment.get("type")).toBe("invite");
    const set = await api("/auth/v1/user", {
      method: "PUT",
      token: fragment.get("access_token")!,
      headers: { apikey: stack().anonKey },
      body: { password: PASSWORD },
    });
    expect(set.status).toBe(200);
    expect(set.body.email_confirmed_at).toEqual(expect.any(String));
    await signedIn(email);

    const twice = await admin().inviteUserByEmail(email);
    expect(twice.error).toMatchObject({ status: 422, code: "email_exists" });
  });

  it("is for the service role only", async () => {
    const email = uniqueEmail("not-admin");
    await createUser(email, PASSWORD);
    const client = await signedIn(email);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const res = await api("/auth/v1/invite", {
      token,
      headers: { apikey: stack().anonKey },
      body: { email: uniqueEmail("victim") },
    });
    expect(res.status).toBe(403);
    expect(res.body.error_code ?? res.body.code).toBe("not_admin");
  });
});

describe("admin.generateLink", () => {
  it("makes a sign-up link whose token hash confirms the new user, and sends no mail", async () => {
    const email = uniqueEmail("gen-signup");
    const { data, error } = await admin().generateLink({ type: "signup", email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.properties).toMatchObject({
      verification_type: "signup",
      email_otp: expect.stringMatching(/^\d{6}$/),
      hashed_token: expect.stringMatching(/^[0-9a-f]{56}$/),
      redirect_to: "http://127.0.0.1:3000",
    });
    expect(data.properties!.action_link).toContain(`token=${data.properties!.hashed_token}&type=signup`);
    expect(data.user?.email_confirmed_at).toBeUndefined();
    expect(await mailsTo(stack().apiUrl, email)).toEqual([]);
    const unconfirmed = await supabaseClient().auth.signInWithPassword({ email, password: PASSWORD });
    expect(unconfirmed.error?.code).toBe("email_not_confirmed");

    const verified = await supabaseClient().auth.verifyOtp({
      token_hash: data.properties!.hashed_token,
      type: "signup",
    });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toEqual(expect.any(String));
    await signedIn(email);
    const again = await admin().generateLink({ type: "signup", email, password: PASSWORD });
    expect(again.error).toMatchObject({ status: 422, code: "email_exists" });
  });

  it("makes magic-link, recovery and invite links, each verified as its type", async () => {
    const email = uniqueEmail("gen-links");
    await createUser(email, PASSWORD);
    const magic = await admin().generateLink({ type: "magiclink", email });
    expect(magic.error).toBeNull();
    const byCode = await supabaseClient().auth.verifyOtp({
      email,
      token: magic.data.properties!.email_otp,
      type: "magiclink",
    });
    expect(byCode.error).toBeNull();

    const recovery = await admin().generateLink({
      type: "recovery",
      email,
      options: { redirectTo: "http://127.0.0.1:3000/reset" },
    });
    expect(recovery.error).toBeNull();
    const { url, fragment } = await follow(recovery.data.properties!.action_link);
    expect(url.pathname).toBe("/reset");
    expect(fragment.get("type")).toBe("recovery");

    const invited = uniqueEmail("gen-invite");
    const invite = await admin().generateLink({ type: "invite", email: invited });
    expect(invite.error).toBeNull();
    expect(invite.data.user).toMatchObject({ email: invited, invited_at: expect.any(String) });
    expect((await follow(invite.data.properties!.action_link)).fragment.get("type")).toBe("invite");
    expect(await mailsTo(stack().apiUrl, invited)).toEqual([]);

    // A magic link for an unknown address signs it up (GoTrue turns it into a sign-up link).
    const stranger = uniqueEmail("gen-stranger");
    const signup = await admin().generateLink({ type: "magiclink", email: stranger });
    expect(signup.data.properties?.verification_type).toBe("signup");
    expect(signup.data.user?.email).toBe(stranger);
  });

  it("makes e-mail change links for the current and the new address", async () => {
    const email = uniqueEmail("gen-change");
    const next = uniqueEmail("gen-changed");
    await createUser(email, PASSWORD);
    const current = await admin().generateLink({ type: "email_change_current", email, newEmail: next });
    expect(current.error).toBeNull();
    expect(current.data.user?.new_email).toBe(next);
    const toNew = await admin().generateLink({ type: "email_change_new", email, newEmail: next });
    expect(toNew.error).toBeNull();
    // Confirmations are off in this project: one confirmation applies the change, as in GoTrue.
    expect((await follow(toNew.data.properties!.action_link)).fragment.get("type")).toBe("email_change");
    await signedIn(next);
  });

  it("refuses recovery of an unknown address and an unknown type", async () => {
    const recovery = await admin().generateLink({ type: "recovery", email: uniqueEmail("gen-nobody") });
    expect(recovery.error).toMatchObject({ status: 404, code: "user_not_found" });
    const bad = await api("/auth/v1/admin/generate_link", {
      headers: { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` },
      body: { type: "teleport", email: uniqueEmail("gen-bad") },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.msg ?? bad.body.message).toBe("Invalid email action link type requested: teleport");
  });
});

describe("resend and reauthenticate", () => {
  it("resend sends nothing for a confirmed user or an unknown address, and keeps the interval for a change", async () => {
    const email = uniqueEmail("resend");
    await createUser(email, PASSWORD);
    expect((await supabaseClient().auth.resend({ type: "signup", email })).error).toBeNull();
    expect((await supabaseClient().auth.resend({ type: "signup", email: uniqueEmail("nobody") })).error).toBeNull();
    expect(await mailsTo(stack().apiUrl, email)).toEqual([]);

    const client = await signedIn(email);
    expect((await client.auth.updateUser({ email: uniqueEmail("resend-new") })).error).toBeNull();
    const resent = await supabaseClient().auth.resend({ type: "email_change", email });
    expect(resent.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    const sms = await supabaseClient().auth.resend({ type: "sms", phone: "+5511988887777" });
    expect(sms.error).toMatchObject({ status: 400, code: "phone_provider_disabled" });
  });

  it("reauthenticate mails a code", async () => {
    const email = uniqueEmail("reauth");
    await createUser(email, PASSWORD);
    const client = await signedIn(email);
    expect((await client.auth.reauthenticate()).error).toBeNull();
    const mail = await latestMailTo(stack().apiUrl, email);
    expect(mail.Subject).toBe("Confirm reauthentication");
    expect(codeIn(mail)).toMatch(/^\d{6}$/);
    const twice = await client.auth.reauthenticate();
    expect(twice.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
  });
});

describe("features this project does not turn on", () => {
  it("answers each with GoTrue's own code, never a bare 404", async () => {
    const email = uniqueEmail("features");
    await createUser(email, PASSWORD);
    const client = await signedIn(email);
    const { data: session } = await client.auth.getSession();
    const token = session.session!.access_token;

    expect((await client.auth.mfa.enroll({ factorType: "totp" })).error)
      .toMatchObject({ status: 422, code: "mfa_totp_enroll_not_enabled" });
    expect((await client.auth.mfa.enroll({ factorType: "phone", phone: "+5511988887777" })).error)
      .toMatchObject({ status: 422, code: "mfa_phone_enroll_not_enabled" });
    expect((await client.auth.mfa.challenge({ factorId: crypto.randomUUID() })).error)
      .toMatchObject({ status: 404, code: "mfa_factor_not_found" });
    expect((await client.auth.mfa.listFactors()).data?.all).toEqual([]);
    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data).toMatchObject({ currentLevel: "aal1", nextLevel: "aal1" });

    expect((await supabaseClient().auth.signInWithSSO({ domain: "company.example" })).error)
      .toMatchObject({ status: 404, code: "saml_provider_disabled" });
    expect((await client.auth.linkIdentity({ provider: "github" })).error)
      .toMatchObject({ status: 404, code: "manual_linking_disabled" });
    expect((await supabaseClient().auth.signInWithIdToken({ provider: "google", token: "x.y.z" })).error)
      .toMatchObject({ status: 400, code: "provider_disabled" });
    expect((await supabaseClient().auth.signInWithPassword({ phone: "+5511988887777", password: "x" })).error)
      .toMatchObject({ status: 422, code: "phone_provider_disabled" });
    expect((await supabaseClient().auth.signInWithOtp({ phone: "+5511988887777" })).error)
      .toMatchObject({ status: 400, code: "phone_provider_disabled" });
    expect((await supabaseClient().auth.signUp({ phone: "+5511988887777", password: PASSWORD })).error)
      .toMatchObject({ status: 422, code: "signup_disabled" });

    const apikey = { apikey: stack().anonKey };
    const passkeys = await api("/auth/v1/passkeys/authentication/options", { headers: apikey, body: {} });
    expect(passkeys).toMatchObject({ status: 404, body: { error_code: "passkey_disabled" } });
    const oauthServer = await api("/auth/v1/oauth/authorizations/x", { headers: apikey, token });
    expect(oauthServer).toMatchObject({ status: 404, body: { error_code: "feature_disabled" } });
    // signInWithOAuth sends the browser to /authorize, open at the gateway (no API key).
    const github = await api("/auth/v1/authorize?provider=github");
    expect(github).toMatchObject({
      status: 400,
      body: { error_code: "validation_failed", msg: "Unsupported provider: provider is not enabled" },
    });
    const adminFactors = await admin().mfa.listFactors({ userId: session.session!.user.id });
    expect(adminFactors).toMatchObject({ data: { factors: [] }, error: null });

    const settings = await api("/auth/v1/settings", { headers: apikey });
    expect(settings.body).toMatchObject({
      disable_signup: true,
      mailer_autoconfirm: true,
      saml_enabled: false,
      passkeys_enabled: false,
      external: { email: true, phone: false, github: false, google: false },
    });
  });
});

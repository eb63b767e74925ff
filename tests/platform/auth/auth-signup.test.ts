// A project that turns sign-up and e-mail confirmations on, on a stack of its own (GoTrue's own variables
// over config.toml, as `supabase start` hands config.toml to GoTrue): sign-up with confirmation through the
// local mailbox, resend, the PKCE flow as supabase-js runs it, `secure_password_change` with
// reauthenticate's nonce, and the rate limits of config.toml's [auth.rate_limit], which the shared stack
// lifts: per client address for /token, /verify and the sign-in/sign-up group, and `email_sent` for the
// project. The limits' tests come last: they use up the buckets the flows above share.
import { createClient } from "@supabase/supabase-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueEmail } from "../../support/api.ts";
import { codeIn, latestMailTo, linkIn, mailsTo } from "../../support/mailbox.ts";
import { type OwnStack, sleep, startOwnStack } from "../../support/stack.ts";

const PASSWORD = "signup-password-123";
/** Mails per hour for the project: enough for the flows above the limit's own test. */
const EMAIL_SENT = 14;

let stack: OwnStack;
let sql: postgres.Sql;

beforeAll(async () => {
  stack = await startOwnStack({
    env: {
      GOTRUE_DISABLE_SIGNUP: "false",
      GOTRUE_MAILER_AUTOCONFIRM: "false",
      GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: "true",
      GOTRUE_SMTP_MAX_FREQUENCY: "1s",
      GOTRUE_RATE_LIMIT_EMAIL_SENT: String(EMAIL_SENT),
    },
  });
  sql = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await stack?.stop();
});

function client(flowType: "implicit" | "pkce" = "implicit") {
  return createClient(stack.apiUrl, stack.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType },
  });
}

const mail = (address: string) => latestMailTo(stack.apiUrl, address);

async function redirectOf(link: string): Promise<URL> {
  const res = await fetch(link, { redirect: "manual" });
  expect(res.status).toBe(303);
  return new URL(res.headers.get("location")!);
}

describe("sign-up with e-mail confirmation", () => {
  it("creates an unconfirmed user, mails a code that confirms them, and only then signs them in", async () => {
    const email = uniqueEmail("signup");
    const { data, error } = await client().auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { plan: "pro" } },
    });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user).toMatchObject({
      email,
      user_metadata: { plan: "pro" },
      confirmation_sent_at: expect.any(String),
    });
    expect(data.user?.email_confirmed_at).toBeUndefined();
    const confirmation = await mail(email);
    expect(confirmation.Subject).toBe("Confirm Your Email");
    const early = await client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(early.error).toMatchObject({ status: 400, code: "email_not_confirmed" });

    const verified = await client().auth.verifyOtp({ email, token: codeIn(confirmation), type: "signup" });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ email, user_metadata: { plan: "pro", email_verified: true } });
    expect(verified.data.user?.identities?.[0].identity_data).toMatchObject({ email_verified: true });
    expect((await client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();

    // Signing up again with a confirmed address answers a made-up user: it does not tell who has an account.
    const again = await client().auth.signUp({ email, password: "another-password-1" });
    expect(again.error).toBeNull();
    expect(again.data.user?.id).not.toBe(verified.data.user?.id);
    expect(again.data.user?.identities).toEqual([]);
    expect((await mailsTo(stack.apiUrl, email)).length).toBe(1);
  });

  it("resends the confirmation after max_frequency, and the new link confirms", async () => {
    const email = uniqueEmail("resend");
    expect((await client().auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const first = await mail(email);
    const soon = await client().auth.resend({ type: "signup", email });
    expect(soon.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    await sleep(1_100);
    expect((await client().auth.resend({ type: "signup", email })).error).toBeNull();
    const second = await mail(email);
    expect(codeIn(second)).not.toBe(codeIn(first));
    // The first code was replaced.
    const stale = await client().auth.verifyOtp({ email, token: codeIn(first), type: "signup" });
    expect(stale.error?.code).toBe("otp_expired");

    const location = await redirectOf(linkIn(second));
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get("type")).toBe("signup");
    const { data } = await client().auth.getUser(fragment.get("access_token")!);
    expect(data.user).toMatchObject({ email, email_confirmed_at: expect.any(String) });
  });

  it("signs up a new address through signInWithOtp, whose confirmation code verifies as `email`", async () => {
    const email = uniqueEmail("otp-new");
    expect((await client().auth.signInWithOtp({ email })).error).toBeNull();
    const confirmation = await mail(email);
    expect(confirmation.Subject).toBe("Confirm Your Email");
    const { data, error } = await client().auth.verifyOtp({ email, token: codeIn(confirmation), type: "email" });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
  });
});

describe("PKCE, as supabase-js runs it with flowType: 'pkce'", () => {
  it("sign-up: the link sends the app a code, which the client exchanges with its verifier, once", async () => {
    const email = uniqueEmail("pkce");
    const app = client("pkce");
    expect((await app.auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const link = linkIn(await mail(email));
    expect(link).toContain("token=pkce_");
    const location = await redirectOf(link);
    const code = location.searchParams.get("code")!;
    expect(code).toMatch(/^[0-9a-f-]{36}$/);
    expect(location.hash).toBe("");

    const { data, error } = await app.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.session?.user).toMatchObject({ email, email_confirmed_at: expect.any(String) });
    const claims = JSON.parse(Buffer.from(data.session!.access_token.split(".")[1], "base64url").toString());
    expect(claims.amr[0].method).toBe("email/signup");
    const replay = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=pkce`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ auth_code: code, code_verifier: "x".repeat(43) }),
    });
    expect(replay.status).toBe(404);
    expect((await replay.json()).error_code).toBe("flow_state_not_found");
  });

  it("magic link: refuses a wrong code verifier, then exchanges with the right one", async () => {
    const email = uniqueEmail("pkce-magic");
    await confirmedUser(email);
    const app = client("pkce");
    expect((await app.auth.signInWithOtp({ email, options: { shouldCreateUser: false } })).error).toBeNull();
    const code = (await redirectOf(linkIn(await mail(email)))).searchParams.get("code")!;
    const wrong = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=pkce`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ auth_code: code, code_verifier: "y".repeat(43) }),
    });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error_code).toBe("bad_code_verifier");
    const { data, error } = await app.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
  });
});

describe("PKCE recovery", () => {
  it("sends the app a code for a recovery session, in which the password is changed", async () => {
    const email = uniqueEmail("pkce-recovery");
    await confirmedUser(email);
    const app = client("pkce");
    expect((await app.auth.resetPasswordForEmail(email, { redirectTo: "http://127.0.0.1:3000/reset" })).error)
      .toBeNull();
    const location = await redirectOf(linkIn(await mail(email)));
    expect(location.pathname).toBe("/reset");
    const { data, error } = await app.auth.exchangeCodeForSession(location.searchParams.get("code")!);
    expect(error).toBeNull();
    // auth-js tells the app the session is a recovery (PASSWORD_RECOVERY), from the verifier it stored.
    expect((data as { redirectType?: string }).redirectType).toBe("recovery");
    expect((await app.auth.updateUser({ password: "recovered-password-1" })).error).toBeNull();
    expect((await client().auth.signInWithPassword({ email, password: "recovered-password-1" })).error).toBeNull();
  });
});

/** A confirmed user, signed up and confirmed by code. */
async function confirmedUser(email: string) {
  expect((await client().auth.signUp({ email, password: PASSWORD })).error).toBeNull();
  expect((await client().auth.verifyOtp({ email, token: codeIn(await mail(email)), type: "signup" })).error).toBeNull();
}

describe("secure_password_change", () => {
  it("asks a session older than 24 h for reauthenticate's nonce before changing the password", async () => {
    const email = uniqueEmail("secure");
    await confirmedUser(email);
    const app = client();
    const { data } = await app.auth.signInWithPassword({ email, password: PASSWORD });
    // A session that began within 24 hours changes it without one.
    expect((await app.auth.updateUser({ password: "recent-password-1" })).error).toBeNull();

    await sql`update auth.sessions set created_at = now() - interval '25 hours' where id = ${
      JSON.parse(Buffer.from(data.session!.access_token.split(".")[1], "base64url").toString()).session_id
    }`;
    const without = await app.auth.updateUser({ password: "older-password-2" });
    expect(without.error).toMatchObject({ status: 400, code: "reauthentication_needed" });
    expect((await app.auth.reauthenticate()).error).toBeNull();
    const nonce = codeIn(await mail(email));
    const wrong = await app.auth.updateUser({
      password: "older-password-2",
      nonce: nonce === "000000" ? "111111" : "000000",
    });
    expect(wrong.error).toMatchObject({ status: 422, code: "reauthentication_not_valid" });
    expect((await app.auth.updateUser({ password: "older-password-2", nonce })).error).toBeNull();
    expect((await client().auth.signInWithPassword({ email, password: "older-password-2" })).error).toBeNull();
    // The nonce is used up.
    const reused = await app.auth.updateUser({ password: "older-password-3", nonce });
    expect(reused.error).toMatchObject({ status: 422, code: "reauthentication_not_valid" });
  });
});

describe("config.toml's rate limits", () => {
  it("email_sent: the project's mails per hour, then 429 over_email_send_rate_limit", async () => {
    let refused: { status?: number; code?: string; message?: string } | null = null;
    for (let i = 0; i <= EMAIL_SENT && !refused; i++) {
      const email = uniqueEmail("email-limit");
      const { error } = await client().auth.signUp({ email, password: PASSWORD });
      refused = error ? { status: error.status, code: error.code, message: error.message } : null;
    }
    expect(refused).toEqual({ status: 429, code: "over_email_send_rate_limit", message: "email rate limit exceeded" });
  });

  it("token_refresh: 30 sign-in attempts at once from one address, then 429 even with the right password", async () => {
    const email = uniqueEmail("brute");
    const serviceRoleKey = /service_role key: (\S+)/.exec(stack.output())![1];
    const admin = createClient(stack.apiUrl, serviceRoleKey, { auth: { persistSession: false } }).auth.admin;
    expect((await admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    const statuses: number[] = [];
    for (let i = 0; i < 40 && !statuses.includes(429); i++) {
      const { error } = await client().auth.signInWithPassword({ email, password: `wrong-${i}` });
      statuses.push(error?.status ?? 200);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 400)).toBe(true);
    const right = await client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(right.error).toMatchObject({ status: 429, code: "over_request_rate_limit" });
  });

  it("token_verifications: guessing codes is cut off within 30 guesses", async () => {
    const email = uniqueEmail("guess");
    const statuses: number[] = [];
    for (let i = 0; i < 40 && !statuses.includes(429); i++) {
      const { error } = await client().auth.verifyOtp({ email, token: String(100000 + i), type: "recovery" });
      statuses.push(error?.status ?? 200);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.length).toBeLessThanOrEqual(31);
    expect(statuses.slice(0, -1).every((s) => s === 403)).toBe(true);
  });

  it("sign_in_sign_ups: recovery requests from one address, then 429", async () => {
    const codes: string[] = [];
    for (let i = 0; i < 40 && !codes.includes("over_request_rate_limit"); i++) {
      const { error } = await client().auth.resetPasswordForEmail(uniqueEmail("nobody"));
      codes.push(error?.code ?? "ok");
    }
    expect(codes.at(-1)).toBe("over_request_rate_limit");
    // A burst of 30 (one of which the PKCE recovery above took, maybe refilled since at 30 per 5 minutes), then none.
    expect(codes.length).toBeGreaterThanOrEqual(30);
    expect(codes.length).toBeLessThanOrEqual(31);
    expect(codes.slice(0, -1).every((c) => c === "ok")).toBe(true);
  });
});

// The local Auth calls an app makes beyond sign-in, through the real
// supabase-js client: updateUser (metadata, password, e-mail change through
// the mailbox), admin listUsers with GoTrue's pagination, sign-up and
// anonymous sign-in refused as this project configures them, and password
// reset end to end through the local mailbox (code and link).
import { createClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createUser, stack, uniqueEmail } from "../../support/api.ts";
import { supabaseClient } from "../../support/supabase.ts";

const PASSWORD = "first-password-123";

const mailbox = async (path: string) => (await fetch(`${stack().apiUrl}/_mail/api/v1${path}`)).json();

/** The newest mail to `address`, in full (Mailpit's search, then message). */
async function latestMailTo(
  address: string,
): Promise<{ Subject: string; Text: string; HTML: string; To: { Address: string }[] }> {
  const found = await mailbox(`/search?query=${encodeURIComponent(`to:${address}`)}`);
  expect(found.messages.length, `mail to ${address}`).toBeGreaterThan(0);
  return await mailbox(`/message/${found.messages[0].ID}`);
}

const codeIn = (text: string) => /enter the code: (\d{6})/.exec(text)![1];
const linkIn = (html: string) => /href="([^"]+)"/.exec(html)![1].replaceAll("&amp;", "&");

async function signedIn(email: string, password = PASSWORD) {
  const client = supabaseClient();
  const { error } = await client.auth.signInWithPassword({ email, password });
  expect(error).toBeNull();
  return client;
}

describe("updateUser", () => {
  let email: string;
  beforeAll(async () => {
    email = uniqueEmail("update");
    await createUser(email, PASSWORD, { plan: "free" });
  });

  it("merges user metadata", async () => {
    const client = await signedIn(email);
    const { data, error } = await client.auth.updateUser({ data: { nickname: "Ana" } });
    expect(error).toBeNull();
    expect(data.user!.user_metadata).toMatchObject({ plan: "free", nickname: "Ana" });
    const { data: again } = await client.auth.getUser();
    expect(again.user!.user_metadata).toMatchObject({ plan: "free", nickname: "Ana" });
  });

  it("changes the password, refuses the same one, and ends the user's other sessions", async () => {
    const client = await signedIn(email);
    const other = await signedIn(email);
    const same = await client.auth.updateUser({ password: PASSWORD });
    expect(same.error).toMatchObject({ status: 422, code: "same_password" });
    const weak = await client.auth.updateUser({ password: "123" });
    expect(weak.error).toMatchObject({ status: 422, code: "weak_password" });

    const { error } = await client.auth.updateUser({ password: "second-password-456" });
    expect(error).toBeNull();
    expect((await supabaseClient().auth.signInWithPassword({ email, password: PASSWORD })).error?.code)
      .toBe("invalid_credentials");
    await signedIn(email, "second-password-456");
    // The session that changed it goes on; the other one has ended.
    expect((await client.auth.getUser()).error).toBeNull();
    const { data: otherSession } = await other.auth.getSession();
    const stale = await api("/auth/v1/user", {
      token: otherSession.session!.access_token,
      headers: { apikey: stack().anonKey },
    });
    expect(stale.status).toBe(403);
    expect(stale.body.error_code ?? stale.body.code).toBe("session_not_found");
  });

  it("mails an e-mail change to both addresses and applies it once both links are followed", async () => {
    const before = uniqueEmail("change-from");
    const after = uniqueEmail("change-to");
    await createUser(before, PASSWORD);
    const client = await signedIn(before);
    const { data, error } = await client.auth.updateUser({ email: after });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: before, new_email: after });

    for (const address of [before, after]) {
      const mail = await latestMailTo(address);
      expect(mail.Subject).toBe("Confirm Email Change");
      const res = await fetch(linkIn(mail.HTML), { redirect: "manual" });
      expect(res.status).toBe(303);
    }
    await signedIn(after);
    expect((await supabaseClient().auth.signInWithPassword({ email: before, password: PASSWORD })).error?.code)
      .toBe("invalid_credentials");
  });
});

describe("admin listUsers", () => {
  it("pages as GoTrue does, newest first, with Link and X-Total-Count", async () => {
    for (let i = 0; i < 3; i++) await createUser(uniqueEmail("listed"), PASSWORD);
    const admin = createClient(stack().apiUrl, stack().serviceRoleKey, {
      auth: { persistSession: false, autoRefreshToken: false },
    });
    const raw = await fetch(`${stack().apiUrl}/auth/v1/admin/users?page=1&per_page=2`, {
      headers: { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` },
    });
    const total = Number(raw.headers.get("x-total-count"));
    expect(total).toBeGreaterThanOrEqual(3);
    const last = Math.ceil(total / 2);
    expect(raw.headers.get("link")).toBe(
      `</admin/users?page=2&per_page=2>; rel="next", </admin/users?page=${last}&per_page=2>; rel="last"`,
    );
    const body = await raw.json();
    expect(body.aud).toBe("authenticated");
    expect(body.users).toHaveLength(2);

    // auth-js reads page numbers from Link by their first digit only, so keep it to three pages here.
    const perPage = Math.ceil(total / 3);
    const pages = Math.ceil(total / perPage);
    const first = await admin.auth.admin.listUsers({ page: 1, perPage });
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({ total, nextPage: 2, lastPage: pages, aud: "authenticated" });
    expect(first.data.users).toHaveLength(perPage);
    const second = await admin.auth.admin.listUsers({ page: 2, perPage });
    const firstIds = first.data.users.map((u) => u.id);
    const secondIds = second.data.users.map((u) => u.id);
    expect(secondIds.length).toBeGreaterThan(0);
    expect(secondIds.some((id) => firstIds.includes(id))).toBe(false);
    const created = body.users.map((u: { created_at: string }) => Date.parse(u.created_at));
    expect(created[0]).toBeGreaterThanOrEqual(created[1]);

    const member = await api("/auth/v1/admin/users", {
      token: (await (await signedIn((await freshUser()).email)).auth.getSession()).data.session!.access_token,
      headers: { apikey: stack().anonKey },
    });
    expect(member.status).toBe(403);
  });
});

async function freshUser() {
  const email = uniqueEmail("fresh");
  await createUser(email, PASSWORD);
  return { email };
}

describe("sign-up and anonymous sign-in", () => {
  it("are refused as GoTrue refuses them when config.toml turns them off", async () => {
    const client = supabaseClient();
    const signUp = await client.auth.signUp({ email: uniqueEmail("signup"), password: PASSWORD });
    expect(signUp.error).toMatchObject({
      status: 422,
      code: "signup_disabled",
      message: "Signups not allowed for this instance",
    });
    const anonymous = await client.auth.signInAnonymously();
    expect(anonymous.error).toMatchObject({
      status: 422,
      code: "anonymous_provider_disabled",
      message: "Anonymous sign-ins are disabled",
    });
  });
});

describe("password reset through the local mailbox", () => {
  it("mails a code that verifyOtp exchanges for a session, in which updateUser sets the new password", async () => {
    const { email } = await freshUser();
    const client = supabaseClient();
    expect((await client.auth.resetPasswordForEmail(email)).error).toBeNull();
    const mail = await latestMailTo(email);
    expect(mail.Subject).toBe("Reset Your Password");
    expect(mail.To[0].Address).toBe(email);

    const wrong = await client.auth.verifyOtp({ email, token: "000000", type: "recovery" });
    expect(wrong.error).toMatchObject({ status: 403, code: "otp_expired" });

    const { data, error } = await client.auth.verifyOtp({ email, token: codeIn(mail.Text), type: "recovery" });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    expect((await client.auth.updateUser({ password: "reset-password-789" })).error).toBeNull();
    await signedIn(email, "reset-password-789");
    // The code was used up.
    const reused = await supabaseClient().auth.verifyOtp({ email, token: codeIn(mail.Text), type: "recovery" });
    expect(reused.error?.code).toBe("otp_expired");
  });

  it("mails a link that signs the user in on the way back to the app", async () => {
    const { email } = await freshUser();
    expect((await supabaseClient().auth.resetPasswordForEmail(email)).error).toBeNull();
    const link = linkIn((await latestMailTo(email)).HTML);
    expect(link.startsWith(`${stack().apiUrl}/auth/v1/verify?token=`)).toBe(true);
    const res = await fetch(link, { redirect: "manual" });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin + location.pathname).toBe("http://127.0.0.1:3000/");
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get("type")).toBe("recovery");
    const update = await api("/auth/v1/user", {
      method: "PUT",
      token: fragment.get("access_token")!,
      headers: { apikey: stack().anonKey },
      body: { password: "linked-password-321" },
    });
    expect(update.status).toBe(200);
    await signedIn(email, "linked-password-321");
    // Followed again, the link is spent: the app gets the error in the fragment.
    const again = new URL((await fetch(link, { redirect: "manual" })).headers.get("location")!);
    expect(new URLSearchParams(again.hash.slice(1)).get("error_code")).toBe("otp_expired");
  });

  it("answers an unknown address as a known one, and mails nothing", async () => {
    const nobody = uniqueEmail("nobody");
    expect((await supabaseClient().auth.resetPasswordForEmail(nobody)).error).toBeNull();
    const found = await mailbox(`/search?query=${encodeURIComponent(`to:${nobody}`)}`);
    expect(found.messages).toEqual([]);
  });
});

describe("health", () => {
  it("reports the GoTrue version the local Auth follows", async () => {
    const res = await api("/auth/v1/health");
    expect(res.body).toMatchObject({ name: "GoTrue", version: expect.stringMatching(/^v2\.\d+\.\d+$/) });
  });
});

// The local identity provider (local/auth) as supabase-js sees it: password
// sign-in, refresh-token rotation and reuse detection, getUser, signOut and
// the admin API, with the codes and shapes Supabase Auth answers with.
// The stack runs with a refresh-token reuse interval of 1 s.
import { AuthClient } from "@supabase/supabase-js";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, stack, uniqueEmail } from "../../support/api.ts";

const REUSE_INTERVAL_MS = 1_000;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * supabase-js's auth client (`supabase.auth` is this class), configured as
 * createClient() configures it, with no stored session and no timers, so each
 * call does exactly what the test asks.
 */
function client(key = stack().anonKey) {
  return new AuthClient({
    url: `${stack().apiUrl}/auth/v1`,
    headers: { apikey: key, Authorization: `Bearer ${key}` },
    persistSession: false,
    autoRefreshToken: false,
    detectSessionInUrl: false,
  });
}

/** A refresh through its own client: auth-js caches a failed refresh per client and token. */
function refresh(refreshToken: string) {
  return client().refreshSession({ refresh_token: refreshToken });
}

async function signIn(email: string, password: string) {
  const { data, error } = await client().signInWithPassword({ email, password });
  expect(error).toBeNull();
  return data.session!;
}

describe("local identity provider", () => {
  const email = uniqueEmail("auth");
  const password = "correct-horse-battery";
  let userId: string;

  beforeAll(async () => {
    const { data, error } = await client(stack().serviceRoleKey).admin.createUser({
      email,
      password,
      email_confirm: true,
      user_metadata: { name: "Auth Test" },
    });
    expect(error).toBeNull();
    userId = data.user!.id;
  });

  afterAll(async () => {
    await client(stack().serviceRoleKey).admin.deleteUser(userId);
  });

  describe("admin API", () => {
    it("creates users only for the service role key", async () => {
      const asAnon = await client().admin.createUser({ email: uniqueEmail("anon"), password });
      expect(asAnon.error).toMatchObject({ status: 403, code: "not_admin" });

      const created = await client(stack().serviceRoleKey).admin.getUserById(userId);
      expect(created.error).toBeNull();
      expect(created.data.user).toMatchObject({
        id: userId,
        email,
        aud: "authenticated",
        role: "authenticated",
        app_metadata: { provider: "email", providers: ["email"] },
        user_metadata: { name: "Auth Test", email_verified: true },
        is_anonymous: false,
      });
      expect(created.data.user!.identities).toMatchObject([{ provider: "email", id: userId, user_id: userId }]);
    });

    it("refuses an e-mail address that is taken", async () => {
      const { error } = await client(stack().serviceRoleKey).admin.createUser({ email, password });
      expect(error).toMatchObject({ status: 422, code: "email_exists" });
    });

    it("stores the password as a bcrypt hash of cost 10", async () => {
      const [row] = await db()`select encrypted_password from auth.users where id = ${userId}`;
      expect(row.encrypted_password).toMatch(/^\$2[ab]\$10\$.{53}$/);
    });
  });

  describe("password sign-in", () => {
    it("issues an ES256 session token with Supabase's claims", async () => {
      const session = await signIn(email, password);
      expect(session).toMatchObject({ token_type: "bearer", user: { id: userId, email } });
      expect(session.expires_in).toBeGreaterThanOrEqual(3599);
      expect(session.refresh_token.length).toBeGreaterThanOrEqual(12);

      const header = decodeProtectedHeader(session.access_token);
      expect(header).toMatchObject({ alg: "ES256", typ: "JWT" });
      const jwks = createRemoteJWKSet(new URL(`${stack().apiUrl}/auth/v1/.well-known/jwks.json`));
      const { payload } = await jwtVerify(session.access_token, jwks, { issuer: `${stack().apiUrl}/auth/v1` });
      expect(payload).toMatchObject({
        sub: userId,
        aud: "authenticated",
        email,
        phone: "",
        aal: "aal1",
        amr: [{ method: "password" }],
        session_id: expect.any(String),
        is_anonymous: false,
        app_metadata: { provider: "email", providers: ["email"] },
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
    });

    it("refuses a wrong password with invalid_credentials", async () => {
      const { data, error } = await client().signInWithPassword({ email, password: "wrong-password" });
      expect(data.session).toBeNull();
      expect(error).toMatchObject({ status: 400, code: "invalid_credentials", message: "Invalid login credentials" });
    });

    it("answers an unknown e-mail address exactly like a wrong password", async () => {
      const { error } = await client().signInWithPassword({ email: uniqueEmail("nobody"), password });
      expect(error).toMatchObject({ status: 400, code: "invalid_credentials", message: "Invalid login credentials" });
    });
  });

  describe("getUser", () => {
    it("answers the user of the access token", async () => {
      const session = await signIn(email, password);
      const { data, error } = await client().getUser(session.access_token);
      expect(error).toBeNull();
      expect(data.user).toMatchObject({ id: userId, email, last_sign_in_at: expect.any(String) });
    });

    it("refuses a token that is not signed by the provider", async () => {
      const session = await signIn(email, password);
      const [header, payload] = session.access_token.split(".");
      const { error } = await client().getUser(`${header}.${payload}.AAAA`);
      expect(error).toMatchObject({ status: 403, code: "bad_jwt" });
    });
  });

  describe("refresh tokens", () => {
    it("rotates: a refresh returns a new access token and a new refresh token", async () => {
      const session = await signIn(email, password);
      // `iat` counts whole seconds: a token issued in the same second could carry identical claims.
      await sleep(1_100);
      const { data, error } = await refresh(session.refresh_token);
      expect(error).toBeNull();
      expect(data.user!.id).toBe(userId);
      expect(data.session!.refresh_token).not.toBe(session.refresh_token);
      expect(data.session!.access_token).not.toBe(session.access_token);
      const [before, after] = [session, data.session!].map((s) => decodeJwt(s.access_token));
      expect(after.session_id).toBe(before.session_id);
      expect(after.iat).toBeGreaterThan(before.iat!);
    });

    it("gives the active token back when the previous one is replayed (a lost answer)", async () => {
      const session = await signIn(email, password);
      const first = await refresh(session.refresh_token);
      await sleep(REUSE_INTERVAL_MS + 500);
      const replay = await refresh(session.refresh_token);
      expect(replay.error).toBeNull();
      expect(replay.data.session!.refresh_token).toBe(first.data.session!.refresh_token);
    });

    it("ends the whole session when an older token is reused after the reuse interval", async () => {
      const session = await signIn(email, password);
      const second = await refresh(session.refresh_token);
      const third = await refresh(second.data.session!.refresh_token);
      expect(third.error).toBeNull();

      await sleep(REUSE_INTERVAL_MS + 500);
      const reuse = await refresh(session.refresh_token);
      expect(reuse.data.session).toBeNull();
      expect(reuse.error).toMatchObject({ status: 400, code: "refresh_token_already_used" });

      // The newest token of the family, and the session's access tokens, are dead too.
      const newest = await refresh(third.data.session!.refresh_token);
      expect(newest.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
      const user = await client().getUser(third.data.session!.access_token);
      expect(user.error?.name).toBe("AuthSessionMissingError");
    });

    it("refuses an unknown refresh token", async () => {
      const { error } = await refresh("thisisnotarefreshtoken");
      expect(error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    });
  });

  describe("signOut", () => {
    it("revokes the session's refresh token", async () => {
      const signedIn = client();
      const { data } = await signedIn.signInWithPassword({ email, password });
      const { error } = await signedIn.signOut({ scope: "local" });
      expect(error).toBeNull();
      const after = await refresh(data.session!.refresh_token);
      expect(after.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    });
  });

  describe("the API gateway and error shapes", () => {
    const tokenUrl = () => `${stack().apiUrl}/auth/v1/token?grant_type=password`;
    const wrongPassword = JSON.stringify({ email, password: "wrong-password" });

    it("requires a valid API key", async () => {
      const missing = await fetch(tokenUrl(), { method: "POST", body: wrongPassword });
      expect(missing.status).toBe(401);
      expect(await missing.json()).toMatchObject({ message: "No API key found in request" });

      const invalid = await fetch(tokenUrl(), { method: "POST", headers: { apikey: "nope" }, body: wrongPassword });
      expect(invalid.status).toBe(401);
      expect(await invalid.json()).toMatchObject({ message: "Invalid API key" });
    });

    it("answers GoTrue's error shape for the API version asked for", async () => {
      const initial = await fetch(tokenUrl(), {
        method: "POST",
        headers: { apikey: stack().anonKey },
        body: wrongPassword,
      });
      expect(await initial.json()).toEqual({
        code: 400,
        error_code: "invalid_credentials",
        msg: "Invalid login credentials",
      });

      const versioned = await fetch(tokenUrl(), {
        method: "POST",
        headers: { apikey: stack().anonKey, "X-Supabase-Api-Version": "2024-01-01" },
        body: wrongPassword,
      });
      expect(versioned.headers.get("x-supabase-api-version")).toBe("2024-01-01");
      expect(await versioned.json()).toEqual({ code: "invalid_credentials", message: "Invalid login credentials" });
    });
  });
});

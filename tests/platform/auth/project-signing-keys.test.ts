// A project's own asymmetric signing keys (`[auth] signing_keys_path` in config.toml, as `supabase gen signing-key`
// writes them; GoTrue's GOTRUE_JWT_KEYS overrides the file): Auth signs sessions with the first, publishes them in
// its JWKS, and every service accepts a token signed with one, as a hosted project does. A stack of its own, given
// the keys through GOTRUE_JWT_KEYS.
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OwnStack, startOwnStack } from "../../support/stack.ts";

let stack: OwnStack;
const kid = randomUUID();
let privateKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  privateKey = pair.privateKey as CryptoKey;
  const jwk = { ...(await exportJWK(pair.privateKey)), kid, alg: "ES256", use: "sig", key_ops: ["sign", "verify"] };
  stack = await startOwnStack({ env: { GOTRUE_JWT_KEYS: JSON.stringify([jwk]) } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the project's signing keys", () => {
  it("are published in Auth's JWKS (public parts only), and sign the sessions Auth issues", async () => {
    const jwks = await (await fetch(`${stack.apiUrl}/auth/v1/.well-known/jwks.json`)).json();
    const published = jwks.keys.find((key: { kid: string }) => key.kid === kid);
    expect(published).toMatchObject({ kid, alg: "ES256", kty: "EC" });
    expect(published.d).toBeUndefined();

    const res = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@demo.test", password: "demo-owner-pass" }),
    });
    expect(res.status).toBe(200);
    const { access_token } = await res.json();
    const header = JSON.parse(Buffer.from(access_token.split(".")[0], "base64url").toString());
    expect(header).toMatchObject({ alg: "ES256", kid });
  });

  it("a token signed with one elsewhere is accepted by Auth, PostgREST and the API", async () => {
    const signIn = await fetch(`${stack.apiUrl}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@demo.test", password: "demo-owner-pass" }),
    });
    const session = await signIn.json();
    const claims = JSON.parse(Buffer.from(session.access_token.split(".")[1], "base64url").toString());
    // The same claims, signed here with the project's key (as a server holding it would).
    const token = await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid, typ: "JWT" }).sign(privateKey);
    const headers = { apikey: stack.anonKey, authorization: `Bearer ${token}` };
    expect((await fetch(`${stack.apiUrl}/auth/v1/user`, { headers })).status).toBe(200);
    expect((await fetch(`${stack.apiUrl}/rest/v1/companies?select=id`, { headers })).status).toBe(200);
    expect((await fetch(`${stack.apiUrl}/api/v1/companies/me`, { headers })).status).toBe(200);
  });
});

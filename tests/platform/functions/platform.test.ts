// The local stack as a platform (issue 2): functions behind verify_jwt, the
// tokens the servers refuse, both signing methods accepted, and /health.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { decodeJwt, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, stack, type TestCompany } from "../../support/api.ts";
import { callFunctionProcess } from "../../support/function-process.ts";
import { supabaseClient } from "../../support/supabase.ts";

let company: TestCompany;
beforeAll(async () => {
  company = await createCompany("Platform");
});

const secret = () => new TextEncoder().encode(stack().jwtSecret);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The owner's real claims, re-issued by the test with an expiry and key of its choosing. */
function ownerClaims(): Record<string, unknown> {
  const { exp: _exp, iat: _iat, ...claims } = decodeJwt(company.owner.token);
  return claims;
}

describe("functions.invoke against a function deployed with verify_jwt = true", () => {
  it("runs it for a signed-in user", async () => {
    const supabase = supabaseClient();
    await supabase.auth.signInWithPassword({ email: company.owner.email, password: company.owner.password });
    // invoke() posts by default.
    const { data, error } = await supabase.functions.invoke("whoami");
    expect(error).toBeNull();
    expect(data).toMatchObject({ role: "company_owner", company_id: company.companyId, token_role: "company_owner" });
  });

  it("is refused with 401 before the function runs when the token is missing or invalid", async () => {
    const missing = await api("/functions/v1/whoami");
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ code: 401, message: "Missing authorization header" });
    const supabase = supabaseClient();
    const { error } = await supabase.functions.invoke("whoami", {
      method: "GET",
      headers: { Authorization: "Bearer not-a-jwt" },
    });
    expect(error?.context?.status).toBe(401);
    expect(await (error?.context as Response).json()).toEqual({ code: 401, message: "Invalid JWT" });
  });

  it("answers a function that does not exist with the edge runtime's 404", async () => {
    const res = await api("/functions/v1/no-such-function");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: "NOT_FOUND", message: "Requested function was not found" });
  });
});

describe("tokens the server refuses", () => {
  const protectedPaths = ["/api/v1/companies/me", "/functions/v1/whoami"];

  async function expectRefused(token: string) {
    for (const path of protectedPaths) {
      const res = await api(path, { token });
      expect(res.status, path).toBe(401);
    }
  }

  it("an expired access token", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT(ownerClaims())
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(secret());
    await expectRefused(token);
  });

  it("a token signed with another key, HS256 or ES256", async () => {
    const otherSecret = await new SignJWT(ownerClaims())
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("another-secret-of-at-least-thirty-two-characters"));
    await expectRefused(otherSecret);
    const { privateKey } = await generateKeyPair("ES256");
    const kid =
      (JSON.parse(Buffer.from(company.owner.token.split(".")[0], "base64url").toString()) as { kid: string }).kid;
    const otherKey = await new SignJWT(ownerClaims())
      .setProtectedHeader({ alg: "ES256", kid })
      .setExpirationTime("1h")
      .sign(privateKey);
    await expectRefused(otherKey);
  });

  it("a token with alg: none", async () => {
    const claims = { ...ownerClaims(), exp: Math.floor(Date.now() / 1000) + 3600 };
    await expectRefused(`${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.`);
  });

  it("an API key, which is not a user session", async () => {
    for (const key of [stack().anonKey, stack().serviceRoleKey]) {
      const res = await api("/api/v1/companies/me", { token: key });
      expect(res.status).toBe(401);
    }
  });

  it("a validly signed token without an expiry, for another audience, or naming a database role", async () => {
    const sign = (claims: Record<string, unknown>, expires = true) => {
      const jwt = new SignJWT(claims).setProtectedHeader({ alg: "HS256" });
      return (expires ? jwt.setExpirationTime("1h") : jwt).sign(secret());
    };
    const { exp: _exp, ...claims } = { ...ownerClaims(), exp: 0 };
    await expectRefused(await sign(claims, false));
    await expectRefused(await sign({ ...claims, aud: "something-else" }));
    for (const role of ["service_role", "anon", "postgres", "supabase_admin"]) {
      await expectRefused(await sign({ ...claims, role }));
    }
  });
});

describe("both signing methods are accepted", () => {
  it("ES256 user tokens from the identity provider (JWKS) and HS256 tokens under the legacy secret", async () => {
    expect(JSON.parse(Buffer.from(company.owner.token.split(".")[0], "base64url").toString()).alg).toBe("ES256");
    const es256 = await api("/api/v1/companies/me", { token: company.owner.token });
    expect(es256.status).toBe(200);

    const hs256 = await new SignJWT(ownerClaims()).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(
      secret(),
    );
    const legacy = await api("/api/v1/companies/me", { token: hs256 });
    expect(legacy.status).toBe(200);
    expect(legacy.body).toEqual(es256.body);
  });
});

describe("what browsers and sloppy clients send", () => {
  it("answers CORS preflights and says which origins may call", async () => {
    const preflight = await fetch(`${stack().apiUrl}/api/v1/deliveries`, {
      method: "OPTIONS",
      headers: { origin: "https://panel.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const auth = await fetch(`${stack().apiUrl}/auth/v1/token?grant_type=password`, {
      method: "OPTIONS",
      headers: { origin: "https://panel.example", "access-control-request-method": "POST" },
    });
    expect(auth.status).toBeLessThan(300);
    const res = await api("/api/v1/prices", {
      token: company.owner.token,
      headers: { origin: "https://panel.example" },
    });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("ignores a trailing slash", async () => {
    expect((await api("/api/v1/prices/", { token: company.owner.token })).status).toBe(200);
    expect((await api("/health/")).status).toBe(200);
  });

  it("refuses JSON nested too deeply, bodies over 1 MiB and bytes that are not UTF-8, never with a 500", async () => {
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    const nested = await api("/api/v1/companies/register", {
      rawBody: deep,
      headers: { "content-type": "application/json" },
    });
    expect(nested.status).toBe(400);
    const huge = await api("/api/v1/companies/register", {
      body: { company_name: "x".repeat(1_100_000), owner_name: "o", email: "a@b.example", password: "long-enough" },
    });
    expect(huge.status).toBe(413);
    const latin1 = await api("/api/v1/prices", {
      method: "PUT",
      token: company.owner.token,
      rawBody: new Uint8Array([0x7b, 0x22, 0xe3, 0x22, 0x3a, 0x31, 0x7d]),
      headers: { "content-type": "application/json" },
    });
    expect(latin1.status).toBe(400);
  });

  it("refuses a body that is not sent as application/json with 415, an ordinary error body", async () => {
    const body = JSON.stringify({ company_name: "Plain", owner_name: "P", email: "plain@test.example", password: "x" });
    // Text as text/plain; bytes with no content type at all (fetch names none for them).
    const sent = [{ rawBody: body, headers: { "content-type": "text/plain" } }, {
      rawBody: new TextEncoder().encode(body),
    }];
    for (const options of sent) {
      const res = await api("/api/v1/companies/register", options);
      expect(res, JSON.stringify(options.headers)).toMatchObject({
        status: 415,
        body: { detail: expect.stringContaining("Content-Type: application/json") },
      });
    }
  });

  it("takes money with floating point noise as the cents it means", async () => {
    const res = await api("/api/v1/prices", {
      method: "PUT",
      token: company.owner.token,
      body: { base_fee: 0.30000000000000004, per_km: 1.1500000000000001, minimum_fee: 8, driver_share: 0.8 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ base_fee: 0.3, per_km: 1.15 });
  });

  it("refuses a password over bcrypt's 72 bytes with a 400", async () => {
    const res = await api("/api/v1/companies/register", {
      body: { company_name: "Emoji", owner_name: "E", email: "emoji@test.example", password: "🚚".repeat(72) },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].loc).toEqual(["body", "password"]);
  });
});

describe("the database bootstrap", () => {
  it("applied twice changes nothing: no migration or seed runs again, and sql/local is idempotent", () => {
    const root = resolve(import.meta.dirname, "../../..");
    const script = `
      import { migrate } from "./local/database.ts";
      console.log(JSON.stringify(await migrate(${JSON.stringify(stack().dbUrl)}, { seed: true })));`;
    const result = spawnSync(resolve(root, "node_modules/.bin/deno"), ["eval", "--ext=ts", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.trim().split("\n").pop()!)).toEqual({ applied: [], seeded: false });
  });
});

describe("/health", () => {
  it("is 200 with the database up", async () => {
    const res = await api("/health");
    expect(res).toMatchObject({ status: 200, body: { status: "ok", database: "ok" } });
  });

  it("is 503 with database unreachable when the database is down", async () => {
    const jwks = await (await fetch(`${stack().apiUrl}/auth/v1/.well-known/jwks.json`)).json();
    // The api function in a process of its own whose database address answers nothing.
    const { answers, stderr } = callFunctionProcess("api", [
      { path: "/health" },
      { path: "/api/v1/prices", headers: { authorization: `Bearer ${company.owner.token}` } },
    ], {
      SUPABASE_DB_URL: "postgresql://postgres:postgres@127.0.0.1:1/postgres",
      GATEWAY_SANDBOX_URL: "http://127.0.0.1:1",
      GATEWAY_PRODUCTION_URL: "http://127.0.0.1:1",
      ROUTING_URL: "http://127.0.0.1:1",
      SUPABASE_JWKS: JSON.stringify(jwks),
    });
    const [health, call] = answers;
    expect({ status: health.status, body: health.body, api: { status: call.status, body: call.body } }, stderr).toEqual(
      {
        status: 503,
        body: { status: "degraded", database: "unreachable" },
        // An API call with the database down is 503 too, never a 500.
        api: { status: 503, body: { detail: "The database is unavailable; try again" } },
      },
    );
  });

  it("stops start-up with a message naming a missing setting", () => {
    const root = resolve(import.meta.dirname, "../../..");
    const result = spawnSync(resolve(root, "node_modules/.bin/deno"), [
      "eval",
      "--ext=ts",
      `await import("./functions/api/index.ts");`,
    ], {
      cwd: root,
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SUPABASE_URL: "not a url" },
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("SUPABASE_URL");
    expect(result.stderr).toContain("SECRETS_ENCRYPTION_KEY");
  });
});

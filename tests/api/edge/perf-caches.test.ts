// The caches that spare the proxy work (issue 12), and what they must never do:
// a verified token is remembered only until its `exp` (and a refused one never),
// at most a bounded number of them; and a company's gateway settings are read by
// every request (only their decryption is remembered, keyed by the ciphertext),
// so that a changed webhook secret applies at once on every instance.
// Also webhook signatures, and the claims statement whose values are inline
// literals rather than parameters (one round trip fewer per transaction).
import { describe, expect, it } from "vitest";
import { hmacHex, timingSafeEqual, verifySignature } from "../../../functions/_shared/crypto.ts";
import { claimsStatement, inlined, sqlLiteral } from "../../../functions/_shared/sql-text.ts";
import { cachingVerifier, type Claims, TokenError } from "../../../functions/_shared/jwt.ts";
import { api, configureGateway, createCompany, db, stack } from "../../support/api.ts";
import { companyWebhook, webhook } from "../../support/webhooks.ts";

describe("the token cache", () => {
  /** A stand-in for the signature check: accepts "good-*" tokens until their exp, on the test's clock. */
  function fakeVerifier(clock: { now: number }, exp: number | undefined) {
    const calls: string[] = [];
    const verify = (token: string): Promise<Claims> => {
      calls.push(token);
      if (!token.startsWith("good-")) return Promise.reject(new TokenError("invalid JWT: unable to verify signature"));
      if (exp !== undefined && clock.now >= exp * 1000) {
        return Promise.reject(new TokenError("invalid JWT: token is expired"));
      }
      return Promise.resolve({ sub: token, exp } as Claims);
    };
    return { calls, verify };
  }

  it("verifies a token once while it is valid, and again (refusing it) once its exp has passed", async () => {
    const clock = { now: 1_000_000_000_000 };
    const exp = clock.now / 1000 + 60;
    const { calls, verify } = fakeVerifier(clock, exp);
    const cached = cachingVerifier(verify, { now: () => clock.now });
    expect((await cached("good-a")).sub).toBe("good-a");
    clock.now += 59_999;
    expect((await cached("good-a")).sub).toBe("good-a");
    expect(calls).toEqual(["good-a"]);
    clock.now = exp * 1000; // the second the token expires
    await expect(cached("good-a")).rejects.toThrow("token is expired");
    expect(calls).toEqual(["good-a", "good-a"]);
  });

  it("never remembers a refusal, nor a token without exp", async () => {
    const clock = { now: 1_000_000_000_000 };
    const refusing = fakeVerifier(clock, clock.now / 1000 + 60);
    const cached = cachingVerifier(refusing.verify, { now: () => clock.now });
    await expect(cached("forged")).rejects.toThrow("unable to verify signature");
    await expect(cached("forged")).rejects.toThrow("unable to verify signature");
    expect(refusing.calls).toEqual(["forged", "forged"]);

    const noExp = fakeVerifier(clock, undefined);
    const cachedNoExp = cachingVerifier(noExp.verify, { now: () => clock.now });
    await cachedNoExp("good-b");
    await cachedNoExp("good-b");
    expect(noExp.calls).toEqual(["good-b", "good-b"]);
  });

  it("keys entries by the whole token and holds at most maxEntries", async () => {
    const clock = { now: 1_000_000_000_000 };
    const { calls, verify } = fakeVerifier(clock, clock.now / 1000 + 3600);
    const cached = cachingVerifier(verify, { now: () => clock.now, maxEntries: 3 });
    for (const t of ["good-1", "good-2", "good-3", "good-4"]) await cached(t);
    // One character more is another token.
    await cached("good-4x");
    calls.length = 0;
    await cached("good-4x");
    await cached("good-4");
    expect(calls).toEqual([]); // the newest are remembered
    await cached("good-1");
    expect(calls).toEqual(["good-1"]); // the oldest made room
  });
});

describe("the gateway settings cache", () => {
  /** An event the service does not handle: 200 once the signature is right, 401 otherwise; nothing else runs. */
  const ping = (companyId: string, secret: string) =>
    webhook(companyWebhook(companyId), { event: "PAYMENT_CREATED", payment: { id: "pay_x" } }, secret);

  it("applies a webhook secret changed behind the instance's back at once", async () => {
    const [x, y] = await Promise.all([createCompany("Cache X"), createCompany("Cache Y")]);
    const [{ webhookSecret: oldSecret }, { webhookSecret: newSecret }] = await Promise.all([
      configureGateway(x),
      configureGateway(y),
    ]);
    expect((await ping(x.companyId, oldSecret)).status).toBe(200); // its decryption now remembered
    // Another instance stores X's new secret (here: Y's ciphertext, the same key encrypts both).
    await db()`update private.gateway_configs
               set webhook_secret_ciphertext = (select webhook_secret_ciphertext from private.gateway_configs
                                                where company_id = ${y.companyId})
               where company_id = ${x.companyId}`;
    // The very next request: the old secret is refused, the new one accepted.
    expect((await ping(x.companyId, oldSecret)).status).toBe(401);
    expect((await ping(x.companyId, newSecret)).status).toBe(200);
    // And a company that configures its gateway stops accepting the platform secret at once.
    const z = await createCompany("Cache W");
    expect((await ping(z.companyId, stack().platformWebhookSecret)).status).toBe(200);
    const { webhookSecret } = await configureGateway(z);
    expect((await ping(z.companyId, stack().platformWebhookSecret)).status).toBe(401);
    expect((await ping(z.companyId, webhookSecret)).status).toBe(200);
  });

  it("applies a secret stored through the API at once on the instance that stored it", async () => {
    const x = await createCompany("Cache Z");
    const { webhookSecret: first } = await configureGateway(x);
    expect((await ping(x.companyId, first)).status).toBe(200);
    const { webhookSecret: second } = await configureGateway(x);
    expect((await ping(x.companyId, second)).status).toBe(200);
    expect((await ping(x.companyId, first)).status).toBe(401);
  });

  it("answers 404 for a company that does not exist", async () => {
    const res = await api(companyWebhook("00000000-0000-4000-8000-000000000000"), {
      method: "POST",
      rawBody: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(404);
  });
});

describe("webhook signatures", () => {
  it("are HMAC-SHA256 in lowercase hex (RFC 4231, case 2), each under its own secret", () => {
    const body = (text: string) => new TextEncoder().encode(text);
    const vector = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    expect(hmacHex("Jefe", body("what do ya want for nothing?"))).toBe(vector);
    const other = hmacHex("another secret", body("what do ya want for nothing?"));
    expect(other).toMatch(/^[0-9a-f]{64}$/);
    expect(other).not.toBe(vector);
    expect(hmacHex("Jefe", body("what do ya want for nothing?"))).toBe(vector);
    expect(verifySignature("Jefe", body("what do ya want for nothing?"), vector.toUpperCase())).toBe(true);
    expect(verifySignature("another secret", body("what do ya want for nothing?"), vector)).toBe(false);
    expect(verifySignature("Jefe", body("what do ya want for nothing!"), vector)).toBe(false);
  });
});

describe("the constant-time compare (the tree's one, also the local stand-ins')", () => {
  it("is true only for the same secret, whatever the lengths", () => {
    const key = "sb_secret_0123456789abcdef";
    expect(timingSafeEqual(key, `${key}`)).toBe(true);
    expect(timingSafeEqual("", "")).toBe(true);
    for (const other of ["sb_secret_0123456789abcdeF", key.slice(0, -1), `${key}0`, "", key.toUpperCase()]) {
      expect(timingSafeEqual(key, other), other).toBe(false);
      expect(timingSafeEqual(other, key), other).toBe(false);
    }
  });
});

describe("the claims statement (values inline, not parameters)", () => {
  const awkward = [
    "it's",
    "back\\slash and 'quote'",
    "\\' -- ; select 1; $$ $tag$ E'x'",
    "ünïcødé ✓ 𝄞",
    "line\nbreak\ttab",
  ];

  it("sets exactly the claims, the subject and the role, whatever the strings hold", async () => {
    for (const text of awkward) {
      const claims = {
        sub: "00000000-0000-4000-8000-000000000001",
        role: "authenticated",
        email: text,
        user_metadata: { name: text, nul: "a\u0000b" },
      };
      const sql = db();
      const [row] = await sql.begin(async (tx) => {
        await tx.unsafe(claimsStatement(claims, "authenticated", 2_000));
        return await tx<{ claims: string; sub: string; role: string; timeout: string }[]>`
          select current_setting('request.jwt.claims') as claims,
                 current_setting('request.jwt.claim.sub') as sub, current_user as role,
                 current_setting('statement_timeout') as timeout`;
      });
      expect(JSON.parse(row.claims)).toEqual(claims);
      expect(row.sub).toBe(claims.sub);
      expect(row.role).toBe("authenticated");
      expect(row.timeout).toBe("2s");
    }
  });

  it("reads back every string as itself, with standard_conforming_strings on or off", async () => {
    for (const setting of ["on", "off"]) {
      const [row] = await db().begin(async (tx) => {
        await tx.unsafe(`set local standard_conforming_strings = ${setting}`);
        return await tx.unsafe(`select array[${awkward.map(sqlLiteral).join(", ")}]::text[] as texts`);
      });
      expect(row.texts).toEqual(awkward);
    }
    expect(() => sqlLiteral("a\u0000b")).toThrow("NUL");
  });
});

describe("statements with their values inline", () => {
  it("mean what their parameters meant", async () => {
    const values = ["it's", "a\\b", "$2", "ünï ✓", 42, -0.5, 1e21, null, true, false] as const;
    const text = `select ${values.map((_, i) => `$${i + 1}`).join(", ")}`;
    const [inlineText, inlineArgs] = inlined([text, [...values]]);
    expect(inlineArgs).toEqual([]);
    const [asParameters] = await db().unsafe(text, [...values] as never[]).values();
    const [asLiterals] = await db().unsafe(inlineText).values();
    expect(asLiterals).toEqual(asParameters);
    // "$2" inside a value is not read again as a parameter.
    expect(asLiterals).toEqual(["it's", "a\\b", "$2", "ünï ✓", "42", "-0.5", "1e+21", null, true, false]);
  });

  it("keep their parameters when a value has no literal", () => {
    for (const value of ["a\u0000b", { a: 1 }, [1], new Date(0), Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(inlined(["select $1, $2", ["x", value]])).toEqual(["select $1, $2", ["x", value]]);
    }
  });
});

// The caches that spare the proxy work (issue 12), and what they must never do:
// a verified token is remembered only until its `exp` (and a refused one never),
// at most a bounded number of them.
import { describe, expect, it } from "vitest";
import { cachingVerifier, type Claims, TokenError } from "../functions/_shared/jwt.ts";

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

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// API keys (docs/integrations.md): made by owners and admins, shown once,
// listed without the key; a key acts for its company within its scopes (403
// outside them, and no key reaches money), is refused at once once revoked,
// and its company's rate limit (20/s, bursts of 40) is one bucket in Postgres
// shared by every instance of the API: a second instance, a Deno process of
// its own on the same database, drains the same bucket.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, deliveryBody } from "../../support/deliveries.ts";
import { functionProcessEnv } from "../../support/function-process.ts";
import { freePort } from "../../support/stack.ts";
import { waitFor } from "../../support/wait.ts";

const root = resolve(import.meta.dirname, "../../..");

async function createKey(company: TestCompany, scopes: string[], who = company.owner) {
  const res = await api("/api/v1/api-keys", { token: who.token, body: { name: `key ${scopes.join(" ")}`, scopes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; key: string; scopes: string[]; prefix: string };
}

/** A fresh bucket for the company: what earlier tests spent is forgotten. */
const refill = (company: TestCompany) =>
  db()`delete from private.api_rate_buckets where company_id = ${company.companyId}`;

/**
 * The fake clock of the bucket: `tokens` left, and no refill for the next 30 s (its stamp moved ahead), so that
 * what a test counts does not depend on how fast the machine answers.
 */
const frozenBucket = (company: TestCompany, tokens: number) =>
  db()`insert into private.api_rate_buckets (company_id, tokens, refreshed_at)
    values (${company.companyId}, ${tokens}, now() + interval '30 seconds')
    on conflict (company_id) do update set tokens = excluded.tokens, refreshed_at = excluded.refreshed_at`;

describe("API keys", () => {
  let company: TestCompany;
  let other: TestCompany;
  beforeAll(async () => {
    [company, other] = await Promise.all([createCompany("Keys Co"), createCompany("Other Keys Co")]);
  });

  it("are made by owners and admins, shown once, stored as a hash, listed without the key", async () => {
    const made = await createKey(company, ["deliveries:read", "deliveries:write"], company.admin);
    expect(made.key).toMatch(/^dp_live_[A-Za-z0-9_-]{43}$/);
    expect(made.prefix).toBe(made.key.slice(0, 12));
    const [stored] = await db()`select key_hash from public.api_keys where id = ${made.id}`;
    expect(stored.key_hash).not.toContain(made.key);
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await api("/api/v1/api-keys", { token: company.owner.token });
    expect(list.status).toBe(200);
    const listed = list.body.items.find((k: any) => k.id === made.id);
    expect(listed).toMatchObject({ scopes: ["deliveries:read", "deliveries:write"], last_used_at: null });
    expect(JSON.stringify(list.body)).not.toContain(made.key);
    // Another company never sees it; a driver may not list keys.
    const foreign = await api("/api/v1/api-keys", { token: other.owner.token });
    expect(foreign.body.items.map((k: any) => k.id)).not.toContain(made.id);
    expect((await api("/api/v1/api-keys", { token: company.driver.token })).status).toBe(403);
    expect((await api("/api/v1/api-keys", { token: company.legacyAdmin.token })).status).toBe(403);

    // Used once, its last use shows.
    expect((await api("/api/v1/deliveries", { token: made.key })).status).toBe(200);
    const again = await api("/api/v1/api-keys", { token: company.owner.token });
    expect(again.body.items.find((k: any) => k.id === made.id).last_used_at).not.toBeNull();
  });

  it("refuses an unknown scope or none with 400", async () => {
    for (const scopes of [[], ["wallets:read"]]) {
      const res = await api("/api/v1/api-keys", { token: company.owner.token, body: { name: "x", scopes } });
      expect(res.status).toBe(400);
    }
  });

  it("act for the company within their scopes: 403 outside them, and never money", async () => {
    await refill(company);
    const reader = await createKey(company, ["deliveries:read"]);
    const writer = await createKey(company, ["deliveries:write", "deliveries:read"]);
    const drivers = await createKey(company, ["drivers:read"]);

    const created = await api("/api/v1/deliveries", {
      token: writer.key,
      body: deliveryBody({ payment_method: "invoice", customer: undefined }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.company_id).toBe(company.companyId);
    expect((await api(`/api/v1/deliveries/${created.body.id}`, { token: reader.key })).body.id).toBe(created.body.id);
    // The key's company only: another company's delivery is 404.
    const foreign = await createInvoiceDelivery(other);
    expect((await api(`/api/v1/deliveries/${foreign.id}`, { token: reader.key })).status).toBe(404);

    // Outside the scopes, whatever the body: 403.
    const refused = await api("/api/v1/deliveries", { token: reader.key, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("deliveries:write");
    expect((await api("/api/v1/drivers", { token: reader.key })).status).toBe(403);
    expect((await api("/api/v1/drivers", { token: drivers.key })).status).toBe(200);
    expect((await api("/api/v1/drivers/locations", { token: drivers.key })).status).toBe(200);
    expect((await api("/api/v1/webhook-endpoints", { token: writer.key })).status).toBe(403);

    // No key reaches money, billing, the gateway or other keys, whatever its scopes.
    const everything = await createKey(company, [
      "deliveries:read",
      "deliveries:write",
      "drivers:read",
      "routes:write",
      "webhooks:manage",
    ]);
    for (
      const [method, path, body] of [
        ["GET", "/api/v1/wallets/me"],
        ["GET", "/api/v1/withdrawals"],
        ["POST", "/api/v1/withdrawals", { amount: 1, pix_key: "12345678909", pix_key_type: "cpf" }],
        ["POST", "/api/v1/companies/me/gateway-config", { api_key: "x", webhook_secret: "y".repeat(16) }],
        ["GET", "/api/v1/billing/subscription"],
        ["PUT", "/api/v1/prices", { base_fee: 1, per_km: 1, minimum_fee: 1, driver_share: 0.5 }],
        ["GET", "/api/v1/api-keys"],
        ["POST", "/api/v1/api-keys", { name: "more", scopes: ["deliveries:read"] }],
        ["POST", "/api/v1/drivers", { name: "D", email: "d@example.com", password: "long-enough-pass" }],
      ] as [string, string, unknown?][]
    ) {
      const res = await api(path, { method, token: everything.key, body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
  });

  it("answer 401 at once once revoked, and only the company may revoke them", async () => {
    await refill(company);
    const made = await createKey(company, ["deliveries:read"]);
    expect((await api("/api/v1/deliveries", { token: made.key })).status).toBe(200);
    expect((await api(`/api/v1/api-keys/${made.id}`, { method: "DELETE", token: other.owner.token })).status).toBe(404);
    expect((await api(`/api/v1/api-keys/${made.id}`, { method: "DELETE", token: company.driver.token })).status)
      .toBe(403);
    expect((await api(`/api/v1/api-keys/${made.id}`, { method: "DELETE", token: company.admin.token })).status)
      .toBe(204);
    const after = await api("/api/v1/deliveries", { token: made.key });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain("invalid_token");
    expect((await api("/api/v1/api-keys", { token: company.owner.token })).body.items.map((k: any) => k.id))
      .not.toContain(made.id);
    // A malformed or made-up key is 401 too.
    expect((await api("/api/v1/deliveries", { token: "dp_live_nope" })).status).toBe(401);
    expect((await api("/api/v1/deliveries", { token: `dp_live_${"A".repeat(43)}` })).status).toBe(401);
  });

  it("are at most 50 per company, also when many are created at once", async () => {
    const crowded = await createCompany("Crowded Keys Co");
    // 49 keys already: of 8 creations at once, exactly one finds room.
    await db()`insert into public.api_keys (company_id, name, scopes, key_hash, prefix)
      select ${crowded.companyId}, 'key ' || i, '{deliveries:read}', md5(i::text) || md5(${crowded.companyId} || i),
        'dp_live_' || i
      from generate_series(1, 49) i`;
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      api("/api/v1/api-keys", {
        token: crowded.owner.token,
        body: { name: `at once ${i}`, scopes: ["deliveries:read"] },
      })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const [{ count }] = await db()`select count(*)::int from public.api_keys
      where company_id = ${crowded.companyId} and revoked_at is null`;
    expect(count).toBe(50);
  });

  it("carry the RateLimit headers, and 429 with Retry-After past the burst", async () => {
    await refill(company);
    const made = await createKey(company, ["deliveries:read"]);
    const first = await api("/api/v1/deliveries?limit=1", { token: made.key });
    expect(first.headers.get("ratelimit-limit")).toBe("40");
    expect(Number(first.headers.get("ratelimit-remaining"))).toBe(39);
    expect(Number(first.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(1);
    // A 403 and a 404 carry them too: every answer to a key.
    const notFound = await api(`/api/v1/deliveries/${crypto.randomUUID()}`, { token: made.key });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("ratelimit-remaining")).not.toBeNull();

    await frozenBucket(company, 5);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => api("/api/v1/deliveries?limit=1", { token: made.key })),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBe(3);
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get("ratelimit-remaining")).toBe("0");
    // People's tokens are not limited by it.
    expect((await api("/api/v1/deliveries?limit=1", { token: company.owner.token })).status).toBe(200);
  });

  it("share one bucket per company over two instances of the API", async () => {
    await refill(company);
    const made = await createKey(company, ["deliveries:read"]);
    const port = await freePort();
    const script = `
      const { default: fn } = await import("./functions/api/index.ts");
      Deno.serve({ hostname: "127.0.0.1", port: ${port}, onListen: () => console.log("listening") }, fn.fetch);`;
    const second: ChildProcess = spawn(resolve(root, "node_modules/.bin/deno"), ["eval", "--ext=ts", script], {
      cwd: root,
      env: functionProcessEnv() as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      second.stdout!.on("data", (chunk) => (output += chunk));
      await waitFor("the second instance", () => output.includes("listening"), 30_000);
      const secondApi = (path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${made.key}` } });
      // Both warm (the first request of a process reads the role sets).
      expect((await secondApi("/api/v1/deliveries?limit=1")).status).toBe(200);

      // 10 requests left in the bucket, 8 sent to each instance at once: each alone stays within what is left,
      // together they pass it. Exactly 10 are answered.
      await frozenBucket(company, 10);
      const [viaStack, viaSecond] = await Promise.all([
        Promise.all(Array.from({ length: 8 }, () => api("/api/v1/deliveries?limit=1", { token: made.key }))),
        Promise.all(Array.from({ length: 8 }, () => secondApi("/api/v1/deliveries?limit=1"))),
      ]);
      const statuses = [...viaStack, ...viaSecond].map((a) => a.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(6);
      // Each instance counts down what the other left: one bucket, the company's.
      await frozenBucket(company, 20);
      expect((await secondApi("/api/v1/deliveries?limit=1")).headers.get("ratelimit-remaining")).toBe("19");
      expect((await api("/api/v1/deliveries?limit=1", { token: made.key })).headers.get("ratelimit-remaining"))
        .toBe("18");
      expect((await secondApi("/api/v1/deliveries?limit=1")).headers.get("ratelimit-remaining")).toBe("17");
    } finally {
      second.kill("SIGTERM");
    }
  });
});

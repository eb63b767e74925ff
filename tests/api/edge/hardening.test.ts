// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// What an attacker found (DESIGN.md §11.7): weak gateway secrets, unmetered address lookups (paid proxies), and
// imports that geocoded every row, and Idempotency-Keys of callers without a token shared by everyone.
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { cep, geocoding } from "../../support/fakes.ts";

let company: TestCompany;

beforeAll(async () => {
  company = await createCompany("Endurecida Ltda");
});

afterEach(async () => {
  await Promise.all([cep.reset(), geocoding.reset()]);
});

describe("a company's gateway webhook_secret", () => {
  it("has at least 16 characters: a shorter one is 400 naming the field, and nothing is stored", async () => {
    for (const secret of ["x", "fifteen-chars-x"]) {
      const res = await api("/api/v1/companies/me/gateway-config", {
        token: company.owner.token,
        body: { api_key: "$aact_hmlg_weak", webhook_secret: secret },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["body", "webhook_secret"] })]);
    }
    const stored = await db()`select 1 from private.gateway_configs where company_id = ${company.companyId}`;
    expect(stored).toHaveLength(0);
    const ok = await api("/api/v1/companies/me/gateway-config", {
      token: company.owner.token,
      body: { api_key: "$aact_hmlg_strong", webhook_secret: "sixteen-chars-xy" },
    });
    expect(ok.status).toBe(200);
  });
});

describe("address lookups (GET /postcodes/{cep}, /geocode)", () => {
  it("are limited per user: 60 a minute, CEPs and texts together, then 429 with Retry-After", async () => {
    await db()`delete from private.address_lookup_meters where user_id = ${company.admin.userId}`;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      statuses.push(
        (await api(`/api/v1/geocode?q=${encodeURIComponent(`Rua ${i}`)}`, { token: company.admin.token })).status,
      );
      statuses.push((await api("/api/v1/postcodes/01310-200", { token: company.admin.token })).status);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    const refused = await api("/api/v1/geocode?q=Avenida%20Paulista", { token: company.admin.token });
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await api("/api/v1/postcodes/01001-000", { token: company.admin.token })).status).toBe(429);
    // Another user of the same company has a count of their own.
    expect((await api("/api/v1/postcodes/01001-000", { token: company.owner.token })).status).toBe(200);
    // Once the window has passed (moved back rather than waited for), the user may look up again.
    await db()`update private.address_lookup_meters set window_started_at = now() - interval '61 seconds'
      where user_id = ${company.admin.userId}`;
    expect((await api("/api/v1/postcodes/01001-000", { token: company.admin.token })).status).toBe(200);
  });

  it("keep each answer a day by its normalized query: asked again, the service is not", async () => {
    const text = `Avenida Paulista, 1578 ${randomUUID().slice(0, 6)}`;
    const first = await api(`/api/v1/geocode?q=${encodeURIComponent(text)}`, { token: company.owner.token });
    expect(first.status).toBe(200);
    const again = await api(`/api/v1/geocode?q=${encodeURIComponent(`  ${text.toUpperCase()}  `)}`, {
      token: company.driver.token,
    });
    expect(again.body).toEqual(first.body);
    expect((await geocoding.state()).requests).toBe(1);

    await api("/api/v1/postcodes/04538-133", { token: company.owner.token });
    await api("/api/v1/postcodes/04538133", { token: company.driver.token });
    expect((await cep.state()).requests).toBe(1);

    // A day later the service is asked again.
    await db()`update private.address_lookups set fetched_at = now() - interval '1 day 1 minute'
      where kind = 'postcode' and query = '04538133'`;
    await api("/api/v1/postcodes/04538-133", { token: company.owner.token });
    expect((await cep.state()).requests).toBe(2);
  });

  it("an import geocodes each distinct address once", async () => {
    await db()`delete from private.address_lookups`;
    const rows = Array.from(
      { length: 20 },
      (_, i) =>
        [i % 2 ? "Praça da Sé" : "praça  da sé", "Avenida Paulista, 1000", "invoice", `ext-${randomUUID()}`]
          .map((cell) => `"${cell}"`).join(","),
    );
    const csv = ["origin_address,destination_address,payment_method,external_id", ...rows].join("\n");
    const res = await api("/api/v1/deliveries/import", {
      token: company.owner.token,
      rawBody: csv,
      headers: { "content-type": "text/csv" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ created: 20, errors: [] });
    expect((await geocoding.state()).requests).toBe(2);
  });
});

/** A JSON POST sent from `localAddress` (any 127.x.y.z), so that the stack sees it come from that client address. */
function postFrom(localAddress: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const url = new URL(path, stack().apiUrl);
  const payload = JSON.stringify(body);
  return new Promise<{ status: number; body: any; replayed: string | undefined }>((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: "POST",
      localAddress,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          body: text ? JSON.parse(text) : null,
          replayed: res.headers["idempotent-replayed"] as string | undefined,
        });
      });
    });
    req.on("error", reject);
    req.end(payload);
  });
}

describe("Idempotency-Key of a caller without a token (registration)", () => {
  it("is scoped per client address: another client neither gets the answer replayed nor learns the key was used", async () => {
    const key = `register-${randomUUID()}`;
    const body = {
      company_name: "Chave Ltda",
      owner_name: "Dona",
      email: `chave-${randomUUID().slice(0, 8)}@test.example`,
      password: "correct-horse-battery",
    };
    const first = await postFrom("127.0.0.21", "/api/v1/companies/register", body, { "Idempotency-Key": key });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // The same client again: its own answer, replayed.
    const again = await postFrom("127.0.0.21", "/api/v1/companies/register", body, { "Idempotency-Key": key });
    expect(again).toMatchObject({ status: 201, replayed: "true", body: first.body });
    // Another client, same key and body: not the first client's answer (its ids, its user) but a request of its own.
    const other = await postFrom("127.0.0.22", "/api/v1/companies/register", body, { "Idempotency-Key": key });
    expect(other.replayed).toBeUndefined();
    expect(other.body?.company_id).not.toBe(first.body.company_id);
    expect(other.status).toBeGreaterThanOrEqual(400);
    // Another client, same key, another body: not told (422) that the key was used.
    const fresh = { ...body, email: `chave-${randomUUID().slice(0, 8)}@test.example` };
    const third = await postFrom("127.0.0.23", "/api/v1/companies/register", fresh, { "Idempotency-Key": key });
    expect(third.status, JSON.stringify(third.body)).toBe(201);
  });
});

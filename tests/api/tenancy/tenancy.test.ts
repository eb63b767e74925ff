// Identity, tenancy and the company endpoints over HTTP (issue 3): the role ×
// endpoint matrix, foreign ids, registration, encrypted gateway settings,
// validation errors and bodies that must never cause a 500.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany, uniqueEmail } from "../../support/api.ts";
import { supabaseClient } from "../../support/supabase.ts";

type Role = "owner" | "admin" | "legacyAdmin" | "driver";
const ROLES: Role[] = ["owner", "admin", "legacyAdmin", "driver"];

let a: TestCompany;
let b: TestCompany;

beforeAll(async () => {
  [a, b] = await Promise.all([createCompany("Alpha"), createCompany("Beta")]);
});

interface Endpoint {
  name: string;
  allowed: Role[];
  request: () => { path: string; method: string; body?: unknown };
}

const ENDPOINTS: Endpoint[] = [
  { name: "GET /companies/me", allowed: ROLES, request: () => ({ path: "/api/v1/companies/me", method: "GET" }) },
  {
    name: "POST /companies/me/gateway-config",
    allowed: ["owner"],
    request: () => ({
      path: "/api/v1/companies/me/gateway-config",
      method: "POST",
      body: { api_key: "$aact_hmlg_matrix", webhook_secret: "matrix-secret-0123456789" },
    }),
  },
  {
    name: "GET /drivers",
    allowed: ["owner", "admin", "legacyAdmin"],
    request: () => ({ path: "/api/v1/drivers", method: "GET" }),
  },
  {
    name: "POST /drivers",
    allowed: ["owner", "admin"],
    request: () => ({
      path: "/api/v1/drivers",
      method: "POST",
      body: { name: "Matrix Driver", email: uniqueEmail("matrix"), password: "matrix-password" },
    }),
  },
  {
    name: "GET /drivers/{id}",
    allowed: ["owner", "admin", "legacyAdmin"],
    request: () => ({ path: `/api/v1/drivers/${a.driver2.driverId}`, method: "GET" }),
  },
  {
    name: "PATCH /drivers/{id}",
    allowed: ["owner", "admin"],
    request: () => ({
      path: `/api/v1/drivers/${a.driver2.driverId}`,
      method: "PATCH",
      body: { phone: "+55 11 91234-5678" },
    }),
  },
  { name: "GET /prices", allowed: ROLES, request: () => ({ path: "/api/v1/prices", method: "GET" }) },
  {
    name: "PUT /prices",
    allowed: ["owner", "admin", "legacyAdmin"],
    request: () => ({
      path: "/api/v1/prices",
      method: "PUT",
      body: { base_fee: 5, per_km: 1.5, minimum_fee: 8, driver_share: 0.8 },
    }),
  },
  {
    name: "GET /billing/subscription",
    allowed: ["owner"],
    request: () => ({ path: "/api/v1/billing/subscription", method: "GET" }),
  },
  {
    name: "PUT /billing/subscription",
    allowed: ["owner"],
    request: () => ({ path: "/api/v1/billing/subscription", method: "PUT", body: { plan: "free" } }),
  },
  {
    name: "GET /webhook-events",
    allowed: ["owner", "admin"],
    request: () => ({ path: "/api/v1/webhook-events", method: "GET" }),
  },
];

describe("role × endpoint matrix", () => {
  for (const endpoint of ENDPOINTS) {
    for (const role of ROLES) {
      const allowed = endpoint.allowed.includes(role);
      it(`${endpoint.name} as ${role}: ${allowed ? "2xx" : "403"}`, async () => {
        const { path, method, body } = endpoint.request();
        const res = await api(path, { method, body, token: a[role].token });
        if (allowed) expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(200);
        if (allowed) expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
        else expect(res, JSON.stringify(res.body)).toMatchObject({ status: 403, body: { detail: expect.any(String) } });
      });
    }
    it(`${endpoint.name} without a token: 401`, async () => {
      const { path, method, body } = endpoint.request();
      const res = await api(path, { method, body });
      expect(res.status).toBe(401);
      expect(res.body.detail).toEqual(expect.any(String));
    });
  }
});

describe("another company's resources", () => {
  it("GET and PATCH of a foreign driver are 404 for every role that may use them", async () => {
    for (const role of ["owner", "admin", "legacyAdmin"] as const) {
      const res = await api(`/api/v1/drivers/${a.driver.driverId}`, { token: b[role].token });
      expect(res.status, role).toBe(404);
    }
    const patch = await api(`/api/v1/drivers/${a.driver.driverId}`, {
      method: "PATCH",
      token: b.owner.token,
      body: { name: "Hijacked" },
    });
    expect(patch.status).toBe(404);
    const [row] = await db()`select name from public.drivers where id = ${a.driver.driverId}`;
    expect(row.name).not.toBe("Hijacked");
  });

  it("lists never show another company's rows", async () => {
    const res = await api("/api/v1/drivers?limit=100", { token: b.owner.token });
    const ids = res.body.items.map((d: { id: string }) => d.id);
    expect(ids).toContain(b.driver.driverId);
    expect(ids).not.toContain(a.driver.driverId);
  });

  it("an unknown id is 404 and a malformed id is 400", async () => {
    expect((await api(`/api/v1/drivers/${crypto.randomUUID()}`, { token: a.owner.token })).status).toBe(404);
    const bad = await api("/api/v1/drivers/not-a-uuid", { token: a.owner.token });
    expect(bad.status).toBe(400);
    expect(bad.body.detail[0]).toMatchObject({ loc: ["path", "id"], input: "not-a-uuid" });
  });
});

describe("registration", () => {
  it("registers, then the owner signs in with supabase-js and its token carries the hook's claims", async () => {
    const email = uniqueEmail("reg");
    const res = await api("/api/v1/companies/register", {
      body: { company_name: "Gamma", owner_name: "Gina", email, password: "gamma-password" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ company_id: expect.any(String), user_id: expect.any(String) });

    const supabase = supabaseClient();
    const { data, error } = await supabase.auth.signInWithPassword({ email, password: "gamma-password" });
    expect(error).toBeNull();
    const claims = JSON.parse(Buffer.from(data.session!.access_token.split(".")[1], "base64url").toString());
    expect(claims).toMatchObject({ role: "company_owner", company_id: res.body.company_id, sub: res.body.user_id });

    const me = await api("/api/v1/companies/me", { token: data.session!.access_token });
    expect(me.body).toMatchObject({ id: res.body.company_id, name: "Gamma", gateway: { configured: false } });
    const plan = await api("/api/v1/billing/subscription", { token: data.session!.access_token });
    expect(plan.body).toEqual({ plan: "free", status: "active", current_period_end: null });
  });

  it("answers 409 for an e-mail that is taken, and creates nothing", async () => {
    const before = await db()`select count(*)::int as n from public.companies`;
    const res = await api("/api/v1/companies/register", {
      body: { company_name: "Dup", owner_name: "Dup", email: a.owner.email, password: "dup-password" },
    });
    expect(res.status).toBe(409);
    const after = await db()`select count(*)::int as n from public.companies`;
    expect(after[0].n).toBe(before[0].n);
  });

  it("is all-or-nothing: when the company cannot be created, the login is removed again", async () => {
    const email = uniqueEmail("atomic");
    // Arrange a failure inside the database after the auth user exists.
    await db().unsafe(`
      create or replace function public.test_refuse_company() returns trigger language plpgsql as $$
      begin if new.name = 'Refused Co' then raise exception 'refused for the test'; end if; return new; end $$;
      create trigger test_refuse_company before insert on public.companies
        for each row execute function public.test_refuse_company();`);
    try {
      const res = await api("/api/v1/companies/register", {
        body: { company_name: "Refused Co", owner_name: "R", email, password: "refused-password" },
      });
      expect(res.status).toBe(500);
      const users = await db()`select id from auth.users where email = ${email}`;
      expect(users).toHaveLength(0);
    } finally {
      await db().unsafe(
        `drop trigger test_refuse_company on public.companies; drop function public.test_refuse_company();`,
      );
    }
  });
});

describe("gateway configuration", () => {
  it("is stored encrypted: the plaintext is in no table, no response and no log line", async () => {
    const company = await createCompany("Secretive");
    const apiKey = `$aact_hmlg_${crypto.randomUUID()}`;
    const webhookSecret = `plaintext-secret-${crypto.randomUUID()}`;
    const res = await api("/api/v1/companies/me/gateway-config", {
      token: company.owner.token,
      body: { api_key: apiKey, webhook_secret: webhookSecret },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ configured: true, environment: "sandbox" });
    expect(JSON.stringify(res.body)).not.toContain(webhookSecret);

    const me = await api("/api/v1/companies/me", { token: company.owner.token });
    expect(me.body.gateway).toEqual({ configured: true, environment: "sandbox" });
    expect(JSON.stringify(me.body)).not.toContain(apiKey);

    // Every row of every table, as text.
    const tables = await db()`
      select quote_ident(n.nspname) || '.' || quote_ident(c.relname) as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname in ('public', 'private', 'auth', 'realtime', 'supabase_migrations')`;
    for (const { name } of tables) {
      const hits = await db().unsafe(
        `select count(*)::int as n from ${name} t where t::text like '%' || $1 || '%' or t::text like '%' || $2 || '%'`,
        [apiKey, webhookSecret],
      );
      expect(hits[0].n, name).toBe(0);
    }
    const log = readFileSync(stack().logFile, "utf8");
    expect(log).not.toContain(apiKey);
    expect(log).not.toContain(webhookSecret);
  });

  it("detects a production key", async () => {
    const company = await createCompany("Prod");
    const res = await api("/api/v1/companies/me/gateway-config", {
      token: company.owner.token,
      body: { api_key: "$aact_prod_0123456789", webhook_secret: "prod-secret-0123456789" },
    });
    expect(res.body.environment).toBe("production");
  });
});

describe("drivers", () => {
  it("creates a driver who can sign in, and deactivation refuses it everywhere with 403", async () => {
    const company = await createCompany("Fleet");
    const email = uniqueEmail("fleet");
    const created = await api("/api/v1/drivers", {
      token: company.admin.token,
      body: { name: "Fleet Driver", email, password: "fleet-password", phone: "+55 11 99999-0000" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Fleet Driver", email, phone: "+55 11 99999-0000", active: true });

    const deactivated = await api(`/api/v1/drivers/${company.driver.driverId}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { active: false },
    });
    expect(deactivated.body.active).toBe(false);
    for (const path of ["/api/v1/prices", "/api/v1/companies/me"]) {
      expect((await api(path, { token: company.driver.token })).status, path).toBe(403);
    }
    await api(`/api/v1/drivers/${company.driver.driverId}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { active: true },
    });
    expect((await api("/api/v1/prices", { token: company.driver.token })).status).toBe(200);
  });

  it("paginates newest first with a stable cursor, also when drivers are added between pages", async () => {
    const company = await createCompany("Pages");
    const first = await api("/api/v1/drivers?limit=1", { token: company.owner.token });
    expect(first.body.items).toHaveLength(1);
    await api("/api/v1/drivers", {
      token: company.owner.token,
      body: { name: "Late", email: uniqueEmail("late"), password: "late-password" },
    });
    const second = await api(`/api/v1/drivers?limit=1&cursor=${first.body.next_cursor}`, {
      token: company.owner.token,
    });
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
    expect(second.body.next_cursor).toBeNull();
    expect((await api("/api/v1/drivers?cursor=garbage", { token: company.owner.token })).status).toBe(400);
  });

  it("answers 409 when the driver's e-mail is taken", async () => {
    const res = await api("/api/v1/drivers", {
      token: a.owner.token,
      body: { name: "Twin", email: a.driver.email, password: "twin-password" },
    });
    expect(res.status).toBe(409);
  });
});

describe("validation", () => {
  it("answers a malformed body with 400 and docs/spec.md §7 items", async () => {
    const res = await api("/api/v1/prices", {
      method: "PUT",
      token: a.owner.token,
      body: { base_fee: -1, per_km: "1.5", minimum_fee: 8, driver_share: 2 },
    });
    expect(res.status).toBe(400);
    for (const item of res.body.detail) {
      expect(Object.keys(item).sort()).toEqual(["input", "loc", "msg", "type"]);
    }
    expect(res.body.detail).toEqual(expect.arrayContaining([
      expect.objectContaining({ loc: ["body", "base_fee"], input: -1 }),
      expect.objectContaining({ loc: ["body", "per_km"], type: "type_error", input: "1.5" }),
      expect.objectContaining({ loc: ["body", "driver_share"], input: 2 }),
    ]));
  });

  it("reports missing fields as `missing`", async () => {
    const res = await api("/api/v1/companies/me/gateway-config", { token: a.owner.token, body: { api_key: "x" } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toEqual([{
      type: "missing",
      loc: ["body", "webhook_secret"],
      msg: "Field required",
      input: null,
    }]);
  });

  it("answers invalid JSON with 400", async () => {
    const res = await api("/api/v1/prices", {
      method: "PUT",
      token: a.owner.token,
      rawBody: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail[0].type).toBe("json_invalid");
  });

  it("never answers a random or malformed body with a 500", async () => {
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1e308,
      "",
      "x".repeat(10_000),
      "\u0000",
      "😀",
      [],
      [1, "a"],
      {},
      { a: { b: [null] } },
      "2026-01-01",
      "00000000-0000-0000-0000-000000000000",
    ];
    const targets = [
      {
        path: "/api/v1/companies/register",
        method: "POST",
        fields: ["company_name", "owner_name", "email", "password"],
      },
      { path: "/api/v1/companies/me/gateway-config", method: "POST", fields: ["api_key", "webhook_secret"] },
      { path: "/api/v1/drivers", method: "POST", fields: ["name", "email", "password", "phone"] },
      { path: `/api/v1/drivers/${a.driver2.driverId}`, method: "PATCH", fields: ["name", "phone", "active"] },
      { path: "/api/v1/prices", method: "PUT", fields: ["base_fee", "per_km", "minimum_fee", "driver_share"] },
      { path: "/api/v1/billing/subscription", method: "PUT", fields: ["plan"] },
    ];
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
    for (const target of targets) {
      for (let i = 0; i < 25; i++) {
        const body = random() < 0.15 ? pick(values) : Object.fromEntries(target.fields.map((f) => [f, pick(values)]));
        const res = await api(target.path, { method: target.method, token: a.owner.token, body });
        expect(res.status, `${target.method} ${target.path} ${JSON.stringify(body).slice(0, 200)}`).toBeLessThan(500);
      }
      for (const raw of ["", "{", "[]", "null", '"str"', '{"a":}']) {
        const res = await api(target.path, {
          method: target.method,
          token: a.owner.token,
          rawBody: raw,
          headers: { "content-type": "application/json" },
        });
        expect(res.status, `${target.path} ${raw}`).toBe(400);
      }
    }
  });
});

describe("direct database calls see what the proxy sees", () => {
  it("an .rpc()-style call as the token's role and claims returns the same rows", async () => {
    for (const role of ["owner", "legacyAdmin"] as const) {
      const viaProxy = await api("/api/v1/drivers?limit=100", { token: a[role].token });
      const claims = JSON.parse(Buffer.from(a[role].token.split(".")[1], "base64url").toString());
      const direct = await db().begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
        await tx.unsafe(`set local role ${claims.role}`);
        const [row] = await tx`select to_jsonb(public.list_drivers(100)) as result`;
        return row.result;
      });
      expect(direct, role).toEqual(viaProxy.body);
    }
  });
});

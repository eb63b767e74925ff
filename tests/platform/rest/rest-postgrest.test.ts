// supabase-js straight against the local PostgREST (/rest/v1): table reads
// with embedding, filters, order, pages and counts return exactly the rows
// row-level security gives each role (the same as GET /api/v1/deliveries);
// every read RPC the API uses answers the same through `.rpc()`, errors
// included; writes are refused as our grants refuse them; errors come in
// PostgREST's shape and statuses.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomInt } from "node:crypto";
import { beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { Database } from "../../../functions/_shared/database.types.ts";
import { api, configureGateway, createCompany, type Member, stack, type TestCompany } from "../../support/api.ts";
import { supabaseClient } from "../../support/supabase.ts";

/**
 * A supabase-js client acting as a signed-in member, as an app does after
 * sign-in. Untyped, so that the tests can also call what does not exist.
 */
function as(member: Member): SupabaseClient {
  return createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { headers: { Authorization: `Bearer ${member.token}` } },
  });
}

/** The same, typed as an app types it: by `supabase gen types` (functions/_shared/database.types.ts). */
const typed = (member: Member) => as(member) as unknown as SupabaseClient<Database>;

const rest = (path: string, init: RequestInit & { token?: string } = {}) =>
  fetch(`${stack().apiUrl}/rest/v1${path}`, {
    ...init,
    headers: {
      apikey: stack().anonKey,
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.headers as Record<string, string>),
    },
  });

const SE = { lat: -23.5505, lng: -46.6333 };
const PAULISTA = { lat: -23.5614, lng: -46.6559 };

async function invoice(company: TestCompany, extra: Record<string, unknown> = {}) {
  const res = await api("/api/v1/deliveries", {
    token: company.owner.token,
    body: {
      origin_address: "Praça da Sé, São Paulo",
      origin: SE,
      destination_address: "Av. Paulista, 1000",
      destination: PAULISTA,
      recipient_name: "Ana",
      payment_method: "invoice",
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

/** Timestamps and numbers compared by value: the API and PostgREST may spell them differently. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  }
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(value)) return Date.parse(value);
  if (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

let c: TestCompany;
let other: TestCompany;
let open: { id: string };
let mine: { id: string };
let theirs: { id: string };
let foreign: { id: string };

beforeAll(async () => {
  [c, other] = await Promise.all([createCompany("Rest C"), createCompany("Rest Other")]);
  await Promise.all([configureGateway(c), configureGateway(other)]);
  open = await invoice(c, { notes: "first" });
  mine = await invoice(c, { driver_id: c.driver.driverId, notes: "second" });
  theirs = await invoice(c, { driver_id: c.driver2.driverId });
  foreign = await invoice(other);
});

const apiIds = async (member: Member) =>
  ((await api("/api/v1/deliveries?limit=100", { token: member.token })).body.items as { id: string }[]).map((d) =>
    d.id
  );

describe("from('deliveries') under row-level security", () => {
  it("gives every role exactly the rows GET /api/v1/deliveries gives it, with the driver embedded and counted", async () => {
    const members: [string, Member][] = [
      ["owner", c.owner],
      ["admin", c.admin],
      ["legacy admin", c.legacyAdmin],
      ["driver", c.driver],
      ["driver2", c.driver2],
      ["other owner", other.owner],
      ["other driver", other.driver],
    ];
    for (const [label, member] of members) {
      const { data, error, count, status } = await as(member)
        .from("deliveries")
        .select("*, driver:drivers(name)", { count: "exact" })
        .order("created_at", { ascending: false })
        .order("id", { ascending: false });
      expect(error, label).toBeNull();
      expect(status, label).toBe(200);
      const ids = data!.map((d) => d.id);
      expect(ids, label).toEqual(await apiIds(member));
      expect(count, label).toBe(ids.length);
    }
    const { data: ownerRows } = await as(c.owner).from("deliveries").select("id, driver:drivers(name)").eq(
      "id",
      mine.id,
    );
    expect(ownerRows).toEqual([{ id: mine.id, driver: { name: "Driver driver" } }]);
    const { data: openRows } = await as(c.owner).from("deliveries").select("id, driver:drivers(name)").eq(
      "id",
      open.id,
    );
    expect(openRows).toEqual([{ id: open.id, driver: null }]);
    // Another company's rows stay hidden even when asked for by id.
    const { data: hidden } = await as(c.owner).from("deliveries").select("id").eq("id", foreign.id);
    expect(hidden).toEqual([]);
  });

  it("shows anon nothing: the table is not granted to it", async () => {
    const { data, error, status } = await supabaseClient().from("deliveries").select("id");
    expect(data).toBeNull();
    expect(status).toBe(401);
    expect(error).toMatchObject({ code: "42501", message: "permission denied for table deliveries" });
  });
});

describe("filters, order, pages and counts", () => {
  const owner = () => as(c.owner).from("deliveries");

  it("applies eq, neq, in, is, not, or, like, ilike, gt/gte/lt/lte as PostgREST does", async () => {
    const ids = (rows: { id: string }[] | null) => (rows ?? []).map((r) => r.id).sort();
    const all = [open.id, mine.id, theirs.id].sort();
    expect(ids((await owner().select("id").eq("driver_id", c.driver.driverId)).data)).toEqual([mine.id]);
    expect(ids((await owner().select("id").neq("driver_id", c.driver.driverId)).data)).toEqual([theirs.id]);
    expect(ids((await owner().select("id").in("id", [open.id, theirs.id, foreign.id])).data))
      .toEqual([open.id, theirs.id].sort());
    expect(ids((await owner().select("id").is("driver_id", null)).data)).toEqual([open.id]);
    expect(ids((await owner().select("id").not("driver_id", "is", null)).data)).toEqual([mine.id, theirs.id].sort());
    expect(ids((await owner().select("id").or(`id.eq.${open.id},driver_id.eq.${c.driver2.driverId}`)).data))
      .toEqual([open.id, theirs.id].sort());
    expect(ids((await owner().select("id").or(`driver_id.is.null,and(id.eq.${theirs.id},driver_id.not.is.null)`)).data))
      .toEqual([open.id, theirs.id].sort());
    expect(ids((await owner().select("id").like("notes", "fir*")).data)).toEqual([open.id]);
    expect(ids((await owner().select("id").ilike("notes", "%SECOND%")).data)).toEqual([mine.id]);
    const { data: first } = await owner().select("id, created_at").eq("id", open.id).single();
    expect(ids((await owner().select("id").gte("created_at", first!.created_at)).data)).toEqual(all);
    expect(ids((await owner().select("id").gt("created_at", first!.created_at)).data))
      .toEqual([mine.id, theirs.id].sort());
    expect(ids((await owner().select("id").lte("created_at", first!.created_at)).data)).toEqual([open.id]);
    expect(ids((await owner().select("id").lt("created_at", first!.created_at)).data)).toEqual([]);
  });

  it("orders with nulls first or last, pages with range, and counts the whole set", async () => {
    const nullsFirst = await owner().select("id, driver_id").order("driver_id", { ascending: true, nullsFirst: true });
    expect(nullsFirst.data![0].id).toBe(open.id);
    const nullsLast = await owner().select("id, driver_id").order("driver_id", { ascending: true, nullsFirst: false });
    expect(nullsLast.data![2].id).toBe(open.id);

    const page = await owner().select("id", { count: "exact" }).order("created_at").range(1, 1);
    expect(page.status).toBe(206);
    expect(page.count).toBe(3);
    expect(page.data!.map((r) => r.id)).toEqual([mine.id]);

    const res = await rest("/deliveries?select=id&order=created_at", {
      token: c.owner.token,
      headers: { range: "0-1", prefer: "count=exact" },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe("0-1/3");
    expect((await res.json()).length).toBe(2);

    const beyond = await rest("/deliveries?select=id&offset=10", {
      token: c.owner.token,
      headers: { prefer: "count=exact" },
    });
    expect(beyond.status).toBe(416);
    expect(await beyond.json()).toMatchObject({ code: "PGRST103", message: "Requested range not satisfiable" });

    const head = await owner().select("*", { count: "exact", head: true });
    expect(head).toMatchObject({ status: 200, count: 3, data: null, error: null });

    const limited = await owner().select("id").order("created_at").limit(1);
    expect(limited.data!.map((r) => r.id)).toEqual([open.id]);
  });

  it("embeds in both directions, with aliases and filters on the embedded rows", async () => {
    const { data: drivers, error } = await as(c.owner)
      .from("drivers")
      .select("name, trips:deliveries(id)")
      .eq("id", c.driver.driverId);
    expect(error).toBeNull();
    expect(drivers).toEqual([{ name: "Driver driver", trips: [{ id: mine.id }] }]);

    const inner = await owner().select("id, drivers!inner(name)").eq("drivers.name", "Driver driver2");
    expect(inner.data).toEqual([{ id: theirs.id, drivers: { name: "Driver driver2" } }]);

    const { data: company } = await as(c.owner).from("memberships").select("role, companies(name)").eq(
      "user_id",
      c.owner.userId,
    );
    expect(company).toEqual([{ role: "company_owner", companies: { name: "Rest C" } }]);

    const none = await owner().select("id, nothing(id)");
    expect(none.status).toBe(400);
    expect(none.error).toMatchObject({
      code: "PGRST200",
      message: "Could not find a relationship between 'deliveries' and 'nothing' in the schema cache",
    });
  });

  it("answers a single object, and PGRST116 when there is not exactly one", async () => {
    const one = await owner().select("id").eq("id", open.id).single();
    expect(one.data).toEqual({ id: open.id });
    const many = await owner().select("id").single();
    expect(many.status).toBe(406);
    expect(many.error).toMatchObject({
      code: "PGRST116",
      message: "Cannot coerce the result to a single JSON object",
      details: "The result contains 3 rows",
    });
    const none = await owner().select("id").eq("id", foreign.id).maybeSingle();
    expect(none).toMatchObject({ data: null, error: null });
  });

  it("refuses what PostgREST refuses: bad syntax, unknown columns and tables, unexposed schemas", async () => {
    const bad = await rest("/deliveries?id=noop.1", { token: c.owner.token });
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe("PGRST100");
    const column = await owner().select("nope");
    expect(column.status).toBe(400);
    expect(column.error).toMatchObject({ code: "42703", message: "column deliveries.nope does not exist" });
    const table = await as(c.owner).from("deliverys").select();
    expect(table.status).toBe(404);
    expect(table.error).toMatchObject({
      code: "PGRST205",
      message: "Could not find the table 'public.deliverys' in the schema cache",
      hint: "Perhaps you meant the table 'public.deliveries'",
    });
    const schema = await as(c.owner).schema("private").from("deliveries").select();
    expect(schema.status).toBe(406);
    expect(schema.error).toMatchObject({ code: "PGRST106", message: "Invalid schema: private" });
    const badToken = await rest("/deliveries", { token: "not.a.jwt" });
    expect(badToken.status).toBe(401);
    expect((await badToken.json()).code).toBe("PGRST301");
    const noKey = await fetch(`${stack().apiUrl}/rest/v1/deliveries`);
    expect(noKey.status).toBe(401);
  });
});

describe("writes", () => {
  it("are refused as Postgres refuses them to each role: 401 for anon, 403 for a member", async () => {
    const member = await as(c.owner).from("deliveries").update({ notes: "changed" }).eq("id", open.id);
    expect(member.status).toBe(403);
    expect(member.error).toMatchObject({ code: "42501", message: "permission denied for table deliveries" });
    const insert = await as(c.owner).from("drivers").insert({ name: "x", company_id: c.companyId });
    expect(insert.status).toBe(403);
    expect(insert.error?.code).toBe("42501");
    const remove = await as(c.driver).from("deliveries").delete().eq("id", mine.id);
    expect(remove.status).toBe(403);
    const anon = await supabaseClient().from("deliveries").delete().eq("id", open.id);
    expect(anon.status).toBe(401);
    const { data } = await as(c.owner).from("deliveries").select("notes").eq("id", open.id).single();
    expect(data).toEqual({ notes: "first" });
  });
});

describe(".rpc() against the API's functions", () => {
  it("answers the read functions as /api/v1 answers them", async () => {
    const cases: [Member, string, Record<string, unknown>, string][] = [
      [c.owner, "get_delivery", { delivery_id: mine.id }, `/api/v1/deliveries/${mine.id}`],
      [c.driver, "get_delivery", { delivery_id: mine.id }, `/api/v1/deliveries/${mine.id}`],
      [c.owner, "list_deliveries", { page_limit: 2 }, "/api/v1/deliveries?limit=2"],
      [c.owner, "list_drivers", { page_limit: 20 }, "/api/v1/drivers"],
      [c.owner, "get_driver", { driver_id: c.driver.driverId }, `/api/v1/drivers/${c.driver.driverId}`],
      [c.owner, "get_prices", {}, "/api/v1/prices"],
      [c.owner, "get_my_company", {}, "/api/v1/companies/me"],
      [c.owner, "list_driver_locations", {}, "/api/v1/drivers/locations"],
      [c.driver, "get_wallet", {}, "/api/v1/wallets/me"],
      [c.driver, "list_wallet_transactions", { page_limit: 20 }, "/api/v1/wallets/me/transactions"],
      [c.owner, "list_withdrawals", { page_limit: 20 }, "/api/v1/withdrawals"],
      [c.owner, "get_subscription", {}, "/api/v1/billing/subscription"],
      [c.owner, "list_webhook_events", { page_limit: 20 }, "/api/v1/webhook-events"],
      [c.owner, "get_delivery_trail", { delivery_id: mine.id }, `/api/v1/deliveries/${mine.id}/trail`],
    ];
    for (const [member, fn, args, path] of cases) {
      const viaApi = await api(path, { token: member.token });
      const post = await as(member).rpc(fn, args);
      const get = await as(member).rpc(fn, args, { get: true });
      expect(viaApi.status, path).toBe(200);
      expect(post.error, fn).toBeNull();
      expect(get.error, fn).toBeNull();
      expect(normalize(post.data), fn).toEqual(normalize(viaApi.body));
      expect(normalize(get.data), fn).toEqual(normalize(viaApi.body));
    }
  });

  it("returns typed rows, which the generated types describe field by field", async () => {
    type Composite = Database["public"]["CompositeTypes"];
    const page = await typed(c.owner).rpc("list_deliveries", { page_limit: 2 });
    expect(page.error).toBeNull();
    // Type-checked by `npm run check`: with jsonb results every one of these was `Json`.
    expectTypeOf(page.data!.items).toEqualTypeOf<Composite["delivery"][] | null>();
    const first = page.data!.items![0];
    expectTypeOf(first.origin).toEqualTypeOf<Composite["geo_point"] | null>();
    expect(first.origin!.lat).toBeTypeOf("number");
    expect(first.status).toBeTypeOf("string");
    expect(typeof page.data!.next_cursor).toBe("string");

    const wallet = await typed(c.driver).rpc("get_wallet");
    expectTypeOf(wallet.data!).toEqualTypeOf<Composite["wallet"]>();
    expect(wallet.data).toMatchObject({ driver_id: c.driver.driverId, currency: "BRL" });

    const withdrawals = await typed(c.owner).rpc("list_withdrawals", { page_limit: 1 });
    expectTypeOf(withdrawals.data!.items).toEqualTypeOf<Composite["withdrawal"][] | null>();
    expect(Array.isArray(withdrawals.data!.items)).toBe(true);
  });

  it("answers the functions' errors with their status and message, in PostgREST's body", async () => {
    const viaApi = await api(`/api/v1/deliveries/${foreign.id}`, { token: c.owner.token });
    expect(viaApi.status).toBe(404);
    const res = await rest("/rpc/get_delivery", {
      method: "POST",
      token: c.owner.token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ delivery_id: foreign.id }),
    });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({ code: "PT404", details: null, hint: null, message: "delivery not found" });
    expect(viaApi.body.detail).toBe(body.message);

    const forbidden = await as(c.driver).rpc("list_drivers", {});
    expect(forbidden.status).toBe(403);
    expect(forbidden.error?.code).toBe("PT403");
    expect(forbidden.error?.message).toBe((await api("/api/v1/drivers", { token: c.driver.token })).body.detail);

    const move = await as(c.driver2).rpc("accept_delivery", { delivery_id: mine.id });
    const viaApiMove = await api(`/api/v1/deliveries/${mine.id}/accept`, { method: "POST", token: c.driver2.token });
    expect(move.status).toBe(viaApiMove.status);
    expect(move.error?.message).toBe(viaApiMove.body.detail);

    const unknown = await as(c.owner).rpc("get_deliveri", { delivery_id: mine.id });
    expect(unknown.status).toBe(404);
    expect(unknown.error).toMatchObject({
      code: "PGRST202",
      message: "Could not find the function public.get_deliveri(delivery_id) in the schema cache",
    });
    const anon = await supabaseClient().rpc("get_delivery", { delivery_id: mine.id });
    expect(anon.status).toBe(401);
    expect(anon.error?.code).toBe("42501");
  });

  it("runs a write function as the caller, and GET on it read-only", async () => {
    const viaGet = await as(c.owner).rpc("cancel_delivery", { delivery_id: theirs.id }, { get: true });
    expect(viaGet.status).toBe(405);
    expect(viaGet.error?.code).toBe("25006");
    const { data, error } = await as(c.owner).rpc("cancel_delivery", { delivery_id: theirs.id, reason: "rest test" });
    expect(error).toBeNull();
    expect(normalize(data)).toEqual(
      normalize((await api(`/api/v1/deliveries/${theirs.id}`, { token: c.owner.token })).body),
    );
    expect((data as { status: string }).status).toBe("cancelled");
    const quote = await as(c.owner).rpc("quote_route", { distance_m: randomInt(1000, 5000), duration_s: 600 });
    expect(quote.error).toBeNull();
    expect(quote.data).toHaveProperty("price");
  });

  it("runs the API's write functions as the caller, with the results the API then reads back", async () => {
    const prices = await as(c.owner).rpc("set_prices", { base_fee: 6, per_km: 2, minimum_fee: 9, driver_share: 0.75 });
    expect(prices.error).toBeNull();
    expect(normalize(prices.data)).toEqual(normalize((await api("/api/v1/prices", { token: c.owner.token })).body));

    const renamed = await as(c.admin).rpc("update_driver", { driver_id: c.driver2.driverId, name: "Renamed" });
    expect(renamed.error).toBeNull();
    expect((renamed.data as { name: string }).name).toBe("Renamed");
    expect(normalize(renamed.data)).toEqual(
      normalize((await api(`/api/v1/drivers/${c.driver2.driverId}`, { token: c.owner.token })).body),
    );

    const fresh = await invoice(c);
    const assigned = await as(c.owner).rpc("assign_delivery", { delivery_id: fresh.id, driver_id: c.driver.driverId });
    expect(assigned.error).toBeNull();
    expect(normalize(assigned.data)).toEqual(
      normalize((await api(`/api/v1/deliveries/${fresh.id}`, { token: c.owner.token })).body),
    );

    const company = await as(c.owner).rpc("authorize_new_delivery", {});
    expect(company).toMatchObject({ data: c.companyId, error: null });

    // A function granted to the service role only is refused to a member by Postgres: 42501, 403.
    const register = await as(c.owner).rpc("register_company", {
      owner_user_id: c.owner.userId,
      company_name: "x",
      owner_name: "y",
    });
    expect(register.status).toBe(403);
    expect(register.error).toMatchObject({ code: "42501", message: "permission denied for function register_company" });
  });
});

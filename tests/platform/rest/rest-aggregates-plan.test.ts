// PostgREST's two opt-in features, as the local PostgREST honours their
// in-database settings: aggregate functions in `select` (avg(), count(),
// max(), min(), sum(); grouped by the other selected fields, cast before and
// after, inside embedded resources and hoisted out of to-one spreads), under
// `pgrst.db_aggregates_enabled`; and the EXPLAIN plan of a request
// (`Accept: application/vnd.pgrst.plan`, supabase-js's `.explain()`), under
// `pgrst.db_plan_enabled`. Both are off unless set, as on Supabase, and then
// refused with PostgREST's own errors (PGRST123; 406 PGRST107). The project
// leaves both off (docs/architecture.md, "The REST API's opt-in features").
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, stack } from "../../support/api.ts";
import { configurePostgrest as configure } from "../../support/postgrest.ts";

const FIXTURE = `
  create schema rest_agg;
  grant usage on schema rest_agg to anon, authenticated, service_role;
  create table rest_agg.customers (id int primary key, name text not null, city text not null);
  create table rest_agg.orders (
    id int primary key,
    customer_id int not null references rest_agg.customers (id),
    amount numeric(10, 2) not null,
    status text not null,
    meta jsonb not null default '{}'
  );
  insert into rest_agg.customers values (1, 'Ana', 'Recife'), (2, 'Bia', 'Recife'), (3, 'Caio', 'Olinda');
  insert into rest_agg.orders values
    (1, 1, 10.00, 'done', '{"channel": "web"}'), (2, 1, 20.00, 'done', '{"channel": "app"}'),
    (3, 2, 5.50, 'open', '{"channel": "web"}'), (4, 3, 100.00, 'done', '{"channel": "web"}'),
    (5, 3, 1.00, 'open', '{"channel": "app"}');
  create function rest_agg.big_orders(minimum numeric) returns setof rest_agg.orders language sql stable
    as $$ select * from rest_agg.orders where amount >= minimum $$;
  grant select, insert, update, delete on all tables in schema rest_agg to service_role;
  grant execute on all functions in schema rest_agg to service_role;
`;

const client = () =>
  createClient(stack().apiUrl, stack().serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    db: { schema: "rest_agg" },
  });

const rest = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  fetch(`${stack().apiUrl}/rest/v1${path}`, {
    ...init,
    headers: {
      apikey: stack().serviceRoleKey,
      "accept-profile": "rest_agg",
      "content-profile": "rest_agg",
      ...headers,
    },
  });

const aggregatesOn = async () => expect((await client().from("orders").select("count()")).error).toBeNull();
const aggregatesOff = async () =>
  expect((await client().from("orders").select("count()")).error).toMatchObject({ code: "PGRST123" });
const planOn = async () => expect((await rest("/orders", { accept: "application/vnd.pgrst.plan" })).status).toBe(200);
const planOff = async () => expect((await rest("/orders", { accept: "application/vnd.pgrst.plan" })).status).toBe(406);

beforeAll(async () => {
  await db().unsafe("drop schema if exists rest_agg cascade");
  await db().unsafe(FIXTURE);
  await configure({ db_schemas: "public, rest_agg" }, async () => {
    expect((await rest("/customers")).status).toBe(200);
  });
});

afterAll(async () => {
  await db().unsafe(`
    drop schema if exists rest_agg cascade;
    alter role authenticator reset pgrst.db_schemas;
    alter role authenticator reset pgrst.db_aggregates_enabled;
    alter role authenticator reset pgrst.db_plan_enabled;
    notify pgrst, 'reload config';`);
});

describe("with the settings unset (Supabase's default, and this project's)", () => {
  it("refuses an aggregate anywhere in select with PGRST123, as PostgREST does", async () => {
    await configure({ db_aggregates_enabled: null, db_plan_enabled: null }, aggregatesOff);
    for (const select of ["count()", "amount.sum()", "status,total:amount.avg()::int", "name,orders(amount.max())"]) {
      const from = select.startsWith("name") ? "customers" : "orders";
      const { error, status } = await client().from(from).select(select);
      expect(status).toBe(400);
      expect(error).toMatchObject({ code: "PGRST123", message: "Use of aggregate functions is not allowed" });
    }
    // A column that happens to be named like a function is no aggregate.
    expect((await client().from("orders").select("status").limit(1)).data).toEqual([{ status: "done" }]);
  });

  it("refuses .explain() with 406 PGRST107, naming the plan media type", async () => {
    const { error, status } = await client().from("orders").select("id").explain();
    expect(status).toBe(406);
    expect(error).toMatchObject({
      code: "PGRST107",
      message: 'None of these media types are available: application/vnd.pgrst.plan+text; for="application/json"',
    });
    const json = await rest("/orders", {
      accept: 'application/vnd.pgrst.plan+json; for="application/json"; options=analyze',
    });
    expect(json.status).toBe(406);
    expect((await json.json()).message).toBe(
      'None of these media types are available: application/vnd.pgrst.plan+json; for="application/json"; options=analyze',
    );
  });

  it("reads a value PostgREST does not take as true as false", async () => {
    await configure({ db_aggregates_enabled: "maybe" }, aggregatesOff);
    await configure({ db_aggregates_enabled: "0" }, aggregatesOff);
  });
});

describe("with pgrst.db_aggregates_enabled", () => {
  beforeAll(async () => {
    await configure({ db_aggregates_enabled: "true" }, aggregatesOn);
  });

  it("counts the rows with count(), and applies sum, avg, max, min and count to a column", async () => {
    expect((await client().from("orders").select("count()")).data).toEqual([{ count: 5 }]);
    const { data } = await client().from("orders").select(
      "amount.sum(),amount.avg(),amount.max(),amount.min(),amount.count()",
    );
    expect(data).toHaveLength(1);
    const [row] = data as Record<string, number>[];
    expect(row).toEqual({ sum: 136.5, avg: expect.any(Number), max: 100, min: 1, count: 5 });
    expect(row.avg).toBeCloseTo(27.3, 6);
  });

  it("groups by every other selected field, with aliases and filters", async () => {
    const { data } = await client().from("orders").select("status,orders:count(),total:amount.sum()").order("status");
    expect(data).toEqual([{ status: "done", orders: 3, total: 130 }, { status: "open", orders: 2, total: 6.5 }]);
    const open = await client().from("orders").select("customer_id,amount.sum()").eq("status", "open").order(
      "customer_id",
    );
    expect(open.data).toEqual([{ customer_id: 2, sum: 5.5 }, { customer_id: 3, sum: 1 }]);
    // A JSON path is grouped like a column (its key names it).
    const channels = await client().from("orders").select("meta->>channel,count()").order("meta->>channel");
    expect(channels.data).toEqual([{ channel: "app", count: 2 }, { channel: "web", count: 3 }]);
  });

  it("casts a column before its aggregate and the aggregate's result", async () => {
    const { data } = await client().from("orders").select("amount::int.sum(),amount.avg()::int,n:count()::text");
    // 10 + 20 + 6 (5.50 rounds up) + 100 + 1
    expect(data).toEqual([{ sum: 137, avg: 27, n: "5" }]);
  });

  it("aggregates the rows of an embedded resource per parent row", async () => {
    const { data } = await client().from("customers").select("name,orders(amount.sum(),count())").order("id");
    expect(data).toEqual([
      { name: "Ana", orders: [{ sum: 30, count: 2 }] },
      { name: "Bia", orders: [{ sum: 5.5, count: 1 }] },
      { name: "Caio", orders: [{ sum: 101, count: 2 }] },
    ]);
    const grouped = await client().from("customers").select("name,orders(status,count())").eq("id", 1);
    expect(grouped.data).toEqual([{ name: "Ana", orders: [{ status: "done", count: 2 }] }]);
  });

  it("groups by an embedded resource, and hoists a to-one spread's aggregate to its parent", async () => {
    const byCustomer = await client().from("orders").select("count(),customers(city)");
    expect(byCustomer.data).toEqual(
      expect.arrayContaining([{ count: 3, customers: { city: "Recife" } }, {
        count: 2,
        customers: { city: "Olinda" },
      }]),
    );
    expect(byCustomer.data).toHaveLength(2);
    const byCity = await client().from("orders").select("amount.sum(),...customers(city)");
    expect(byCity.data).toEqual(expect.arrayContaining([{ sum: 35.5, city: "Recife" }, { sum: 101, city: "Olinda" }]));
    expect(byCity.data).toHaveLength(2);
    // The aggregate inside the spread is applied by the parent: one count of customers per status.
    const hoisted = await client().from("orders").select("status,...customers(buyers:id.count())").order("status");
    expect(hoisted.data).toEqual([{ status: "done", buyers: 3 }, { status: "open", buyers: 2 }]);
  });

  it("refuses an aggregate in a to-many spread with PGRST127, as PostgREST does", async () => {
    const { error, status } = await client().from("customers").select("name,...orders(amount.sum())");
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: "PGRST127",
      details: "Aggregates are not implemented for one-to-many or many-to-many spreads.",
    });
  });

  it("aggregates a function's rows and the rows a write returns", async () => {
    const rpc = await client().rpc("big_orders", { minimum: 10 }).select("count(),amount.sum()");
    expect(rpc.data).toEqual([{ count: 3, sum: 130 }]);
    const updated = await client().from("orders").update({ status: "open" }).eq("id", 2).select("status,count()");
    expect(updated.data).toEqual([{ status: "open", count: 1 }]);
    await client().from("orders").update({ status: "done" }).eq("id", 2);
  });

  it("leaves Postgres' own errors to Postgres: an ungroupable order is 42803", async () => {
    const { error } = await client().from("orders").select("status,count()").order("amount");
    expect(error).toMatchObject({ code: "42803" });
  });
});

describe("with pgrst.db_plan_enabled", () => {
  beforeAll(async () => {
    await configure({ db_plan_enabled: "true" }, planOn);
  });

  it("answers .explain() with the text plan of the request's query", async () => {
    const { data, error, status } = await client().from("orders").select("id,status").eq("status", "open").explain();
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(typeof data).toBe("string");
    expect(data as unknown as string).toMatch(/^Aggregate {2}\(cost=/);
    expect(data as unknown as string).toContain("Seq Scan on orders");
    expect(data as unknown as string).toContain("Filter: (status = ");
    const res = await rest("/orders?select=id", { accept: "application/vnd.pgrst.plan" });
    expect(res.headers.get("content-type")).toBe(
      'application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8',
    );
    expect(await res.text()).toMatch(/\n$/);
  });

  it("answers the JSON plan with EXPLAIN's options: analyze runs the query", async () => {
    const { data, error } = await client().from("orders").select("id").explain({
      format: "json",
      analyze: true,
      verbose: true,
    });
    expect(error).toBeNull();
    const [plan] = data as unknown as { Plan: Record<string, unknown>; "Execution Time": number }[];
    expect(plan.Plan["Node Type"]).toBe("Aggregate");
    expect(plan.Plan["Actual Rows"]).toBe(1);
    expect(plan.Plan.Output).toBeDefined();
    expect(plan["Execution Time"]).toEqual(expect.any(Number));
    const res = await rest("/orders?select=id", {
      accept: 'application/vnd.pgrst.plan+json; for="application/json"; options=analyze|verbose',
    });
    expect(res.headers.get("content-type")).toBe(
      'application/vnd.pgrst.plan+json; for="application/json"; options=analyze|verbose; charset=utf-8',
    );
  });

  it("explains a single object's, a function's and a write's query; a write without analyze changes nothing", async () => {
    const single = await rest("/orders?select=id&id=eq.1", {
      accept: 'application/vnd.pgrst.plan; for="application/vnd.pgrst.object+json"',
    });
    expect(single.status).toBe(200);
    expect(single.headers.get("content-type")).toBe(
      'application/vnd.pgrst.plan+text; for="application/vnd.pgrst.object+json"; charset=utf-8',
    );
    expect(await single.text()).toMatch(/Index (Only )?Scan using orders_pkey on orders/);
    const rpc = await client().rpc("big_orders", { minimum: 10 }).explain();
    expect(rpc.error).toBeNull();
    // The SQL function is inlined into the query: its scan of orders is in the plan.
    expect(rpc.data as unknown as string).toContain("Seq Scan on orders");
    const insert = await client().from("orders").insert({ id: 6, customer_id: 1, amount: 1, status: "open" }).select()
      .explain();
    expect(insert.error).toBeNull();
    expect(insert.data as unknown as string).toContain("Insert on orders");
    const [{ count }] = await db()`select count(*)::int from rest_agg.orders where id = 6`;
    expect(count).toBe(0);
  });

  it("offers the plan only of what the resource offers: a plan for GeoJSON is 406", async () => {
    const res = await rest("/orders", { accept: 'application/vnd.pgrst.plan+json; for="application/geo+json"' });
    expect(res.status).toBe(406);
    expect(await res.json()).toMatchObject({ code: "PGRST107" });
  });

  it("is off again once the setting is reset", async () => {
    await configure({ db_plan_enabled: null, db_aggregates_enabled: null }, async () => {
      await planOff();
      await aggregatesOff();
    });
  });
});

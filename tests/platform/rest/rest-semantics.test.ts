// PostgREST's semantics, as supabase-js and plain HTTP clients use them,
// against a fixture schema of their own (`rest_test`, exposed beside public
// through the in-database setting pgrst.db_schemas, as a project does):
// computed fields and relationships, many-to-many, self-references with
// hints, relationships through views (also over tables of an unexposed
// schema), overloaded and unnamed-parameter functions, upserts, missing
// defaults, transaction-end and max-affected preferences, CSV, planned and
// estimated counts, several schemas, the in-database settings (schemas, extra
// search path, anonymous role, transaction end, max rows, pre-request) and the
// OpenAPI root, and PostgREST's own refusals (PGRSTxxx).
import SwaggerParser from "@apidevtools/swagger-parser";
import { createClient } from "@supabase/supabase-js";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, stack } from "../../support/api.ts";
import { configurePostgrest as configure } from "../../support/postgrest.ts";

const FIXTURE = `
  create schema rest_test;
  create schema rest_hidden;
  comment on schema rest_test is 'Library API
The fixture of tests/platform/rest/rest-semantics.test.ts.';
  grant usage on schema rest_test to anon, authenticated, service_role;

  create table rest_test.authors (
    id int primary key,
    first_name text not null,
    last_name text not null,
    mentor_id int references rest_test.authors (id),
    status text not null default 'active',
    joined date not null default date '2020-01-01'
  );
  comment on column rest_test.authors.status is 'Whether the author still writes';
  create table rest_test.books (id int primary key, title text not null, author_id int references rest_test.authors (id));
  create table rest_test.tags (id int primary key, name text not null unique);
  create table rest_test.book_tags (
    book_id int references rest_test.books (id),
    tag_id int references rest_test.tags (id),
    primary key (book_id, tag_id)
  );
  create table rest_test.counters (id serial primary key, label text not null default 'unnamed', n int not null default 0);
  create table rest_test.loans (
    id int primary key,
    lender int not null references rest_test.authors (id),
    borrower int not null references rest_test.authors (id)
  );

  create function rest_test.full_name(a rest_test.authors) returns text
    language sql stable return a.first_name || ' ' || a.last_name;
  create function rest_test.latest_book(a rest_test.authors) returns setof rest_test.books rows 1
    language sql stable as $$ select * from rest_test.books b where b.author_id = a.id order by b.id desc limit 1 $$;
  create function rest_test.written(a rest_test.authors) returns setof rest_test.books
    language sql stable as $$ select * from rest_test.books b where b.author_id = a.id $$;

  -- A view renaming the key columns, and views over an unexposed schema's tables.
  create view rest_test.book_view as select id as book_id, title, author_id as writer from rest_test.books;
  create table rest_hidden.publishers (id int primary key, name text not null);
  create table rest_hidden.editions (id int primary key, year int not null, publisher_id int references rest_hidden.publishers (id));
  create view rest_test.publishers as select id, name from rest_hidden.publishers;
  create view rest_test.editions as select id, year, publisher_id from rest_hidden.editions;

  create function rest_test.add(a int, b int) returns int language sql immutable return a + b;
  create function rest_test.add(a int) returns int language sql immutable return a + 1;
  create function rest_test.echo(json) returns json language sql immutable return $1;
  create function rest_test.shout(text) returns text language sql immutable return upper($1);
  create function rest_test.size(bytea) returns int language sql immutable return octet_length($1);
  create function rest_test.twice(x int) returns int language sql immutable return x * 2;
  create function rest_test.twice(x text) returns text language sql immutable return x || x;
  create function rest_test.greet(name text default 'you') returns text language sql immutable return 'hi ' || name;
  create function rest_test.prolific() returns setof rest_test.authors language sql stable
    as $$ select * from rest_test.authors where id in (select author_id from rest_test.books) order by id $$;
  create function rest_test.bump() returns setof rest_test.counters language sql volatile
    as $$ update rest_test.counters set n = n + 1 returning * $$;
  create function rest_test.teapot() returns void language plpgsql as $$
  begin
    raise sqlstate 'PGRST' using
      message = '{"code": "T418", "message": "short and stout", "hint": "tip me over"}',
      detail = '{"status": 418, "headers": {"x-teapot": "yes"}}';
  end $$;
  create function rest_test.accepted() returns text language plpgsql as $$
  begin
    perform set_config('response.status', '202', true);
    perform set_config('response.headers', '[{"x-queued": "1"}]', true);
    return 'queued';
  end $$;
  create function rest_test.stamp() returns void language sql
    as $$ select set_config('response.headers', '[{"x-pre-request": "' || current_setting('request.method') || '"}]', true) $$;
  create function rest_test.one_author() returns rest_test.authors language sql stable
    as $$ select * from rest_test.authors where id = 1 $$;

  insert into rest_test.authors (id, first_name, last_name, mentor_id) values
    (1, 'Ada', 'Lovelace', null), (2, 'Charles', 'Babbage', 1), (3, 'Grace', 'Hopper', 1), (4, 'Alan', 'Kay', null);
  insert into rest_test.books values (10, 'Notes', 1), (11, 'Engines', 2), (12, 'Sketch', 1), (13, 'Compilers', 3);
  insert into rest_test.tags values (100, 'math'), (101, 'machines');
  insert into rest_test.book_tags values (10, 100), (11, 101), (12, 100), (12, 101);
  insert into rest_hidden.publishers values (1, 'Murray');
  insert into rest_hidden.editions values (1, 1843, 1), (2, 1864, 1);
  insert into rest_test.counters (label) values ('a'), ('b'), ('c');
  insert into rest_test.loans values (1, 1, 3);
  create table rest_test.settings (id int primary key, doc jsonb not null);
  insert into rest_test.settings values (1, '{"theme": {"color": "blue"}, "size": 3}'), (2, '{"theme": {"color": "red"}, "size": 1}');

  -- Reached only through pgrst.db_extra_search_path; and a role for requests whose token names none.
  create schema rest_extra;
  grant usage on schema rest_extra to service_role;
  create function rest_extra.triple(x int) returns int language sql immutable return x * 3;
  create function rest_test.uses_extra(x int) returns int language plpgsql immutable
    as $$ begin return triple(x); end $$;
  do $$ begin
    if not exists (select from pg_roles where rolname = 'rest_test_reader') then
      create role rest_test_reader nologin;
    end if;
  end $$;
  grant rest_test_reader to authenticator;
  grant usage on schema rest_test to rest_test_reader;
  grant select on rest_test.tags to rest_test_reader;

  grant select, insert, update, delete on all tables in schema rest_test to service_role;
  grant usage on all sequences in schema rest_test to service_role;
  grant select on rest_test.authors, rest_test.books to anon;
  grant execute on all functions in schema rest_test to service_role, anon;
  grant execute on function rest_extra.triple(int) to service_role;
`;

/**
 * postgrest-js types `maxAffected` for clients generated against PostgREST 13+
 * only; these clients are untyped (the fixture has no generated types), so it
 * is called as it exists at run time.
 */
const maxAffected = <T>(builder: T, rows: number): T =>
  (builder as unknown as { maxAffected(rows: number): T }).maxAffected(rows);

const service = () =>
  createClient(stack().apiUrl, stack().serviceRoleKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    db: { schema: "rest_test" },
  });
const library = () => service().schema("rest_test");

const rest = (path: string, init: RequestInit & { key?: string } = {}) =>
  fetch(`${stack().apiUrl}/rest/v1${path}`, {
    ...init,
    headers: {
      apikey: init.key ?? stack().serviceRoleKey,
      "accept-profile": "rest_test",
      "content-profile": "rest_test",
      ...(init.headers as Record<string, string>),
    },
  });

beforeAll(async () => {
  await db().unsafe(
    "drop schema if exists rest_test cascade; drop schema if exists rest_hidden cascade; " +
      "drop schema if exists rest_extra cascade",
  );
  await db().unsafe(FIXTURE);
  await configure({ db_schemas: "public, rest_test" }, async () => {
    expect((await rest("/authors?select=id")).status).toBe(200);
  });
});

afterAll(async () => {
  await configure(
    { db_schemas: null, db_tx_end: null, db_max_rows: null, db_extra_search_path: null, db_anon_role: null },
    async () => {
      expect((await rest("/authors")).status).toBe(406);
    },
  );
  await db().unsafe("drop schema rest_test cascade; drop schema rest_hidden cascade; drop schema rest_extra cascade");
  await db().unsafe("drop role rest_test_reader");
});

describe("computed fields and relationships", () => {
  it("selects, filters and orders by a function of the row as by a column", async () => {
    const { data, error } = await library()
      .from("authors")
      .select("id, full_name")
      .like("full_name", "*e*")
      .order("full_name", { ascending: false });
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 3, full_name: "Grace Hopper" },
      { id: 2, full_name: "Charles Babbage" },
      { id: 1, full_name: "Ada Lovelace" },
    ]);
  });

  it("embeds a function returning rows of a table: to-one with ROWS 1, else to-many", async () => {
    const { data, error } = await library()
      .from("authors")
      .select("id, latest_book(title), written(title)")
      .eq("id", 1)
      .order("id", { referencedTable: "written" });
    expect(error).toBeNull();
    expect(data).toEqual([{
      id: 1,
      latest_book: { title: "Sketch" },
      written: [{ title: "Notes" }, { title: "Sketch" }],
    }]);
  });
});

describe("relationships", () => {
  it("embeds many-to-many through a junction table whose primary key holds both keys, both ways", async () => {
    const books = await library().from("books").select("title, tags(name)").eq("id", 12).order("id", {
      referencedTable: "tags",
    });
    expect(books.data).toEqual([{ title: "Sketch", tags: [{ name: "math" }, { name: "machines" }] }]);
    const tags = await library().from("tags").select("name, books(id)").eq("name", "math").order("id", {
      referencedTable: "books",
    });
    expect(tags.data).toEqual([{ name: "math", books: [{ id: 10 }, { id: 12 }] }]);
  });

  it("tells a self-reference's parent (by its column) from its children (by the table, or a hint)", async () => {
    const parent = await library().from("authors").select("first_name, mentor_id(first_name)").eq("id", 2);
    expect(parent.data).toEqual([{ first_name: "Charles", mentor_id: { first_name: "Ada" } }]);
    const children = await library()
      .from("authors")
      .select("first_name, mentees:authors!mentor_id(first_name)")
      .eq("id", 1)
      .order("id", { referencedTable: "mentees" });
    expect(children.error).toBeNull();
    expect(children.data).toEqual([{
      first_name: "Ada",
      mentees: [{ first_name: "Charles" }, { first_name: "Grace" }],
    }]);
    const unhinted = await library().from("authors").select("id, authors(id)").eq("id", 1);
    expect(unhinted.data).toEqual([{ id: 1, authors: [{ id: 2 }, { id: 3 }] }]);
  });

  it("spreads a to-one embedding's columns into the row, and a to-many one's as arrays", async () => {
    const toOne = await library().from("books").select("title, ...authors(first_name)").eq("id", 11);
    expect(toOne.data).toEqual([{ title: "Engines", first_name: "Charles" }]);
    const toMany = await library()
      .from("authors")
      .select("first_name, ...books(title, id)")
      .in("id", [1, 4])
      .order("id")
      .order("id", { referencedTable: "books", ascending: false });
    expect(toMany.error).toBeNull();
    expect(toMany.data).toEqual([
      { first_name: "Ada", title: ["Sketch", "Notes"], id: [12, 10] },
      { first_name: "Alan", title: [], id: [] },
    ]);
  });

  it("follows foreign keys through views, also over the tables of an unexposed schema", async () => {
    const view = await library().from("book_view").select("title, authors(first_name)").eq("book_id", 11);
    expect(view.error).toBeNull();
    expect(view.data).toEqual([{ title: "Engines", authors: { first_name: "Charles" } }]);
    const back = await library().from("authors").select("id, book_view(book_id)").eq("id", 3);
    expect(back.data).toEqual([{ id: 3, book_view: [{ book_id: 13 }] }]);
    const hidden = await library().from("editions").select("year, publishers(name)").order("year");
    expect(hidden.error).toBeNull();
    expect(hidden.data).toEqual([{ year: 1843, publishers: { name: "Murray" } }, {
      year: 1864,
      publishers: { name: "Murray" },
    }]);
  });

  it("refuses an ambiguous embedding with PGRST201 and the choices, and an unknown one with PGRST200", async () => {
    const ambiguous = await rest("/loans?select=id,authors(first_name)");
    expect(ambiguous.status).toBe(300);
    expect(await ambiguous.json()).toEqual({
      code: "PGRST201",
      message: "Could not embed because more than one relationship was found for 'loans' and 'authors'",
      details: [
        {
          cardinality: "many-to-one",
          embedding: "loans with authors",
          relationship: "loans_borrower_fkey using loans(borrower) and authors(id)",
        },
        {
          cardinality: "many-to-one",
          embedding: "loans with authors",
          relationship: "loans_lender_fkey using loans(lender) and authors(id)",
        },
      ],
      hint: "Try changing 'authors' to one of the following: 'authors!loans_borrower_fkey', " +
        "'authors!loans_lender_fkey'. Find the desired relationship in the 'details' key.",
    });
    const hinted = await library().from("loans").select("lender:authors!lender(first_name), borrower(first_name)");
    expect(hinted.data).toEqual([{ lender: { first_name: "Ada" }, borrower: { first_name: "Grace" } }]);
    const none = await rest("/books?select=title,publishers(name)");
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({
      code: "PGRST200",
      message: "Could not find a relationship between 'books' and 'publishers' in the schema cache",
    });
  });
});

describe("functions (rpc)", () => {
  it("resolves overloads by the argument names given, and refuses an ambiguous call with PGRST203", async () => {
    expect((await library().rpc("add", { a: 1, b: 2 })).data).toBe(3);
    expect((await library().rpc("add", { a: 1 })).data).toBe(2);
    expect((await library().rpc("add", { a: 1 }, { get: true })).data).toBe(2);
    const ambiguous = await library().rpc("twice", { x: 3 });
    expect(ambiguous.status).toBe(300);
    expect(ambiguous.error).toMatchObject({
      code: "PGRST203",
      message:
        "Could not choose the best candidate function between: rest_test.twice(x => integer), rest_test.twice(x => text)",
    });
    expect((await library().rpc("greet", {})).data).toBe("hi you");
    expect((await library().rpc("greet", { name: "Ada" }, { get: true })).data).toBe("hi Ada");
    const unknown = await library().rpc("add", { c: 1 });
    expect(unknown.status).toBe(404);
    expect(unknown.error).toMatchObject({
      code: "PGRST202",
      message: "Could not find the function rest_test.add(c) in the schema cache",
    });
  });

  it("passes the whole body to a function with one unnamed json, text or bytea parameter", async () => {
    const json = await rest("/rpc/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ any: ["shape", 1] }),
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ any: ["shape", 1] });
    const text = await rest("/rpc/shout", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "quiet",
    });
    expect(await text.json()).toBe("QUIET");
    const bytes = await rest("/rpc/size", {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: new Uint8Array([0, 1, 2, 255, 0]),
    });
    expect(await bytes.json()).toBe(5);
    const refused = await rest("/rpc/echo", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "x",
    });
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({
      code: "PGRST202",
      message: "Could not find the function rest_test.echo in the schema cache",
      details:
        "Searched for the function rest_test.echo with a single unnamed text parameter, but no matches were found in the schema cache.",
    });
  });

  it("lets a function choose the status and headers: raise sqlstate 'PGRST', response.status, response.headers", async () => {
    const teapot = await rest("/rpc/teapot", { method: "POST" });
    expect(teapot.status).toBe(418);
    expect(teapot.headers.get("x-teapot")).toBe("yes");
    expect(await teapot.json()).toEqual({
      code: "T418",
      message: "short and stout",
      details: null,
      hint: "tip me over",
    });
    const accepted = await rest("/rpc/accepted", { method: "POST" });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("x-queued")).toBe("1");
    expect(await accepted.json()).toBe("queued");
  });

  it("reads a set-returning function's rows like a table, embedding from them", async () => {
    const { data, error } = await library().rpc("prolific").select("id, books(title)").gt("id", 1).order("id");
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 2, books: [{ title: "Engines" }] }, { id: 3, books: [{ title: "Compilers" }] }]);
    const single = await library().rpc("one_author").select("full_name");
    expect(single.data).toEqual({ full_name: "Ada Lovelace" });
  });
});

describe("writes", () => {
  it("upserts: 201 when a row was inserted, 200 when every row only updated, 201 ignoring duplicates", async () => {
    const updated = await library().from("tags").upsert({ id: 100, name: "mathematics" }).select();
    expect(updated.status).toBe(200);
    expect(updated.data).toEqual([{ id: 100, name: "mathematics" }]);
    const inserted = await library().from("tags").upsert([{ id: 100, name: "math" }, { id: 102, name: "poetry" }])
      .select();
    expect(inserted.status).toBe(201);
    const ignored = await library().from("tags").upsert({ id: 102, name: "ignored" }, { ignoreDuplicates: true });
    expect(ignored.status).toBe(201);
    expect((await library().from("tags").select("name").eq("id", 102).single()).data).toEqual({ name: "poetry" });
    const put = await rest("/tags?id=eq.103", {
      method: "PUT",
      headers: { "content-type": "application/json", prefer: "return=representation" },
      body: JSON.stringify({ id: 103, name: "history" }),
    });
    expect(put.status).toBe(201);
    const again = await rest("/tags?id=eq.103", {
      method: "PUT",
      headers: { "content-type": "application/json", prefer: "return=representation" },
      body: JSON.stringify({ id: 103, name: "History" }),
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual([{ id: 103, name: "History" }]);
    const mismatch = await rest("/tags?id=eq.104", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 105, name: "x" }),
    });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ code: "PGRST115" });
  });

  it("fills keys a row lacks with the column default under missing=default, with null otherwise", async () => {
    const defaults = await library()
      .from("authors")
      .insert([{ id: 20, first_name: "Alan", last_name: "Turing", status: "retired" }, {
        id: 21,
        first_name: "Edsger",
        last_name: "Dijkstra",
      }], { defaultToNull: false })
      .select("id, status, joined");
    expect(defaults.error).toBeNull();
    expect(defaults.data).toEqual([
      { id: 20, status: "retired", joined: "2020-01-01" },
      { id: 21, status: "active", joined: "2020-01-01" },
    ]);
    const nulls = await library()
      .from("authors")
      .insert([{ id: 22, first_name: "Barbara", last_name: "Liskov", status: "active" }, {
        id: 23,
        first_name: "Donald",
        last_name: "Knuth",
      }]);
    expect(nulls.status).toBe(400);
    expect(nulls.error).toMatchObject({ code: "23502" });
  });

  it("rolls back a write with Prefer: tx=rollback where db-tx-end allows it, and says so", async () => {
    // Supabase's default (db-tx-end = commit): the preference is not applied.
    const committed = await rest("/counters", {
      method: "POST",
      headers: { "content-type": "application/json", prefer: "tx=rollback" },
      body: JSON.stringify({ label: "kept" }),
    });
    expect(committed.status).toBe(201);
    expect(committed.headers.get("preference-applied")).toBeNull();
    expect((await library().from("counters").select("id").eq("label", "kept")).data).toHaveLength(1);

    await configure({ db_tx_end: "commit-allow-override" }, async () => {
      const probe = await rest("/counters?id=eq.0", { method: "DELETE", headers: { prefer: "tx=rollback" } });
      expect(probe.headers.get("preference-applied")).toBe("tx=rollback");
    });
    const rolledBack = await library().from("counters").insert({ label: "gone" }).select("label").rollback();
    expect(rolledBack.status).toBe(201);
    expect(rolledBack.data).toEqual([{ label: "gone" }]);
    expect((await library().from("counters").select("id").eq("label", "gone")).data).toEqual([]);
    const bumped = await rest("/rpc/bump", { method: "POST", headers: { prefer: "tx=rollback" } });
    expect(bumped.status).toBe(200);
    expect((await library().from("counters").select("n").eq("label", "a").single()).data).toEqual({ n: 0 });
  });

  it("refuses with PGRST124 a change of more rows than max-affected under handling=strict, changing none", async () => {
    const refused = await maxAffected(library().from("counters").update({ n: 5 }).in("label", ["a", "b", "c"]), 2);
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({
      code: "PGRST124",
      message: "Query result exceeds max-affected preference constraint",
      details: "The query affects 3 rows",
    });
    expect((await library().from("counters").select("n").in("label", ["a", "b", "c"])).data).toEqual([
      { n: 0 },
      { n: 0 },
      { n: 0 },
    ]);
    const lenient = await rest("/counters?label=eq.a", {
      method: "PATCH",
      headers: { "content-type": "application/json", prefer: "max-affected=0" },
      body: JSON.stringify({ n: 1 }),
    });
    expect(lenient.status).toBe(204);
    const within = await maxAffected(library().from("counters").delete().eq("label", "kept"), 1);
    expect(within.status).toBe(204);
    const single = await rest("/rpc/one_author", { headers: { prefer: "handling=strict, max-affected=1" } });
    expect(single.status).toBe(400);
    expect(await single.json()).toMatchObject({ code: "PGRST128" });
    const bumps = await rest("/rpc/bump", { method: "POST", headers: { prefer: "handling=strict, max-affected=1" } });
    expect(await bumps.json()).toMatchObject({ code: "PGRST124", details: "The query affects 3 rows" });
    expect((await library().from("counters").select("n").eq("label", "b").single()).data).toEqual({ n: 0 });
  });

  it("refuses unknown preferences under handling=strict with PGRST122", async () => {
    const res = await rest("/authors?select=id", { headers: { prefer: "handling=strict, count=none, sparkle" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: "PGRST122",
      message: "Invalid preferences given with handling=strict",
      details: "Invalid preferences: count=none, sparkle",
    });
  });
});

describe("reads", () => {
  it("selects, filters and orders by JSON paths", async () => {
    const { data, error } = await library()
      .from("settings")
      .select("id, doc->theme->color, size:doc->>size")
      .neq("doc->theme->>color", "green")
      .order("doc->size");
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 2, color: "red", size: "1" }, { id: 1, color: "blue", size: "3" }]);
  });

  it("answers text/csv", async () => {
    const { data, error } = await library().from("authors").select("id, first_name, mentor_id").lte("id", 2)
      .order("id").csv();
    expect(error).toBeNull();
    expect(data).toBe("id,first_name,mentor_id\n1,Ada,\n2,Charles,1");
  });

  it("counts as planned (the planner's estimate: 206 when it exceeds the rows) and as estimated", async () => {
    const [{ "QUERY PLAN": plan }] = await db().unsafe(`explain (format json) select 1 from rest_test.books`);
    const estimate = plan[0].Plan["Plan Rows"];
    // Never analyzed, the four rows' table is estimated larger than it is (Postgres assumes ten pages).
    expect(estimate).toBeGreaterThan(4);
    const planned = await library().from("books").select("*", { count: "planned", head: true });
    expect(planned).toMatchObject({ status: 206, count: estimate, data: null });
    const head = await rest("/books?select=id", { method: "HEAD", headers: { prefer: "count=planned" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe(`0-3/${estimate}`);
    const estimated = await library().from("books").select("*", { count: "estimated", head: true });
    // Under max-rows the estimate is the exact count.
    expect(estimated).toMatchObject({ status: 200, count: 4 });
    const scalar = await library().rpc("greet", {}, { count: "exact" });
    expect(scalar).toMatchObject({ status: 200, count: 1, data: "hi you" });
  });

  it("serves several schemas by profile, and names the schema it answered from", async () => {
    const res = await rest("/authors?select=id&id=eq.1");
    expect(res.headers.get("content-profile")).toBe("rest_test");
    const viaClient = await service().schema("public").from("authors").select("id");
    expect(viaClient.status).toBe(404);
    expect(viaClient.error).toMatchObject({ code: "PGRST205" });
    const hidden = await service().schema("rest_hidden").from("publishers").select();
    expect(hidden.status).toBe(406);
    expect(hidden.error).toMatchObject({
      code: "PGRST106",
      hint: "Only the following schemas are exposed: public, rest_test",
    });
  });

  it("applies pgrst.db_pre_request and pgrst.openapi_mode set in the database", async () => {
    await configure({ db_pre_request: "rest_test.stamp", openapi_mode: "disabled" }, async () => {
      expect((await rest("/books?select=id&limit=1")).headers.get("x-pre-request")).toBe("GET");
    });
    const root = await rest("/");
    expect(root.status).toBe(404);
    expect(await root.json()).toMatchObject({ code: "PGRST126", message: "Root endpoint metadata is disabled" });
    await configure({ db_pre_request: null, openapi_mode: null }, async () => {
      expect((await rest("/")).status).toBe(200);
    });
    expect((await rest("/books?select=id&limit=1")).headers.get("x-pre-request")).toBeNull();
  });

  it("applies pgrst.db_extra_search_path and pgrst.db_anon_role set in the database", async () => {
    // Supabase's default extra search path (public, extensions) does not reach rest_extra.triple.
    const before = await rest("/rpc/uses_extra?x=2");
    expect(before.status).toBe(404);
    expect(await before.json()).toMatchObject({ code: "42883" });
    // A token that names no role is the anonymous role's: anon, which may not read tags.
    const roleless = await new SignJWT({ sub: "nobody", exp: Math.floor(Date.now() / 1000) + 600 })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .sign(new TextEncoder().encode(stack().jwtSecret));
    const asAnonymous = () =>
      rest("/tags?select=name&order=id&limit=1", { headers: { authorization: `Bearer ${roleless}` } });
    expect((await asAnonymous()).status).toBe(401);

    await configure(
      { db_extra_search_path: "public, extensions, rest_extra", db_anon_role: "rest_test_reader" },
      async () => {
        const after = await rest("/rpc/uses_extra?x=2");
        expect(after.status).toBe(200);
        expect(await after.json()).toBe(6);
      },
    );
    const reader = await asAnonymous();
    expect(reader.status).toBe(200);
    expect(await reader.json()).toEqual([{ name: expect.any(String) }]);

    await configure({ db_extra_search_path: null, db_anon_role: null }, async () => {
      expect((await rest("/rpc/uses_extra?x=2")).status).toBe(404);
    });
    expect((await asAnonymous()).status).toBe(401);
  });

  it("applies pgrst.db_max_rows set in the database", async () => {
    await configure({ db_max_rows: "2" }, async () => {
      const res = await rest("/books?select=id&order=id");
      expect(await res.json()).toEqual([{ id: 10 }, { id: 11 }]);
    });
    await configure({ db_max_rows: null }, async () => {
      expect(await (await rest("/books?select=id")).json()).toHaveLength(4);
    });
  });
});

describe("the OpenAPI root", () => {
  it("describes the schema's tables and functions as Swagger 2.0, as far as the caller's role may use them", async () => {
    const res = await rest("/", { headers: { "accept-profile": "rest_test" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/openapi+json; charset=utf-8");
    const doc = await res.json();
    await SwaggerParser.validate(structuredClone(doc));
    expect(doc.info).toMatchObject({
      title: "Library API",
      description: "The fixture of tests/platform/rest/rest-semantics.test.ts.",
    });
    expect(doc.basePath).toBe("/rest/v1/");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/", "/authors", "/book_view", "/rpc/add"]));
    expect(doc.paths["/rpc/bump"].get).toBeUndefined();
    expect(doc.definitions.authors.properties.status).toMatchObject({
      type: "string",
      default: "active",
      description: "Whether the author still writes",
    });
    expect(doc.definitions.authors.properties.id.description).toContain("This is a Primary Key.<pk/>");
    expect(doc.definitions.books.properties.author_id.description).toContain("<fk table='authors' column='id'/>");

    const anon = await (await rest("/", { key: stack().anonKey })).json();
    expect(Object.keys(anon.paths).filter((p) => !p.startsWith("/rpc/")).sort()).toEqual(["/", "/authors", "/books"]);
  });
});

describe("PostgREST's refusals", () => {
  it("answers what the stand-in does not do with PostgREST's codes", async () => {
    const aggregate = await rest("/books?select=count()");
    expect(aggregate.status).toBe(400);
    expect(await aggregate.json()).toMatchObject({ code: "PGRST123" });
    const put = await rest("/tags", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 1, name: "x" }),
    });
    expect(put.status).toBe(405);
    expect(await put.json()).toMatchObject({ code: "PGRST105" });
    const method = await rest("/rpc/add?a=1", { method: "DELETE" });
    expect(method.status).toBe(405);
    expect(await method.json()).toMatchObject({ code: "PGRST101", message: "Cannot use the DELETE method on RPC" });
    const path = await rest("/books/10");
    expect(path.status).toBe(404);
    expect(await path.json()).toMatchObject({ code: "PGRST125" });
    const type = await rest("/books", {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: "<x/>",
    });
    expect(type.status).toBe(400);
    expect(await type.json()).toMatchObject({
      code: "PGRST102",
      message: "Content-Type not acceptable: application/xml",
    });
  });
});

// deno-lint-ignore-file no-explicit-any -- Realtime payloads are read as `any`
// Realtime postgres_changes with the real supabase-js client against the
// local stack, as Realtime delivers them: tables of the supabase_realtime
// publication; each change checked against every subscriber's event, table
// and filter, and against RLS as that subscriber's role and claims; Realtime's
// payload (type, record, old_record, columns, commit_timestamp, errors) under
// the binding ids of the join's reply; and Realtime's own `system` error for a
// subscription it cannot make, never a silent success. Test tables live in a
// schema of their own, `s26`.
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, db, signIn, stack, uniqueEmail } from "../../support/api.ts";
import { until } from "../../support/realtime.ts";

const clients: SupabaseClient[] = [];

function client(token?: string): SupabaseClient {
  const supabase = createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  if (token) supabase.realtime.setAuth(token);
  clients.push(supabase);
  return supabase;
}

async function user(): Promise<{ id: string; token: string }> {
  const email = uniqueEmail("changes");
  const { id } = await createUser(email, "changes-user-pass");
  return { id, token: (await signIn(email, "changes-user-pass")).access_token };
}

interface Binding {
  event: "*" | "INSERT" | "UPDATE" | "DELETE";
  schema: string;
  table?: string;
  filter?: string;
}

interface Listener {
  channel: RealtimeChannel;
  status: string;
  changes: any[];
  system: any[];
}

async function listen(supabase: SupabaseClient, ...bindings: Binding[]): Promise<Listener> {
  const changes: any[] = [];
  const system: any[] = [];
  let channel = supabase.channel(`s26-${randomUUID()}`);
  for (const binding of bindings) {
    channel = channel.on("postgres_changes" as any, binding, (payload: any) => changes.push(payload));
  }
  channel.on("system", {}, (payload) => system.push(payload));
  const status = await new Promise<string>((resolve) => channel.subscribe((s) => s !== "CLOSED" && resolve(s)));
  await until(() => system.length > 0);
  return { channel, status, changes, system };
}

/** Waits long enough for a change that should not come (Realtime polls every 100 ms). */
const settle = () => new Promise((r) => setTimeout(r, 600));

beforeAll(async () => {
  await db().unsafe(`
    create schema if not exists s26;
    grant usage on schema s26 to anon, authenticated, service_role;
    create table if not exists s26.notes (
      id bigint generated always as identity primary key,
      owner uuid not null,
      body text,
      secret text
    );
    alter table s26.notes enable row level security;
    drop policy if exists s26_notes_select_own on s26.notes;
    create policy s26_notes_select_own on s26.notes for select to authenticated using (owner = (select auth.uid()));
    grant select (id, owner, body) on s26.notes to authenticated;
    grant all on s26.notes to service_role;
    create table if not exists s26.numbers (id int primary key, n int, name text);
    grant select on s26.numbers to anon, authenticated, service_role;
    create table if not exists s26.keyless (name text);
    grant select on s26.keyless to anon;
    create table if not exists s26.unpublished (id int primary key);
    grant select on s26.unpublished to anon;
    do $$ begin
      if not exists (select from pg_publication_tables where pubname = 'supabase_realtime' and schemaname = 's26') then
        alter publication supabase_realtime add table s26.notes, s26.numbers, s26.keyless;
      end if;
    end $$;`);
});

afterAll(async () => {
  await Promise.all(clients.map((supabase) => supabase.removeAllChannels()));
});

describe("postgres_changes", () => {
  it("delivers inserts, updates and deletes with Realtime's payload, as the subscriber may see them", async () => {
    const alice = await user();
    const listener = await listen(client(alice.token), { event: "*", schema: "s26", table: "notes" });
    expect(listener.status).toBe("SUBSCRIBED");
    expect(listener.system).toEqual([
      { extension: "postgres_changes", status: "ok", message: "Subscribed to PostgreSQL", channel: expect.any(String) },
    ]);

    // One change at a time: as on Realtime, an insert or update is checked against RLS when it is read (about every
    // 100 ms), so a row already deleted by then is seen by nobody.
    const [{ id }] = await db()`insert into s26.notes (owner, body, secret) values (${alice.id}, 'first', 'hidden')
                                returning id`;
    await until(() => listener.changes.length >= 1);
    await db()`update s26.notes set body = 'second' where id = ${id}`;
    await until(() => listener.changes.length >= 2);
    await db()`delete from s26.notes where id = ${id}`;
    await until(() => listener.changes.length >= 3);

    const [inserted, updated, deleted] = listener.changes;
    expect(inserted).toMatchObject({
      schema: "s26",
      table: "notes",
      eventType: "INSERT",
      // The role may not select `secret`: it is left out, as Realtime leaves out what the role cannot select.
      new: { id: Number(id), owner: alice.id, body: "first" },
      old: {},
      errors: null,
    });
    expect(inserted.new).not.toHaveProperty("secret");
    expect(inserted.commit_timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(inserted.commit_timestamp) - Date.now())).toBeLessThan(10_000);
    // Without REPLICA IDENTITY FULL, the old record is the primary key.
    expect(updated).toMatchObject({
      eventType: "UPDATE",
      new: { id: Number(id), body: "second" },
      old: { id: Number(id) },
    });
    expect(deleted).toMatchObject({ eventType: "DELETE", new: {}, old: { id: Number(id) } });
    expect(listener.changes).toHaveLength(3);
  });

  it("applies RLS to each change for each subscriber, with its own role and claims", async () => {
    const [alice, bob] = await Promise.all([user(), user()]);
    const table = { event: "*" as const, schema: "s26", table: "notes" };
    const [forAlice, forBob, forService, forAnon] = await Promise.all([
      listen(client(alice.token), table),
      listen(client(bob.token), table),
      listen(client(stack().serviceRoleKey), table),
      listen(client(), table),
    ]);
    const [{ id }] = await db()`insert into s26.notes (owner, body) values (${alice.id}, 'private') returning id`;
    await until(() => forAlice.changes.length > 0 && forService.changes.length > 0 && forAnon.changes.length > 0);
    await settle();
    expect(forAlice.changes.map((c) => c.new.body)).toEqual(["private"]);
    expect(forService.changes.map((c) => c.new.body)).toEqual(["private"]);
    expect(forBob.changes).toEqual([]);
    // anon may not even select the key: Realtime's error, never the record.
    expect(forAnon.changes).toEqual([
      expect.objectContaining({ eventType: "INSERT", new: {}, errors: ["Error 401: Unauthorized"] }),
    ]);

    // Realtime cannot check a deleted row against RLS: every subscriber learns its key, and only its key.
    await db()`delete from s26.notes where id = ${id}`;
    await until(() => forBob.changes.length > 0);
    expect(forBob.changes).toEqual([expect.objectContaining({ eventType: "DELETE", old: { id: Number(id) } })]);

    // A new token on the socket: the subscription acts with the new claims from then on.
    forBob.channel.socket.setAuth(alice.token);
    await new Promise((r) => setTimeout(r, 300));
    await db()`insert into s26.notes (owner, body) values (${alice.id}, 'after refresh')`;
    await until(() => forBob.changes.length > 1);
    expect(forBob.changes.at(-1)).toMatchObject({ eventType: "INSERT", new: { body: "after refresh" } });
  });

  it("filters by event, and by eq, neq, lt, lte, gt, gte and in, as Realtime parses them", async () => {
    const anon = client();
    const numbers = (filter?: string, event: Binding["event"] = "INSERT") =>
      listen(anon, { event, schema: "s26", table: "numbers", ...(filter ? { filter } : {}) });
    const cases: [string, number[]][] = [
      ["n=eq.3", [3]],
      ["n=neq.3", [1, 2, 4, 5]],
      ["n=lt.3", [1, 2]],
      ["n=lte.3", [1, 2, 3]],
      ["n=gt.3", [4, 5]],
      ["n=gte.3", [3, 4, 5]],
      ["n=in.(1,5)", [1, 5]],
      ["n=not.in.(1,5)", [2, 3, 4]],
      ['name=eq."two, too"', [2]],
      ["n=gt.1,n=lt.4", [2, 3]],
    ];
    const listeners = await Promise.all(cases.map(([filter]) => numbers(filter)));
    const [updates, deletes] = await Promise.all([numbers(undefined, "UPDATE"), numbers(undefined, "DELETE")]);
    const base = Math.floor(Math.random() * 1e6) * 10;
    for (const n of [1, 2, 3, 4, 5]) {
      await db()`insert into s26.numbers (id, n, name) values (${base + n}, ${n}, ${n === 2 ? "two, too" : `n${n}`})`;
    }
    await db()`update s26.numbers set name = 'changed' where id = ${base + 1}`;
    await db()`delete from s26.numbers where id = ${base + 1}`;
    await until(() => deletes.changes.length > 0 && listeners.every((l, i) => l.changes.length >= cases[i][1].length));
    await settle();
    cases.forEach(([filter, expected], i) => {
      expect(listeners[i].changes.map((c) => c.new.n), filter).toEqual(expected);
      expect(listeners[i].changes.every((c) => c.eventType === "INSERT")).toBe(true);
    });
    expect(updates.changes.map((c) => [c.eventType, c.new.name])).toEqual([["UPDATE", "changed"]]);
    expect(deletes.changes.map((c) => [c.eventType, c.old.id])).toEqual([["DELETE", base + 1]]);
  });

  it("delivers every published table of a schema to a binding without a table", async () => {
    const listener = await listen(client(), { event: "INSERT", schema: "s26" });
    const id = Math.floor(Math.random() * 1e9);
    await db()`insert into s26.numbers (id, n) values (${id}, 7)`;
    await db()`insert into s26.unpublished (id) values (${id})`;
    await until(() => listener.changes.length > 0);
    await settle();
    expect(listener.changes.map((c) => [c.table, c.new.id])).toEqual([["numbers", id]]);
  });

  it("names a table without a primary key with Realtime's error", async () => {
    const listener = await listen(client(), { event: "*", schema: "s26", table: "keyless" });
    await db()`insert into s26.keyless (name) values ('x')`;
    await until(() => listener.changes.length > 0);
    expect(listener.changes).toEqual([
      expect.objectContaining({ eventType: "INSERT", errors: ["Error 400: Bad Request, no primary key"] }),
    ]);
  });

  it("refuses what it cannot subscribe with Realtime's system error, and delivers nothing", async () => {
    const anon = client();
    const refusals: [Binding, string][] = [
      [
        { event: "*", schema: "s26", table: "unpublished" },
        "Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given " +
        "connect parameters: [event: *, schema: s26, table: unpublished, filters: [], select: nil]",
      ],
      [
        { event: "*", schema: "s26", table: "numbers", filter: "n=foo.3" },
        'Error parsing `filter` params: ["foo", "3"]',
      ],
      [
        { event: "INSERT", schema: "s26", table: "numbers", filter: "n=in.1,2" },
        "Error parsing `filter` params: `in` filter value must be wrapped by parentheses",
      ],
      [
        { event: "*", schema: "s26", table: "numbers", filter: "nope=eq.1" },
        "Unable to subscribe to changes with given parameters. An exception happened so please check your connect " +
        'parameters: [event: *, schema: s26, table: numbers, filters: [{"nope", "eq", "1", false}], select: nil]. ' +
        "Exception: ERROR P0001 (raise_exception) invalid column for filter nope",
      ],
    ];
    for (const [binding, message] of refusals) {
      const listener = await listen(anon, binding);
      // Realtime joins the channel (Broadcast and Presence still work) and says why postgres_changes does not.
      expect(listener.status).toBe("SUBSCRIBED");
      expect(listener.system).toEqual([
        { extension: "postgres_changes", status: "error", message, channel: expect.any(String) },
      ]);
    }
    const wrongType = await listen(anon, { event: "*", schema: "s26", table: "numbers", filter: "n=eq.three" });
    expect(wrongType.system[0]).toMatchObject({ status: "error" });
    expect(wrongType.system[0].message).toContain('invalid input syntax for type integer: "three"');
    const id = Math.floor(Math.random() * 1e9);
    await db()`insert into s26.numbers (id, n) values (${id}, 3)`;
    await db()`insert into s26.unpublished (id) values (${id})`;
    await settle();
    expect(await db()`select 1 from realtime.subscription where entity = 's26.unpublished'::regclass`).toEqual([]);
  });

  /** A Phoenix socket of its own (vsn 2.0.0), joined to a topic with `bindings`: the frames it receives. */
  async function rawJoin(bindings: Record<string, unknown>[]) {
    const socket = new WebSocket(
      `${stack().apiUrl.replace("http", "ws")}/realtime/v1/websocket?apikey=${stack().anonKey}&vsn=2.0.0`,
    );
    const frames: any[] = [];
    socket.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data))));
    await new Promise((resolve) => socket.addEventListener("open", resolve));
    const topic = `realtime:s26-raw-${randomUUID()}`;
    socket.send(JSON.stringify(["1", "1", topic, "phx_join", { config: { postgres_changes: bindings } }]));
    await until(() => frames.some((f) => f[3] === "system"));
    return { socket, frames, topic };
  }

  it("answers the join with the bindings and their ids, and sends each change under the ids it matches", async () => {
    const bindings = [
      { event: "INSERT", schema: "s26", table: "numbers", filter: "n=eq.42" },
      { event: "*", schema: "s26", table: "numbers" },
    ];
    const { socket, frames, topic } = await rawJoin(bindings);
    const [, , , , reply] = frames.find((f) => f[3] === "phx_reply");
    expect(reply.status).toBe("ok");
    const ids = reply.response.postgres_changes.map((b: any) => b.id);
    expect(reply.response.postgres_changes).toEqual(bindings.map((b, i) => ({ ...b, id: ids[i] })));
    expect(ids.every(Number.isInteger)).toBe(true);
    expect(ids[0]).not.toBe(ids[1]);

    const id = Math.floor(Math.random() * 1e9);
    await db()`insert into s26.numbers (id, n, name) values (${id}, 42, 'answer')`;
    await db()`insert into s26.numbers (id, n, name) values (${id + 1}, 41, 'other')`;
    await until(() => frames.filter((f) => f[3] === "postgres_changes").length >= 2);
    const changes = frames.filter((f) => f[3] === "postgres_changes");
    expect(changes.map((f) => [f[0], f[1], f[2]])).toEqual([[null, null, topic], [null, null, topic]]);
    expect(changes[0][4]).toEqual({
      ids: expect.arrayContaining(ids),
      data: {
        schema: "s26",
        table: "numbers",
        type: "INSERT",
        commit_timestamp: expect.any(String),
        columns: [{ name: "id", type: "int4" }, { name: "n", type: "int4" }, { name: "name", type: "text" }],
        record: { id, n: 42, name: "answer" },
        errors: null,
      },
    });
    expect(changes[0][4].ids).toHaveLength(2);
    expect(changes[1][4].ids).toEqual([ids[1]]);
    socket.close();
  });

  it("sends only the selected columns (and the key) to a binding with `select`", async () => {
    const { socket, frames } = await rawJoin([{ event: "INSERT", schema: "s26", table: "numbers", select: ["name"] }]);
    expect(frames.find((f) => f[3] === "system")[4]).toMatchObject({ status: "ok" });
    const id = Math.floor(Math.random() * 1e9);
    await db()`insert into s26.numbers (id, n, name) values (${id}, 5, 'picked')`;
    await until(() => frames.some((f) => f[3] === "postgres_changes"));
    const { data } = frames.find((f) => f[3] === "postgres_changes")[4];
    expect(data.record).toEqual({ id, name: "picked" });
    expect(data.columns).toEqual([{ name: "id", type: "int4" }, { name: "name", type: "text" }]);
    socket.close();
  });

  it("forgets a channel's subscriptions when it leaves", async () => {
    const listener = await listen(client(), { event: "*", schema: "s26", table: "numbers" });
    const count = async () => (await db()`select count(*)::int as n from realtime.subscription`)[0].n as number;
    const before = await count();
    await listener.channel.unsubscribe();
    await until(() => false, 200);
    expect(await count()).toBe(before - 1);
    await db()`insert into s26.numbers (id, n) values (${Math.floor(Math.random() * 1e9)}, 1)`;
    await settle();
    expect(listener.changes).toEqual([]);
  });
});

// The local PostgREST's schema cache follows the database as on Supabase: the
// event triggers Supabase installs (extensions.pgrst_ddl_watch and
// pgrst_drop_watch) send `NOTIFY pgrst, 'reload schema'` after DDL, so a table
// or function a migration adds answers at once, without a restart; an explicit
// NOTIFY reloads it too, and `NOTIFY pgrst, 'reload config'` reads the
// in-database `pgrst.*` settings again.
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { db, stack } from "../../support/api.ts";
import { eventually } from "../../support/wait.ts";

const rest = (path: string, init: RequestInit = {}) =>
  fetch(`${stack().apiUrl}/rest/v1${path}`, {
    ...init,
    headers: { apikey: stack().serviceRoleKey, ...(init.headers as Record<string, string>) },
  });

afterAll(async () => {
  await db().unsafe(`
    drop table if exists public.rest_cache_fresh, public.rest_cache_quiet;
    drop function if exists public.rest_cache_fn();
    drop schema if exists rest_cache_other cascade;
    alter role authenticator reset pgrst.db_schemas;
    notify pgrst, 'reload config';`);
});

describe("the schema cache", () => {
  it("has Supabase's event triggers, which notify pgrst after DDL and after a DROP", async () => {
    const triggers = await db()<{ evtname: string; evtevent: string; evtfoid: string }[]>`
      select t.evtname, t.evtevent, n.nspname || '.' || p.proname as evtfoid
        from pg_event_trigger t join pg_proc p on p.oid = t.evtfoid join pg_namespace n on n.oid = p.pronamespace
       where t.evtname in ('pgrst_ddl_watch', 'pgrst_drop_watch') order by t.evtname`;
    expect(triggers).toEqual([
      { evtname: "pgrst_ddl_watch", evtevent: "ddl_command_end", evtfoid: "extensions.pgrst_ddl_watch" },
      { evtname: "pgrst_drop_watch", evtevent: "sql_drop", evtfoid: "extensions.pgrst_drop_watch" },
    ]);
    const heard: string[] = [];
    const listener = postgres(stack().dbUrl, { max: 1, onnotice: () => {} });
    try {
      await listener.listen("pgrst", (payload) => heard.push(payload));
      await db().unsafe("create table public.rest_cache_quiet (id int)");
      await db().unsafe("drop table public.rest_cache_quiet");
      // Data changes are not DDL: no notification.
      await db().unsafe("select 1");
      await eventually(() => expect(heard).toEqual(["reload schema", "reload schema"]));
    } finally {
      await listener.end();
    }
  });

  it("answers a table and a function a migration just created, at once", async () => {
    expect((await rest("/rest_cache_fresh")).status).toBe(404);
    await db().begin(async (tx) => {
      await tx.unsafe("create table public.rest_cache_fresh (id int primary key, note text)");
      await tx.unsafe("insert into public.rest_cache_fresh values (1, 'fresh')");
      await tx.unsafe("grant select on public.rest_cache_fresh to service_role");
      await tx.unsafe("create function public.rest_cache_fn() returns int language sql stable return 42");
    });
    const read = await rest("/rest_cache_fresh?select=id,note");
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual([{ id: 1, note: "fresh" }]);
    const call = await rest("/rpc/rest_cache_fn");
    expect(call.status).toBe(200);
    expect(await call.json()).toBe(42);

    await db().unsafe("drop function public.rest_cache_fn()");
    await eventually(async () => expect((await rest("/rpc/rest_cache_fn")).status).toBe(404));
  });

  it("reloads on NOTIFY pgrst, 'reload schema' what changed without a DDL notification", async () => {
    // In replica mode event triggers do not fire: the cache does not hear of the new column.
    await db().begin(async (tx) => {
      await tx.unsafe("set local session_replication_role = replica");
      await tx.unsafe("alter table public.rest_cache_fresh add column added text default 'x'");
    });
    const stale = await rest("/rest_cache_fresh?select=added");
    expect(stale.status).toBe(400);
    expect(await stale.json()).toMatchObject({ code: "42703" });
    await db().unsafe("notify pgrst, 'reload schema'");
    await eventually(async () => {
      const fresh = await rest("/rest_cache_fresh?select=added");
      expect(fresh.status).toBe(200);
      expect(await fresh.json()).toEqual([{ added: "x" }]);
    });
  });

  it("reads pgrst.db_schemas again on NOTIFY pgrst, 'reload config'", async () => {
    await db().unsafe(`
      create schema rest_cache_other;
      grant usage on schema rest_cache_other to service_role;
      create table rest_cache_other.things (id int);
      insert into rest_cache_other.things values (7);
      grant select on rest_cache_other.things to service_role;`);
    const refused = await rest("/things", { headers: { "accept-profile": "rest_cache_other" } });
    expect(refused.status).toBe(406);
    expect(await refused.json()).toMatchObject({
      code: "PGRST106",
      message: "Invalid schema: rest_cache_other",
      hint: "Only the following schemas are exposed: public",
    });
    await db().unsafe(`alter role authenticator set pgrst.db_schemas = 'public, rest_cache_other'`);
    // The role setting alone changes nothing until PostgREST is told to read its configuration again.
    expect((await rest("/things", { headers: { "accept-profile": "rest_cache_other" } })).status).toBe(406);
    await db().unsafe("notify pgrst, 'reload config'");
    await eventually(async () => {
      const res = await rest("/things", { headers: { "accept-profile": "rest_cache_other" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-profile")).toBe("rest_cache_other");
      expect(await res.json()).toEqual([{ id: 7 }]);
    });
  });
});

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// The local Realtime endpoint (local/realtime) driven by the real realtime-js
// client that supabase-js ships: private channels authorized by the
// realtime.messages policies, delivery of realtime.send() from SQL, token
// refresh and expiry, send_binary() and broadcast_changes(), broadcast replay,
// public channels, client broadcasts, and the latency.
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompany, createUser, db, signIn, stack, uniqueEmail } from "../../support/api.ts";

// Topics of this file only, so that its policies grant nothing on the product's topics.
const READ_WRITE = "rt-test";
const READ_ONLY = "rt-test-ro";
const PASSWORD = "correct-horse-battery";

interface Received {
  kind: "broadcast" | "system";
  event?: string;
  payload: any;
  /** A broadcast's meta (its message id; `replayed` for a replayed one). */
  meta?: any;
  at: number;
}

interface Subscription {
  channel: RealtimeChannel;
  inbox: Received[];
  /** The statuses the subscribe callback reported, in order. */
  statuses: string[];
  /** Resolves with the first SUBSCRIBED, CHANNEL_ERROR or TIMED_OUT and its error message. */
  settled: Promise<{ status: string; error?: string }>;
}

const clients: SupabaseClient[] = [];

function client(): SupabaseClient {
  const supabase = createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  clients.push(supabase);
  return supabase;
}

/** An HS256 token signed with the stack's JWT secret, like one of Supabase Auth's legacy tokens. */
function mint(claims: Record<string, unknown>, secret = stack().jwtSecret): Promise<string> {
  return new SignJWT({ role: "authenticated", exp: Math.floor(Date.now() / 1000) + 3600, ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(secret));
}

function subscribe(
  supabase: SupabaseClient,
  topic: string,
  config: { private?: boolean; self?: boolean; ack?: boolean; replay?: Record<string, unknown> } = {},
) {
  const inbox: Received[] = [];
  const statuses: string[] = [];
  const broadcast = { self: config.self, ack: config.ack, replay: config.replay as never };
  const channel = supabase
    .channel(topic, { config: { private: config.private ?? false, broadcast } })
    .on("broadcast", { event: "*" }, (message) => {
      const { event, payload, meta } = message;
      inbox.push({ kind: "broadcast", event, payload, meta, at: performance.now() });
    })
    .on("system", {}, (payload) => inbox.push({ kind: "system", payload, at: performance.now() }));
  const settled = new Promise<{ status: string; error?: string }>((resolve) => {
    channel.subscribe((status, error) => {
      statuses.push(status);
      if (status !== "CLOSED") resolve({ status, error: error?.message });
    });
  });
  return { channel, inbox, statuses, settled } satisfies Subscription;
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 2_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function send(topic: string, event: string, payload: unknown, isPrivate = true) {
  return db()`select realtime.send(${db().json(payload as never)}, ${event}, ${topic}, ${isPrivate})`;
}

/** A user of the local identity provider and its ES256 access token. */
async function user(): Promise<{ id: string; email: string; token: string }> {
  const email = uniqueEmail("realtime");
  const { id } = await createUser(email, PASSWORD);
  return { id, email, token: (await signIn(email, PASSWORD)).access_token };
}

beforeAll(async () => {
  await db().unsafe(`
    drop policy if exists rt_protocol_test_select on realtime.messages;
    drop policy if exists rt_protocol_test_insert on realtime.messages;
    create policy rt_protocol_test_select on realtime.messages for select to authenticated
      using ((select realtime.topic()) in ('${READ_WRITE}:' || (select auth.uid())::text, '${READ_ONLY}:' || (select auth.uid())::text));
    create policy rt_protocol_test_insert on realtime.messages for insert to authenticated
      with check ((select realtime.topic()) = '${READ_WRITE}:' || (select auth.uid())::text);
  `);
});

afterAll(async () => {
  await Promise.all(clients.map((supabase) => supabase.removeAllChannels()));
  await db().unsafe(`
    drop policy if exists rt_protocol_test_select on realtime.messages;
    drop policy if exists rt_protocol_test_insert on realtime.messages;
  `);
});

describe("private channels", () => {
  it("delivers realtime.send() from SQL to an authorized join, in order and fast", async () => {
    const alice = await user();
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const topic = `${READ_WRITE}:${alice.id}`;
    const sub = subscribe(supabase, topic, { private: true });
    expect(await sub.settled).toEqual({ status: "SUBSCRIBED", error: undefined });

    const samples: number[] = [];
    for (let n = 0; n < 20; n++) {
      const sentAt = performance.now();
      await send(topic, "delivery_updated", { n });
      const message = await until(() => sub.inbox.find((m) => m.payload?.n === n), `message ${n}`);
      samples.push(message.at - sentAt);
    }
    const events = sub.inbox.filter((m) => m.kind === "broadcast");
    expect(events.map((m) => m.payload.n)).toEqual([...Array(20).keys()]);
    expect(events[0]).toMatchObject({ event: "delivery_updated", payload: { n: 0 } });

    samples.sort((a, b) => a - b);
    const [p50, p95, max] = [samples[10], samples[18], samples[19]].map((ms) => Number(ms.toFixed(1)));
    console.log(`realtime.send() -> realtime-js callback, 20 messages: p50 ${p50} ms, p95 ${p95} ms, max ${max} ms`);
    expect(p50).toBeLessThan(100);
  });

  it("refuses a join the select policy does not allow, with Realtime's reason, and delivers nothing", async () => {
    const [alice, mallory] = [await user(), await user()];
    const supabase = client();
    await supabase.realtime.setAuth(mallory.token);
    const topic = `${READ_WRITE}:${alice.id}`;
    const sub = subscribe(supabase, topic, { private: true });

    expect(await sub.settled).toEqual({
      status: "CHANNEL_ERROR",
      error: `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`,
    });
    await send(topic, "secret", { leaked: true });
    await pause(200);
    expect(sub.inbox).toEqual([]);
    await supabase.removeChannel(sub.channel);
  });

  it("refuses an anon join and a join with a token signed by another secret", async () => {
    const alice = await user();
    const topic = `${READ_WRITE}:${alice.id}`;

    const anonymousClient = client();
    const anonymous = subscribe(anonymousClient, topic, { private: true });
    expect((await anonymous.settled).error).toBe(
      `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`,
    );
    await anonymousClient.removeChannel(anonymous.channel);

    const forger = client();
    await forger.realtime.setAuth(await mint({ sub: alice.id }, "a-different-secret-of-at-least-32-characters"));
    const forged = subscribe(forger, topic, { private: true });
    expect(await forged.settled).toEqual({
      status: "CHANNEL_ERROR",
      error: "JwtSignatureError: Failed to validate JWT signature",
    });
    await forger.removeChannel(forged.channel);
  });

  it("authorizes with the app roles the access-token hook puts in the token", async () => {
    const company = await createCompany("Realtime Co");
    const topic = `company:${company.companyId}`;

    const ownerClient = client();
    await ownerClient.realtime.setAuth(company.owner.token);
    const owner = subscribe(ownerClient, topic, { private: true });
    expect((await owner.settled).status).toBe("SUBSCRIBED");

    const driverClient = client();
    await driverClient.realtime.setAuth(company.driver.token);
    const driver = subscribe(driverClient, topic, { private: true });
    expect((await driver.settled).status).toBe("CHANNEL_ERROR");

    await send(topic, "delivery_updated", { company: company.companyId });
    await until(() => owner.inbox.find((m) => m.event === "delivery_updated"), "the company broadcast");
    expect(driver.inbox).toEqual([]);
    await driverClient.removeChannel(driver.channel);
  });
});

describe("token refresh", () => {
  it("keeps the subscription working when supabase.realtime.setAuth() brings a new token", async () => {
    const alice = await user();
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const topic = `${READ_WRITE}:${alice.id}`;
    const sub = subscribe(supabase, topic, { private: true });
    expect((await sub.settled).status).toBe("SUBSCRIBED");

    // A second sign-in is a new session, so a different token for the same user.
    const { access_token: renewed } = await signIn(alice.email, PASSWORD);
    expect(renewed).not.toBe(alice.token);
    await supabase.realtime.setAuth(renewed);
    await pause(100);

    await send(topic, "after_refresh", { ok: true });
    await until(() => sub.inbox.find((m) => m.event === "after_refresh"), "the broadcast after the refresh");
    expect(sub.channel.state).toBe("joined");
    expect(sub.inbox.filter((m) => m.kind === "system")).toEqual([]);
  });

  it("closes the channel with Realtime's system message when the new token may not read the topic", async () => {
    const [alice, bob] = [await user(), await user()];
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const topic = `${READ_WRITE}:${alice.id}`;
    const sub = subscribe(supabase, topic, { private: true });
    expect((await sub.settled).status).toBe("SUBSCRIBED");

    await supabase.realtime.setAuth(bob.token);
    const system = await until(() => sub.inbox.find((m) => m.kind === "system"), "the system message");
    expect(system.payload).toEqual({
      extension: "system",
      status: "error",
      message: `You do not have permissions to read from this Channel topic: ${topic}`,
      channel: topic,
    });
    await until(() => (sub.statuses.includes("CLOSED") ? true : undefined), "the channel to close");
    expect(sub.channel.state).toBe("closed");

    await send(topic, "after_close", {});
    await pause(200);
    expect(sub.inbox.filter((m) => m.kind === "broadcast")).toEqual([]);
  });

  it("closes the channel when a refresh brings an expired token", async () => {
    const alice = await user();
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const sub = subscribe(supabase, `${READ_WRITE}:${alice.id}`, { private: true });
    expect((await sub.settled).status).toBe("SUBSCRIBED");

    await supabase.realtime.setAuth(await mint({ sub: alice.id, exp: Math.floor(Date.now() / 1000) - 30 }));
    const system = await until(() => sub.inbox.find((m) => m.kind === "system"), "the system message");
    expect(system.payload.message).toMatch(/^Token has expired (30|31|32) seconds ago$/);
    await until(() => (sub.statuses.includes("CLOSED") ? true : undefined), "the channel to close");
  });

  it("closes the channel when its token expires without a refresh", async () => {
    const alice = await user();
    const supabase = client();
    await supabase.realtime.setAuth(await mint({ sub: alice.id, exp: Math.floor(Date.now() / 1000) + 2 }));
    const sub = subscribe(supabase, `${READ_WRITE}:${alice.id}`, { private: true });
    expect((await sub.settled).status).toBe("SUBSCRIBED");

    const system = await until(() => sub.inbox.find((m) => m.kind === "system"), "the expiry", 4_000);
    expect(system.payload).toMatchObject({ extension: "system", status: "error" });
    expect(system.payload.message).toMatch(/^Token has expired \d seconds ago$/);
  });
});

describe("broadcasts from the database", () => {
  it("realtime.send() puts the message's id in the payload unless the payload has an id", async () => {
    const alice = await user();
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const topic = `${READ_WRITE}:${alice.id}`;
    const sub = subscribe(supabase, topic, { private: true });
    expect((await sub.settled).status).toBe("SUBSCRIBED");
    await send(topic, "plain", { n: 1 });
    await send(topic, "own", { id: "mine", n: 2 });
    await until(() => (sub.inbox.length >= 2 ? true : undefined), "two messages");
    const stored =
      await db()`select id::text, payload from realtime.messages where topic = ${topic} order by inserted_at`;
    expect(stored.map((r) => r.payload)).toEqual([{ n: 1, id: stored[0].id }, { id: "mine", n: 2 }]);
    expect(sub.inbox.map((m) => m.payload)).toEqual([{ n: 1, id: stored[0].id }, { id: "mine", n: 2 }]);
  });

  it("realtime.broadcast_changes() in a row trigger sends the change, and send_binary() bytes", async () => {
    const alice = await user();
    const topic = `${READ_WRITE}:${alice.id}`;
    const table = `rt_notes_${randomUUID().replaceAll("-", "")}`;
    await db().unsafe(`
      create table public.${table} (id int primary key, body text);
      create function public.${table}_broadcast() returns trigger language plpgsql as $$
      begin
        perform realtime.broadcast_changes('${topic}', tg_op, tg_op, tg_table_name, tg_table_schema, new, old);
        return null;
      end $$;
      create trigger broadcast after insert or update or delete on public.${table}
        for each row execute function public.${table}_broadcast();
    `);
    try {
      const supabase = client();
      await supabase.realtime.setAuth(alice.token);
      const sub = subscribe(supabase, topic, { private: true });
      expect((await sub.settled).status).toBe("SUBSCRIBED");
      await db().unsafe(`insert into public.${table} values (1, 'hello')`);
      await db().unsafe(`update public.${table} set body = 'bye' where id = 1`);
      await db().unsafe(`delete from public.${table} where id = 1`);
      await until(() => (sub.inbox.length >= 3 ? true : undefined), "three changes");
      expect(sub.inbox.map((m) => m.event)).toEqual(["INSERT", "UPDATE", "DELETE"]);
      expect(sub.inbox[0].payload).toMatchObject({
        operation: "INSERT",
        table,
        schema: "public",
        record: { id: 1, body: "hello" },
        old_record: null,
      });
      expect(sub.inbox[1].payload).toMatchObject({ record: { body: "bye" }, old_record: { body: "hello" } });
      expect(sub.inbox[2].payload).toMatchObject({ record: null, old_record: { id: 1, body: "bye" } });
      expect(typeof sub.inbox[0].payload.id).toBe("string");

      await db()`select realtime.send_binary(${Buffer.from([0, 1, 2, 255])}, 'bytes', ${topic})`;
      await until(() => (sub.inbox.length >= 4 ? true : undefined), "the binary message");
      expect(sub.inbox[3].event).toBe("bytes");
      expect([...new Uint8Array(sub.inbox[3].payload as ArrayBuffer)]).toEqual([0, 1, 2, 255]);
    } finally {
      await db().unsafe(`drop table public.${table}; drop function public.${table}_broadcast()`);
    }
  });

  it("refuses broadcast_changes for a statement trigger, as Realtime's function does", async () => {
    await expect(
      db()`select realtime.broadcast_changes('t', 'e', 'INSERT', 'x', 'public', null::record, null::record, 'STATEMENT')`,
    ).rejects.toThrow(
      "Failed to process the row: function can only be triggered for each row, not for each statement",
    );
  });
});

describe("broadcast replay", () => {
  /** A private join asking Realtime to replay the topic's stored broadcasts. */
  const replaying = (supabase: SupabaseClient, topic: string, replay: Record<string, unknown>) =>
    subscribe(supabase, topic, { private: true, replay });

  it("sends a private join the topic's broadcasts since `since`, the last `limit`, oldest first, marked replayed", async () => {
    const alice = await user();
    const topic = `${READ_WRITE}:${alice.id}`;
    await send(topic, "before", { n: 0 });
    await pause(20);
    const since = Date.now();
    await pause(20);
    for (const n of [1, 2, 3]) await send(topic, "stored", { n });
    await send(`${READ_ONLY}:${alice.id}`, "elsewhere", { n: 9 });
    await send(topic, "public", { n: 8 }, false);

    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    const all = replaying(supabase, topic, { since });
    expect(await all.settled).toEqual({ status: "SUBSCRIBED", error: undefined });
    await until(() => (all.inbox.length >= 3 ? true : undefined), "three replayed messages");
    expect(all.inbox.map((m) => [m.event, m.payload.n, m.meta.replayed])).toEqual([
      ["stored", 1, true],
      ["stored", 2, true],
      ["stored", 3, true],
    ]);
    const [{ id }] = await db()`select id::text from realtime.messages
      where topic = ${topic} and payload ->> 'n' = '1'`;
    expect([all.inbox[0].meta.id, all.inbox[0].payload.id]).toEqual([id, id]);
    // Live messages follow, not marked.
    await send(topic, "live", { n: 4 });
    await until(() => (all.inbox.length >= 4 ? true : undefined), "the live message");
    expect(all.inbox[3]).toMatchObject({ event: "live", payload: { n: 4 } });
    expect(all.inbox[3].meta?.replayed).toBeUndefined();

    const other = client();
    await other.realtime.setAuth(alice.token);
    const last = replaying(other, topic, { since, limit: 1 });
    expect((await last.settled).status).toBe("SUBSCRIBED");
    await until(() => (last.inbox.length >= 1 ? true : undefined), "one replayed message");
    await pause(200);
    expect(last.inbox.map((m) => [m.event, m.payload.n])).toEqual([["live", 4]]);
  });

  it("refuses parameters that are not whole numbers, and a caller who may not read the topic", async () => {
    const [alice, mallory] = [await user(), await user()];
    const topic = `${READ_WRITE}:${alice.id}`;
    const supabase = client();
    await supabase.realtime.setAuth(alice.token);
    expect(await replaying(supabase, topic, { since: "yesterday" }).settled).toEqual({
      status: "CHANNEL_ERROR",
      error: "UnableToReplayMessages: Replay params are not valid",
    });
    const intruder = client();
    await intruder.realtime.setAuth(mallory.token);
    expect(await replaying(intruder, topic, { since: 0 }).settled).toEqual({
      status: "CHANNEL_ERROR",
      error: `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`,
    });
  });

  it("refuses replay on a public channel (which realtime-js will not even send)", async () => {
    const socket = new WebSocket(
      `${stack().apiUrl.replace(/^http/, "ws")}/realtime/v1/websocket?apikey=${stack().anonKey}&vsn=1.0.0`,
    );
    const replies: any[] = [];
    socket.addEventListener("message", (event) => replies.push(JSON.parse(String(event.data))));
    await new Promise((resolve) => socket.addEventListener("open", resolve));
    socket.send(JSON.stringify({
      topic: `realtime:room-${randomUUID()}`,
      event: "phx_join",
      payload: { config: { private: false, broadcast: { replay: { since: 0 } } } },
      ref: "1",
    }));
    await until(() => replies.find((m) => m.event === "phx_reply"), "the join's reply");
    socket.close();
    expect(replies.find((m) => m.event === "phx_reply").payload).toEqual({
      status: "error",
      response: { reason: "UnableToReplayMessages: Replay is not allowed for public channels" },
    });
  });
});

describe("public channels", () => {
  it("delivers public messages to public joins only, and private ones to private joins only", async () => {
    const alice = await user();
    const topic = `${READ_WRITE}:${alice.id}`;
    const publicSub = subscribe(client(), topic);
    const privateClient = client();
    await privateClient.realtime.setAuth(alice.token);
    const privateSub = subscribe(privateClient, topic, { private: true });
    expect((await publicSub.settled).status).toBe("SUBSCRIBED");
    expect((await privateSub.settled).status).toBe("SUBSCRIBED");

    await send(topic, "for_everyone", { public: true }, false);
    await send(topic, "for_members", { public: false }, true);
    await until(() => publicSub.inbox.find((m) => m.event === "for_everyone"), "the public message");
    await until(() => privateSub.inbox.find((m) => m.event === "for_members"), "the private message");
    await pause(100);
    expect(publicSub.inbox.map((m) => m.event)).toEqual(["for_everyone"]);
    expect(privateSub.inbox.map((m) => m.event)).toEqual(["for_members"]);
  });

  it("relays client broadcasts to the other joins of the topic, and back with `self`", async () => {
    const topic = `room-${randomUUID()}`;
    const sender = subscribe(client(), topic, { self: true, ack: true });
    const listener = subscribe(client(), topic);
    expect((await sender.settled).status).toBe("SUBSCRIBED");
    expect((await listener.settled).status).toBe("SUBSCRIBED");

    const ack = await sender.channel.send({ type: "broadcast", event: "cursor", payload: { x: 1 } });
    expect(ack).toBe("ok");
    await until(() => listener.inbox.find((m) => m.event === "cursor"), "the relayed broadcast");
    await until(() => sender.inbox.find((m) => m.event === "cursor"), "the self broadcast");
    expect(listener.inbox[0].payload).toEqual({ x: 1 });
  });
});

describe("client broadcasts on private channels", () => {
  it("are relayed when the insert policy allows them, and dropped (no ack) when it does not", async () => {
    const alice = await user();
    const [a, b] = [client(), client()];
    await a.realtime.setAuth(alice.token);
    await b.realtime.setAuth(alice.token);

    const writable = `${READ_WRITE}:${alice.id}`;
    const sender = subscribe(a, writable, { private: true, ack: true });
    const listener = subscribe(b, writable, { private: true });
    expect((await sender.settled).status).toBe("SUBSCRIBED");
    expect((await listener.settled).status).toBe("SUBSCRIBED");
    expect(await sender.channel.send({ type: "broadcast", event: "hello", payload: { n: 1 } })).toBe("ok");
    await until(() => listener.inbox.find((m) => m.event === "hello"), "the allowed broadcast");

    const readOnly = `${READ_ONLY}:${alice.id}`;
    const roSender = subscribe(a, readOnly, { private: true, ack: true });
    const roListener = subscribe(b, readOnly, { private: true });
    expect((await roSender.settled).status).toBe("SUBSCRIBED");
    expect((await roListener.settled).status).toBe("SUBSCRIBED");
    expect(await roSender.channel.send({ type: "broadcast", event: "hello", payload: {} }, { timeout: 500 })).toBe(
      "timed out",
    );
    expect(roListener.inbox).toEqual([]);
  });
});

describe("the socket", () => {
  it("answers heartbeats", async () => {
    const supabase = client();
    const sub = subscribe(supabase, `room-${randomUUID()}`);
    await sub.settled;
    const statuses: string[] = [];
    supabase.realtime.onHeartbeat((status) => statuses.push(status));
    await supabase.realtime.sendHeartbeat();
    await until(() => (statuses.includes("ok") ? true : undefined), "the heartbeat reply");
  });

  it("refuses an upgrade without a known API key with Realtime's JSON error", async () => {
    const upgrade = (query: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`/realtime/v1/websocket?${query}`, stack().apiUrl);
        const req = request(url, {
          headers: {
            connection: "upgrade",
            upgrade: "websocket",
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            "sec-websocket-version": "13",
          },
        });
        req.on("response", (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("upgrade", (res, socket) => {
          socket.destroy();
          resolve({ status: res.statusCode ?? 0, body: "" });
        });
        req.on("error", reject);
        req.end();
      });

    expect(await upgrade("vsn=2.0.0")).toEqual({ status: 401, body: '{"error":"API key is missing"}' });
    const foreign = await mint({ role: "anon" }, "a-different-secret-of-at-least-32-characters");
    expect(await upgrade(`apikey=${foreign}&vsn=2.0.0`)).toEqual({
      status: 401,
      body: '{"error":"Failed to validate JWT signature"}',
    });
    expect((await upgrade(`apikey=${stack().anonKey}&vsn=2.0.0`)).status).toBe(101);
  });
});

// Presence and REST broadcast on the local Realtime, through the real
// supabase-js client. Presence is Realtime's as the realtime.messages policies
// allow it: the product grants it on no topic of its own (a presence payload
// says whatever its sender writes, so who is online comes from the positions
// the service accepted), so the presence tests arrange a policy of their own
// on `presence-test:{company_id}` topics, dropped afterwards; the company's
// topic refuses presence. httpSend() reaches subscribed channels when the
// broadcast INSERT policy allows it (the service role here; members have no
// such policy).
import type { RealtimeChannel } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { until } from "../../support/realtime.ts";
import { supabaseClient } from "../../support/supabase.ts";

type Client = ReturnType<typeof supabaseClient>;
const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.removeAllChannels()));
});

interface Joined {
  client: Client;
  channel: RealtimeChannel;
  status: string;
  error?: Error;
  joins: { key: string; metas: Record<string, unknown>[] }[];
  leaves: { key: string; metas: Record<string, unknown>[] }[];
  syncs: number;
  broadcasts: { event: string; payload: unknown }[];
}

/** A private channel on `topic` with presence on, as the company panel or the driver app opens it. */
async function join(topic: string, token: string, presenceKey = ""): Promise<Joined> {
  const client = supabaseClient();
  clients.push(client);
  await client.realtime.setAuth(token);
  const channel = client.channel(topic, { config: { private: true, presence: { key: presenceKey } } });
  const joined: Joined = { client, channel, status: "", joins: [], leaves: [], syncs: 0, broadcasts: [] };
  channel
    .on("presence", { event: "sync" }, () => joined.syncs++)
    .on("presence", { event: "join" }, ({ key, newPresences }) => joined.joins.push({ key, metas: newPresences }))
    .on("presence", { event: "leave" }, ({ key, leftPresences }) => joined.leaves.push({ key, metas: leftPresences }))
    .on("broadcast", { event: "*" }, (m) => joined.broadcasts.push({ event: m.event, payload: m.payload }));
  await new Promise<void>((resolve) =>
    channel.subscribe((status, error) => {
      if (status === "CLOSED") return;
      joined.status = status;
      joined.error = error;
      resolve();
    })
  );
  return joined;
}

let company: TestCompany;
let outsider: TestCompany;

// A topic whose presence the company's members read and its drivers track: what a project's policies would say.
const POLICIES = [
  `create policy test_presence_read on realtime.messages for select to authenticated
     using (extension = 'presence'
       and (select realtime.topic()) = 'presence-test:' || (select private.company_of(private.members()))::text)`,
  `create policy test_presence_track on realtime.messages for insert to authenticated
     with check (extension = 'presence'
       and (select realtime.topic()) = 'presence-test:' || (select private.company_id())::text
       and (select private.driver_id()) is not null)`,
];

beforeAll(async () => {
  [company, outsider] = await Promise.all([createCompany("Presence Co"), createCompany("Presence Outsider")]);
  for (const policy of POLICIES) await db().unsafe(policy);
});

afterAll(async () => {
  await db()`drop policy if exists test_presence_read on realtime.messages`;
  await db()`drop policy if exists test_presence_track on realtime.messages`;
});

describe("presence where the policies allow it", () => {
  it("shows the manager a member coming online and going offline, and the state on join", async () => {
    const topic = `presence-test:${company.companyId}`;
    const panel = await join(topic, company.owner.token);
    expect(panel.status).toBe("SUBSCRIBED");
    await until(() => panel.syncs > 0, 5_000);
    expect(panel.channel.presenceState()).toEqual({});

    const driverApp = await join(topic, company.driver.token, company.driver.driverId);
    expect(driverApp.status).toBe("SUBSCRIBED");
    expect(await driverApp.channel.track({ driver_id: company.driver.driverId, online_at: "2026-11-23T12:00:00Z" }))
      .toBe("ok");
    await until(() => panel.joins.length > 0, 5_000);
    expect(panel.joins).toEqual([
      {
        key: company.driver.driverId,
        metas: [expect.objectContaining({ driver_id: company.driver.driverId, online_at: "2026-11-23T12:00:00Z" })],
      },
    ]);
    expect(Object.keys(panel.channel.presenceState())).toEqual([company.driver.driverId]);

    // A manager joining later gets the state at once.
    const lateAdmin = await join(topic, company.admin.token);
    await until(() => Object.keys(lateAdmin.channel.presenceState()).length > 0, 5_000);
    expect(Object.keys(lateAdmin.channel.presenceState())).toEqual([company.driver.driverId]);

    expect(await driverApp.channel.untrack()).toBe("ok");
    await until(() => panel.leaves.length > 0, 5_000);
    expect(panel.leaves.map((l) => l.key)).toEqual([company.driver.driverId]);
    expect(panel.channel.presenceState()).toEqual({});

    // Closing the driver's socket is a leave too.
    expect(await driverApp.channel.track({ driver_id: company.driver.driverId })).toBe("ok");
    await until(() => panel.joins.length > 1, 5_000);
    driverApp.client.realtime.disconnect();
    await until(() => panel.leaves.length > 1, 5_000);
    expect(panel.leaves.map((l) => l.key)).toEqual([company.driver.driverId, company.driver.driverId]);
    expect(panel.channel.presenceState()).toEqual({});
  });

  it("refuses another company's users the topic, and lets only those the insert policy allows track", async () => {
    const topic = `presence-test:${company.companyId}`;
    for (const stranger of [outsider.owner, outsider.driver]) {
      const refused = await join(topic, stranger.token);
      expect(refused.status).toBe("CHANNEL_ERROR");
      expect(refused.error?.message).toContain(`You do not have permissions to read from this Channel topic: ${topic}`);
    }
    const panel = await join(topic, company.admin.token);
    expect(panel.status).toBe("SUBSCRIBED");
    expect(await panel.channel.track({ manager: true })).toBe("error");
  });
});

describe("the company's topic", () => {
  it("takes no presence: a driver cannot join it to announce anyone, a manager's track is refused", async () => {
    const topic = `company:${company.companyId}`;
    // A driver announcing another driver (the attacker's finding) has nowhere to do it.
    const spoofer = await join(topic, company.driver.token, company.driver2.driverId);
    expect(spoofer.status).toBe("CHANNEL_ERROR");
    const panel = await join(topic, company.owner.token);
    expect(panel.status).toBe("SUBSCRIBED");
    expect(await panel.channel.track({ driver_id: company.driver2.driverId })).toBe("error");
    await new Promise((r) => setTimeout(r, 200));
    expect(panel.channel.presenceState()).toEqual({});
  });
});

describe("REST broadcast (httpSend)", () => {
  it("delivers a service-role httpSend to the subscribed company panel, and refuses a member's", async () => {
    const topic = `company:${company.companyId}`;
    const panel = await join(topic, company.owner.token);
    expect(panel.status).toBe("SUBSCRIBED");

    const server = supabaseClient();
    clients.push(server);
    await server.realtime.setAuth(stack().serviceRoleKey);
    const sender = server.channel(topic, { config: { private: true } });
    await expect(sender.httpSend("panel_notice", { text: "hello" })).resolves.toEqual({ success: true });
    await until(() => panel.broadcasts.length > 0, 5_000);
    expect(panel.broadcasts).toEqual([{ event: "panel_notice", payload: { text: "hello" } }]);

    // The owner has no broadcast INSERT policy on its topic: 403, and nothing is delivered.
    const member = supabaseClient();
    clients.push(member);
    await member.realtime.setAuth(company.owner.token);
    await expect(member.channel(topic, { config: { private: true } }).httpSend("forged", { x: 1 }))
      .rejects.toThrow("Unauthorized");

    // A public httpSend reaches public channels of the topic, never the private ones.
    const publicSender = supabaseClient();
    clients.push(publicSender);
    await publicSender.realtime.setAuth(company.owner.token);
    await expect(publicSender.channel(topic).httpSend("public_notice", { y: 2 })).resolves.toEqual({ success: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(panel.broadcasts.map((b) => b.event)).toEqual(["panel_notice"]);
  });

  it("answers the batch endpoint that send() falls back to before subscribing", async () => {
    const topic = `company:${company.companyId}`;
    const panel = await join(topic, company.admin.token);
    const res = await fetch(`${stack().apiUrl}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: {
        apikey: stack().anonKey,
        authorization: `Bearer ${stack().serviceRoleKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ messages: [{ topic, event: "batch_notice", payload: { n: 1 }, private: true }] }),
    });
    expect(res.status).toBe(202);
    await until(() => panel.broadcasts.length > 0, 5_000);
    expect(panel.broadcasts).toEqual([{ event: "batch_notice", payload: { n: 1 } }]);
    const noKey = await fetch(`${stack().apiUrl}/realtime/v1/api/broadcast`, { method: "POST", body: "{}" });
    expect(noKey.status).toBe(401);
  });
});

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Web Push through the whole stack (docs/push.md): drivers register their browsers' subscriptions (the subscriptions
// of a Web Push service simulator, local/simulators/webpush.ts, run here as a loopback fake); a delivery offered to
// drivers wakes the push function (pg_net after the commit), which sends one message to each subscription of each
// offered driver, encrypted as RFC 8291 says (decrypted here with http_ece, another implementation than the
// sender's, with the browser's own keys) and signed with VAPID (checked by the simulator); a subscription the push
// service answers 404 or 410 for is removed.
import { Buffer } from "node:buffer";
import { createECDH } from "node:crypto";
import ece from "http_ece";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebPushSimulator, type WebPushSimulator } from "../../../local/simulators/webpush.ts";
import { api, createCompany, db, type DriverMember, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, SE } from "../../support/deliveries.ts";
import { type FakeHandle, startFake } from "../../support/fake-server.ts";
import { putLocation } from "../../support/locations.ts";

let pushService: FakeHandle;
const companies: TestCompany[] = [];

interface Subscription {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  private_key: string;
}

/** A browser's subscribe() at the push service. */
async function subscribe(label: string): Promise<Subscription> {
  const res = await fetch(`${pushService.url}/subscriptions`, { method: "POST", body: JSON.stringify({ label }) });
  expect(res.status).toBe(201);
  return await res.json();
}

const register = (driver: DriverMember, subscription: { endpoint: string; keys: object }) =>
  api("/api/v1/push-subscriptions", {
    method: "POST",
    token: driver.token,
    body: { endpoint: subscription.endpoint, expirationTime: null, keys: subscription.keys },
  });

const received = async () =>
  (await (await fetch(`${pushService.url}/messages`)).json()).messages as {
    subscription_id: string;
    body: string;
    ttl: number;
    urgency: string;
    topic: string | null;
    vapid_key: string;
    payload: string | null;
  }[];

async function waitFor<T>(what: string, check: () => Promise<T | false | null | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** RFC 8291 §4 / RFC 8188 §2.1: salt (16), rs (4), idlen (1), keyid (the sender's ephemeral P-256 key, 65). */
function header(body: Buffer) {
  return { salt: body.subarray(0, 16), rs: body.readUInt32BE(16), idlen: body[20], keyid: body.subarray(21, 86) };
}

function decrypt(body: Buffer, subscription: Subscription): any {
  const browser = createECDH("prime256v1");
  browser.setPrivateKey(Buffer.from(subscription.private_key, "base64url"));
  return JSON.parse(
    Buffer.from(ece.decrypt(body, { version: "aes128gcm", privateKey: browser, authSecret: subscription.keys.auth }))
      .toString("utf8"),
  );
}

beforeAll(async () => {
  let simulator: WebPushSimulator | undefined;
  pushService = await startFake("webpush", () => (simulator = createWebPushSimulator()), () => ({}));
  simulator!.publicUrl = pushService.url;
});

afterAll(async () => {
  await Promise.all(
    companies.map((company) =>
      api("/api/v1/dispatch/settings", { method: "PUT", token: company.owner.token, body: { mode: "broadcast" } })
    ),
  );
  await pushService.close();
});

describe("registering", () => {
  it("a driver registers, lists and removes its browsers; managers may not; the endpoint must be one pushes may reach", async () => {
    const company = await createCompany("Push Register Co");
    const key = await api("/api/v1/push/key", { token: company.driver.token });
    expect(key.status).toBe(200);
    expect(Buffer.from(key.body.public_key, "base64url")).toHaveLength(65);

    const browser = await subscribe("register");
    const made = await register(company.driver, browser);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ endpoint: browser.endpoint, last_sent_at: null });
    expect(made.body.keys).toBeUndefined();
    const listed = await api("/api/v1/push-subscriptions", { token: company.driver.token });
    expect(listed.body.items.map((s: any) => s.id)).toEqual([made.body.id]);
    expect((await api("/api/v1/push-subscriptions", { token: company.driver2.token })).body.items).toEqual([]);

    expect((await register(company.owner as DriverMember, browser)).status).toBe(403);
    expect((await api("/api/v1/push-subscriptions", { token: company.admin.token })).status).toBe(403);
    const internal = await register(company.driver, { ...browser, endpoint: "https://169.254.169.254/push/x" });
    expect(internal.status).toBe(400);
    expect(internal.body.detail[0].loc).toEqual(["body", "endpoint"]);
    const noKeys = await register(company.driver, { endpoint: browser.endpoint, keys: { p256dh: "x", auth: "y" } });
    expect(noKeys.status).toBe(400);

    const other = await api(`/api/v1/push-subscriptions/${made.body.id}`, {
      method: "DELETE",
      token: company.driver2.token,
    });
    expect(other.status).toBe(404);
    const removed = await api(`/api/v1/push-subscriptions/${made.body.id}`, {
      method: "DELETE",
      token: company.driver.token,
    });
    expect(removed.status).toBe(204);
    expect((await api("/api/v1/push-subscriptions", { token: company.driver.token })).body.items).toEqual([]);
  });
});

describe("an offer", () => {
  it("sends one push to each offered driver's subscriptions, RFC 8291-encrypted and VAPID-signed; 404/410 remove a subscription", async () => {
    const company = await createCompany("Push Offer Co");
    companies.push(company);
    const settings = await api("/api/v1/dispatch/settings", {
      method: "PUT",
      token: company.owner.token,
      body: { mode: "offer", offer_timeout_s: 60, offer_batch: 2 },
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    expect((await putLocation(company.driver, { lat: SE.lat + 1 / 111.195, lng: SE.lng })).status).toBe(200);
    expect((await putLocation(company.driver2, { lat: SE.lat + 2 / 111.195, lng: SE.lng })).status).toBe(200);

    const phone = await subscribe("phone");
    const tablet = await subscribe("tablet");
    const unsubscribed = await subscribe("unsubscribed");
    expect((await register(company.driver, phone)).status).toBe(201);
    expect((await register(company.driver, tablet)).status).toBe(201);
    expect((await register(company.driver2, unsubscribed)).status).toBe(201);
    // A browser that unsubscribed since (410 from now on), and an endpoint the push service never had (404).
    expect((await fetch(`${pushService.url}/subscriptions/${unsubscribed.id}`, { method: "DELETE" })).status).toBe(204);
    const unknown = { endpoint: `${pushService.url}/push/never-issued`, keys: phone.keys };
    expect((await register(company.driver2, unknown)).status).toBe(201);

    const created = await createInvoiceDelivery(company);
    const pushes = await waitFor("a push to the phone and the tablet", async () => {
      const mine = (await received()).filter((m) => [phone.id, tablet.id].includes(m.subscription_id));
      return mine.length >= 2 && mine;
    });
    const [offer] = await db()`select expires_at from public.dispatch_offers
      where delivery_id = ${created.id} and driver_id = ${company.driver.driverId}`;

    for (const subscription of [phone, tablet]) {
      const [message] = pushes.filter((m) => m.subscription_id === subscription.id);
      const body = Buffer.from(message.body, "base64");
      const { rs, idlen, keyid } = header(body);
      expect(rs).toBe(4096);
      expect(idlen).toBe(65);
      expect(keyid[0]).toBe(4); // an uncompressed P-256 point: the sender's ephemeral key
      expect(keyid.equals(Buffer.from(subscription.keys.p256dh, "base64url"))).toBe(false);
      const payload = decrypt(body, subscription);
      expect(payload).toMatchObject({ type: "delivery_offered", delivery_id: created.id });
      expect(Date.parse(payload.expires_at)).toBe(offer.expires_at.getTime());
      expect(JSON.parse(message.payload!)).toEqual(payload); // the simulator read the same
      expect(message.urgency).toBe("high");
      expect(message.ttl).toBeGreaterThan(50);
      expect(message.ttl).toBeLessThanOrEqual(60);
      expect(message.topic).toMatch(/^offer-/);
      expect(Buffer.from(message.vapid_key, "base64url")).toHaveLength(65);
    }
    // Both drivers were offered it; nothing reached the push service for driver2's gone subscriptions.
    expect((await received()).filter((m) => m.subscription_id === unsubscribed.id)).toEqual([]);
    const gone = await waitFor("driver2's subscriptions removed", async () => {
      const rows =
        await db()`select endpoint from public.push_subscriptions where driver_id = ${company.driver2.driverId}`;
      return rows.length === 0 && rows;
    });
    expect(gone).toEqual([]);
    const kept = await db()`select endpoint, last_sent_at from public.push_subscriptions
      where driver_id = ${company.driver.driverId} order by endpoint`;
    expect(kept.map((s) => s.endpoint).sort()).toEqual([phone.endpoint, tablet.endpoint].sort());
    expect(kept.every((s) => s.last_sent_at !== null)).toBe(true);

    // Exactly one each: the push function ran and nothing is left to send.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await received()).filter((m) => [phone.id, tablet.id].includes(m.subscription_id))).toHaveLength(2);
  });
});

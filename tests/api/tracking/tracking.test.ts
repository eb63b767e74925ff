// The recipient's tracking link and the live ETA: GET /api/v1/track/{token},
// the tracking topic joined with the anon key, and the ETA refreshed from the
// routing service (at most once per 30 s per delivery, never failing a
// location update).
import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, apiFrom, createCompany, db, type DriverMember, stack, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, deliveryIn, moveDelivery, PAULISTA } from "../../support/deliveries.ts";
import { routing } from "../../support/fakes.ts";
import { lastAcceptedAgo, putLocation as put } from "../../support/locations.ts";
import { listen, until } from "../../support/realtime.ts";
import { supabaseClient } from "../../support/supabase.ts";

/** A loopback address of its own (127.x.y.z), which the stack sees as another client. */
const someAddress = () => `127.${randomBytes(3).join(".")}`;
/** Each lookup from its own address unless told, so the per-client limit stays out of the way. */
const track = (token: string, address = someAddress(), headers: Record<string, string> = {}) =>
  apiFrom(address, `/api/v1/track/${encodeURIComponent(token)}`, headers);
const topicOf = (token: string) => `track:${createHash("sha256").update(token).digest("hex")}`;

const VIEW_KEYS = [
  "accepted_at",
  "cancelled_at",
  "completed_at",
  "created_at",
  "destination",
  "driver",
  "eta_at",
  "eta_refreshed_at",
  "handover_code",
  "position",
  "proof_photo_expires_at",
  "proof_photo_url",
  "realtime_topic",
  "remaining_m",
  "started_at",
  "status",
  "stops_before",
];

async function tokenOf(company: TestCompany, id: string): Promise<string> {
  const res = await api(`/api/v1/deliveries/${id}`, { token: company.owner.token });
  expect(res.status).toBe(200);
  return res.body.tracking_token;
}

const etaRow = async (id: string) =>
  (await db()<
    { eta_at: Date | null; remaining_m: number | null; eta_refreshed_at: Date | null; eta_requested_at: Date | null }[]
  >`
    select eta_at, remaining_m, eta_refreshed_at, eta_requested_at from public.deliveries where id = ${id}`)[0];

/**
 * Waits for the background refresh after a location update to have claimed (and finished with) the
 * delivery; when no claim is expected, gives it time to (wrongly) happen.
 */
async function settle(id: string, claimedAfter: Date, expectClaim = true) {
  const deadline = Date.now() + (expectClaim ? 5_000 : 700);
  while (Date.now() < deadline) {
    const row = await etaRow(id);
    if (row.eta_requested_at && row.eta_requested_at >= claimedAfter) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  await new Promise((r) => setTimeout(r, 300)); // the routing call and the record after the claim
}

const dbNow = async () => (await db()<{ now: Date }[]>`select clock_timestamp() as now`)[0].now;

describe("the tracking link", () => {
  let a: TestCompany;
  let b: TestCompany;
  beforeAll(async () => {
    [a, b] = await Promise.all([createCompany("Track A"), createCompany("Track B")]);
    await db()`update public.drivers set name = 'Ana Costa' where id = ${a.driver.driverId}`;
    await db()`update public.drivers set name = 'Bruno Silva' where id = ${b.driver.driverId}`;
  });

  it("every delivery has one, shown to its managers and never to drivers", async () => {
    const created = await createInvoiceDelivery(a);
    expect(created.tracking_token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(created.tracking_url).toBe(`/track/${created.tracking_token}`);
    for (const who of [a.admin, a.legacyAdmin]) {
      const res = await api(`/api/v1/deliveries/${created.id}`, { token: who.token });
      expect(res.body.tracking_token).toBe(created.tracking_token);
    }
    const offered = await api(`/api/v1/deliveries/${created.id}`, { token: a.driver.token });
    expect(offered.status).toBe(200);
    expect(offered.body.tracking_token).toBeNull();
    expect((await moveDelivery(a.driver, created.id, "accept")).body.tracking_url).toBeNull();
    expect((await createInvoiceDelivery(a)).tracking_token).not.toBe(created.tracking_token);
  });

  it("shows status, first name, position and ETA only while it should, and nothing else", async () => {
    const id = (await createInvoiceDelivery(a)).id;
    const token = await tokenOf(a, id);
    const pending = await track(token);
    expect(pending.status).toBe(200);
    expect(Object.keys(pending.body).sort()).toEqual(VIEW_KEYS);
    expect(pending.body).toMatchObject({
      status: "pending",
      driver: null,
      position: null,
      eta_at: null,
      remaining_m: null,
    });
    expect(pending.headers.get("cache-control")).toBe("no-store");
    expect(pending.body.realtime_topic).toBe(topicOf(token));

    await lastAcceptedAgo(a.driver);
    expect((await put(a.driver, { lat: -23.50, lng: -46.60 })).status).toBe(200); // before the pick-up
    expect((await moveDelivery(a.driver, id, "accept")).status).toBe(200);
    const accepted = await track(token);
    expect(accepted.body).toMatchObject({ status: "accepted", driver: { first_name: "Ana" }, position: null });
    expect(accepted.body.accepted_at).not.toBeNull();

    expect((await moveDelivery(a.driver, id, "start")).status).toBe(200);
    expect((await track(token)).body.position).toBeNull(); // the position from before the pick-up stays hidden

    await lastAcceptedAgo(a.driver);
    const since = await dbNow();
    expect((await put(a.driver, { lat: -23.5505, lng: -46.6333, heading: 45 })).status).toBe(200);
    await settle(id, since);
    const moving = await track(token);
    expect(moving.body).toMatchObject({
      status: "in_progress",
      driver: { first_name: "Ana" },
      position: { lat: -23.5505, lng: -46.6333, heading: 45 },
    });
    expect(moving.body.remaining_m).toBeGreaterThan(0);
    expect(Date.parse(moving.body.eta_at)).toBeGreaterThan(Date.now() - 1_000);
    expect(JSON.stringify(moving.body)).not.toMatch(/price|address|recipient|company|driver_id|Costa/);

    expect((await moveDelivery(a.driver, id, "complete")).status).toBe(200);
    const done = await track(token);
    expect(done.body).toMatchObject({ status: "completed", position: null, eta_at: null, remaining_m: null });
    expect(done.body.completed_at).not.toBeNull();
  });

  it("another company's delivery never appears", async () => {
    const idA = await deliveryIn(a, "in_progress", a.driver2);
    const idB = await deliveryIn(b, "in_progress");
    const [tokenA, tokenB] = [await tokenOf(a, idA), await tokenOf(b, idB)];
    await Promise.all([lastAcceptedAgo(a.driver2), lastAcceptedAgo(b.driver)]);
    expect((await put(b.driver, { lat: 10, lng: 10 })).status).toBe(200);
    const viewA = await track(tokenA);
    expect(viewA.body.position).toBeNull();
    expect(viewA.body.driver.first_name).not.toBe("Bruno");
    expect((await track(tokenB)).body.driver).toEqual({ first_name: "Bruno", vehicle: { type: "car", plate: null } });
    // Company B's managers cannot reach A's delivery, its token included.
    expect((await api(`/api/v1/deliveries/${idA}`, { token: b.owner.token })).status).toBe(404);
    const listB = await api("/api/v1/deliveries?limit=100", { token: b.owner.token });
    expect(listB.body.items.map((d: { tracking_token: string }) => d.tracking_token)).not.toContain(tokenA);
  });

  it("a wrong token is 404, in about the time a right one takes", async () => {
    const token = await tokenOf(a, await deliveryIn(a, "pending"));
    const wrong = [
      `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`,
      randomBytes(16).toString("base64url"),
      "x",
    ];
    for (const w of wrong) {
      const res = await track(w);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: "tracking link not found" });
    }
    // Interleaved so that load on the machine falls on both alike; medians, because one slow call says nothing.
    const timings: { hit: number[]; miss: number[] } = { hit: [], miss: [] };
    for (let i = 0; i < 40; i++) {
      for (const [kind, candidate] of [["hit", token], ["miss", randomBytes(16).toString("base64url")]] as const) {
        const started = performance.now();
        const res = await track(candidate);
        timings[kind].push(performance.now() - started);
        expect(res.status).toBe(kind === "hit" ? 200 : 404);
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const [hit, miss] = [median(timings.hit), median(timings.miss)];
    console.log(`tracking lookup medians over 40 calls each: hit ${hit.toFixed(2)} ms, miss ${miss.toFixed(2)} ms`);
    expect(Math.abs(hit - miss)).toBeLessThan(Math.max(5, 0.5 * Math.min(hit, miss)));
  });

  it("limits each client to 60 lookups a minute: then 429 with Retry-After", async () => {
    const address = someAddress();
    await db()`delete from private.tracking_requests where client = ${address}`;
    const token = await tokenOf(a, await deliveryIn(a, "pending"));
    for (let i = 0; i < 60; i++) expect((await track(i % 2 ? token : "nope", address)).status).toBe(i % 2 ? 200 : 404);
    const refused = await track(token, address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect((await track(token)).status).toBe(200); // another client is not held back
  });

  it("counts the address the platform saw: an X-Forwarded-For the client writes neither escapes nor blames", async () => {
    const address = someAddress();
    const victim = someAddress();
    const token = await tokenOf(a, await deliveryIn(a, "pending"));
    // The attacker writes a new address before each lookup, and then the victim's: the platform's hop is its own.
    for (let i = 0; i < 60; i++) {
      const rotated = { "x-forwarded-for": i === 59 ? victim : `198.51.100.${i}` };
      expect((await track(token, address, rotated)).status).toBe(200);
    }
    expect((await track(token, address, { "x-forwarded-for": "203.0.113.7" })).status).toBe(429);
    expect((await track(token, victim)).status).toBe(200);
    const [{ clients }] = await db()`select array_agg(client order by client) as clients from private.tracking_requests
                                     where client in (${address}, ${victim}, '203.0.113.7', '198.51.100.0')`;
    expect(clients).toEqual([address, victim].sort());
  });
});

describe("the tracking channel", () => {
  let a: TestCompany;
  beforeAll(async () => {
    a = await createCompany("Track Live");
  });

  it("anon joins it while the delivery is under way and follows the driver; nothing before the pick-up or after the end", async () => {
    const pendingToken = await tokenOf(a, await deliveryIn(a, "pending"));
    const refused = await listen(topicOf(pendingToken), stackAnonKey(), { client: supabaseClient() });
    expect(refused.status).toBe("CHANNEL_ERROR");

    const id = await deliveryIn(a, "accepted");
    const token = await tokenOf(a, id);
    const recipient = await listen(topicOf(token), stackAnonKey(), { client: supabaseClient() });
    expect(recipient.status).toBe("SUBSCRIBED");
    await lastAcceptedAgo(a.driver);
    expect((await put(a.driver, { lat: -23.54, lng: -46.62 })).status).toBe(200); // accepted, not yet picked up

    expect((await moveDelivery(a.driver, id, "start")).status).toBe(200);
    await lastAcceptedAgo(a.driver);
    const sent = await put(a.driver, { lat: -23.545, lng: -46.625, heading: 10 });
    expect(sent.status).toBe(200);
    await until(() => recipient.inbox.some((m) => m.event === "driver_location"));
    expect((await moveDelivery(a.driver, id, "complete")).status).toBe(200);
    await until(() => recipient.inbox.some((m) => m.payload.status === "completed"));
    await lastAcceptedAgo(a.driver);
    expect((await put(a.driver, { lat: -23.6, lng: -46.7 })).status).toBe(200); // after the end
    await new Promise((r) => setTimeout(r, 300));

    const positions = recipient.inbox.filter((m) => m.event === "driver_location").map((m) => m.payload);
    // With the id Realtime gives a message whose payload has none (realtime.send).
    expect(positions).toEqual([
      { lat: -23.545, lng: -46.625, heading: 10, updated_at: sent.body.updated_at, id: expect.any(String) },
    ]);
    const statuses = recipient.inbox.filter((m) => m.event === "tracking_updated").map((m) => m.payload.status);
    expect(statuses[0]).toBe("in_progress");
    expect(statuses.at(-1)).toBe("completed");
    for (const m of recipient.inbox) expect(JSON.stringify(m.payload)).not.toMatch(/price|address|recipient/);

    const late = await listen(topicOf(token), stackAnonKey(), { client: supabaseClient() });
    expect(late.status).toBe("CHANNEL_ERROR"); // ended: the topic no longer opens
  });
});

describe("the live ETA", () => {
  let a: TestCompany;
  let driver: DriverMember;
  let id: string;
  beforeAll(async () => {
    a = await createCompany("Track ETA");
    driver = a.driver;
    id = await deliveryIn(a, "in_progress");
  });
  afterEach(async () => {
    await routing.up();
    await routing.set("ok");
  });

  /** Sends a position as if 10 s had passed, and waits for the refresh it may start. */
  async function move(lat: number, lng: number, expectClaim = true) {
    await lastAcceptedAgo(driver);
    const since = await dbNow();
    const started = performance.now();
    const res = await put(driver, { lat, lng });
    const took = performance.now() - started;
    expect(res.status).toBe(200);
    await settle(id, since, expectClaim);
    return took;
  }

  it("is measured from the driver's position, at most once per 30 s and only after 100 m, and broadcast to the company", async () => {
    const owner = await listen(`company:${a.companyId}`, a.owner.token, { event: "delivery_updated" });
    await move(-23.5505, -46.6333);
    const first = await etaRow(id);
    expect(first.remaining_m).toBeGreaterThan(2_000); // Sé to Paulista by the simulator's roads
    expect(first.eta_at!.getTime()).toBeGreaterThan(first.eta_refreshed_at!.getTime());
    await until(() => owner.inbox.some((m) => m.payload.id === id && m.payload.remaining_m === first.remaining_m));
    expect(owner.inbox.find((m) => m.payload.id === id)?.payload.remaining_m).toBe(first.remaining_m);

    await move(-23.556, -46.645, false); // far, but within 30 s of the last request
    expect(await etaRow(id)).toEqual(first);

    await db()`update public.deliveries set eta_requested_at = eta_requested_at - interval '31 seconds' where id = ${id}`;
    const aged = await etaRow(id);
    await move(-23.5506, -46.6334, false); // 30 s later, but about 15 m from where it was measured
    expect(await etaRow(id)).toEqual(aged);

    await move(PAULISTA.lat + 0.002, PAULISTA.lng); // 30 s later and 220 m from the destination
    const near = await etaRow(id);
    expect(near.remaining_m).toBeLessThan(first.remaining_m!);
    expect(near.eta_refreshed_at!.getTime()).toBeGreaterThan(first.eta_refreshed_at!.getTime());
  });

  it("is claimed in the position's own transaction", async () => {
    await routing.down(); // nothing recorded after the claim, which would write the delivery again
    await db()`update public.deliveries set eta_requested_at = now() - interval '31 seconds' where id = ${id}`;
    await move(-23.60, -46.70); // 30 s later and kilometres away
    // The transaction that wrote the claim on the delivery is the one that wrote the position.
    const [row] = await db()<{ same: boolean }[]>`
      select d.xmin = l.xmin as same
      from public.deliveries d join public.driver_locations l on l.driver_id = d.driver_id where d.id = ${id}`;
    expect(row.same).toBe(true);
  });

  it("survives the routing service down, failing or slow: the location update answers at once, the last ETA stays", async () => {
    const before = await etaRow(id);
    const failures: [string, () => Promise<unknown>][] = [
      ["down", () => routing.down()],
      ["answering an error", () => routing.set("error")],
      ["slow", () => routing.slow(4_000)],
    ];
    let lat = -23.53;
    for (const [, fail] of failures) {
      await fail();
      await db()`update public.deliveries set eta_requested_at = now() - interval '31 seconds' where id = ${id}`;
      lat -= 0.01; // about 1.1 km each time
      const took = await move(lat, -46.64);
      expect(took).toBeLessThan(1_500);
      const after = await etaRow(id);
      expect([after.eta_at, after.remaining_m, after.eta_refreshed_at]).toEqual([
        before.eta_at,
        before.remaining_m,
        before.eta_refreshed_at,
      ]);
      expect(after.eta_requested_at!.getTime()).toBeGreaterThan(before.eta_requested_at!.getTime());
      await routing.up();
      await routing.set("ok");
    }
    await new Promise((r) => setTimeout(r, 2_500)); // the slow call's own timeout passes without a late write
    expect((await etaRow(id)).eta_refreshed_at).toEqual(before.eta_refreshed_at);

    await db()`update public.deliveries set eta_requested_at = now() - interval '31 seconds' where id = ${id}`;
    await move(lat - 0.01, -46.64);
    expect((await etaRow(id)).eta_refreshed_at!.getTime()).toBeGreaterThan(before.eta_refreshed_at!.getTime());
  });
});

const stackAnonKey = () => stack().anonKey;

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Dispatch through the whole stack (docs/dispatch.md): a delivery entering dispatch wakes the dispatch function
// (pg_net after the commit), which asks the routing fake's table and offers or assigns; decline and expiry (the
// pg_cron job every 2 s) pass it to the next driver; auto assigns; the routing service down, slow or failing
// never stops a dispatch; two drivers accepting one offer at once: one wins; the dispatch record; the settings.
// Where a test needs an offer's deadline to pass, it moves the deadline back instead of waiting.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { api, createCompany, db, type DriverMember, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, moveDelivery, SE } from "../../support/deliveries.ts";
import { routing } from "../../support/fakes.ts";
import { putLocation } from "../../support/locations.ts";
import { listen, until } from "../../support/realtime.ts";

/** A position `km` north of the deliveries' pickup (Sé). */
const north = (km: number) => ({ lat: SE.lat + km / 111.195, lng: SE.lng });

const companies: TestCompany[] = [];

/** A company dispatching with `settings`, its two drivers online 1 km and 2 km from the pickup. */
async function dispatchingCompany(settings: Record<string, unknown>): Promise<TestCompany> {
  const company = await createCompany("Dispatch Co");
  companies.push(company);
  const res = await api("/api/v1/dispatch/settings", { method: "PUT", token: company.owner.token, body: settings });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect((await putLocation(company.driver, north(1))).status).toBe(200);
  expect((await putLocation(company.driver2, north(2))).status).toBe(200);
  return company;
}

/** Waits (polling, 10 s at most) until `check` answers something truthy; answers it. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | false | null | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface OfferRow {
  driver_id: string;
  outcome: string | null;
  offered_at: Date;
  expires_at: Date;
  decided_at: Date | null;
}
const offers = (deliveryId: string) =>
  db()<OfferRow[]>`select driver_id, outcome, offered_at, expires_at, decided_at from public.dispatch_offers
    where delivery_id = ${deliveryId} order by offered_at`;
/** Waits until the delivery holds a live offer to `driver`; answers that offer. */
const offeredTo = (deliveryId: string, driver: DriverMember) =>
  waitFor(
    `an offer to ${driver.email}`,
    async () => (await offers(deliveryId)).find((o) => o.driver_id === driver.driverId && o.outcome === null),
  );
const dispatchRecord = (company: TestCompany, deliveryId: string) =>
  api(`/api/v1/deliveries/${deliveryId}/dispatch`, { token: company.owner.token });

beforeEach(async () => {
  await routing.reset();
});

afterAll(async () => {
  await routing.reset();
  // Back to broadcast: nothing this file left queued or offered keeps the dispatch function busy afterwards.
  await Promise.all(
    companies.map((company) =>
      api("/api/v1/dispatch/settings", { method: "PUT", token: company.owner.token, body: { mode: "broadcast" } })
    ),
  );
});

describe("offer", () => {
  it("offers the best driver within a second; a decline passes it to the next; only the offered driver sees it", async () => {
    const company = await dispatchingCompany({ mode: "offer", offer_timeout_s: 60 });
    const first = await listen(`driver:${company.driver.driverId}`, company.driver.token);
    const second = await listen(`driver:${company.driver2.driverId}`, company.driver2.token);
    const created = await createInvoiceDelivery(company);
    expect(created.dispatch_status).toBe("queued");

    const offer = await offeredTo(created.id, company.driver);
    const [{ pending_at }] =
      await db()`select created_at as pending_at from public.deliveries where id = ${created.id}`;
    expect(offer.offered_at.getTime() - pending_at.getTime()).toBeLessThan(1_000);
    expect((await routing.state()).tables).toEqual([3]); // one table call: the pickup and both drivers

    await until(() => first.inbox.some((m) => m.event === "delivery_offered"));
    const told = first.inbox.find((m) => m.event === "delivery_offered")!;
    expect(told.payload.id).toBe(created.id);
    expect(Date.parse(told.payload.expires_at)).toBe(offer.expires_at.getTime());
    expect(told.payload.tracking_token).toBeNull();
    expect(second.inbox.filter((m) => m.payload.id === created.id)).toEqual([]); // neither offered nor available

    const seen = await api(`/api/v1/deliveries/${created.id}`, { token: company.driver.token });
    expect(seen.status).toBe(200);
    expect(Date.parse(seen.body.offer_expires_at)).toBe(offer.expires_at.getTime());
    expect((await api(`/api/v1/deliveries/${created.id}`, { token: company.driver2.token })).status).toBe(404);
    const listed = await api("/api/v1/deliveries", { token: company.driver2.token });
    expect(listed.body.items.map((d: any) => d.id)).not.toContain(created.id);
    expect((await moveDelivery(company.driver2, created.id, "accept")).status).toBe(404);
    expect((await moveDelivery(company.driver2, created.id, "decline")).status).toBe(404);
    const managed = await api(`/api/v1/deliveries/${created.id}`, { token: company.admin.token });
    expect(managed.body).toMatchObject({ dispatch_status: "offered", offer_expires_at: null });

    const declined = await moveDelivery(company.driver, created.id, "decline");
    expect(declined.status, JSON.stringify(declined.body)).toBe(200);
    const next = await offeredTo(created.id, company.driver2);
    expect(next.offered_at.getTime() - (await offers(created.id))[0].decided_at!.getTime()).toBeLessThan(1_000);
    await until(() => second.inbox.some((m) => m.event === "delivery_offered"));
    expect((await moveDelivery(company.driver, created.id, "accept")).body).toEqual({
      detail: "the offer of this delivery was declined",
    });

    const accepted = await moveDelivery(company.driver2, created.id, "accept");
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      status: "accepted",
      driver_id: company.driver2.driverId,
      dispatch_status: "assigned",
    });
    expect((await offers(created.id)).map((o) => o.outcome)).toEqual(["declined", "accepted"]);
  });

  it("passes an offer whose deadline passed to the next driver within 5 s", async () => {
    const company = await dispatchingCompany({ mode: "offer", offer_timeout_s: 30 });
    const created = await createInvoiceDelivery(company);
    await offeredTo(created.id, company.driver);
    const deadline = new Date();
    await db()`update public.dispatch_offers set offered_at = ${deadline} - interval '30 seconds', expires_at = ${deadline}
      where delivery_id = ${created.id}`;

    const next = await offeredTo(created.id, company.driver2);
    expect(next.offered_at.getTime() - deadline.getTime()).toBeLessThan(5_000);
    const [expired] = await offers(created.id);
    expect(expired).toMatchObject({ outcome: "expired", decided_at: deadline });
    expect((await moveDelivery(company.driver, created.id, "accept")).body).toEqual({
      detail: "the offer of this delivery has expired",
    });

    // Nobody left: every driver may take it, and the dispatcher sees it unassigned.
    const everyone = await listen(`driver:${company.driver.driverId}`, company.driver.token);
    await db()`update public.dispatch_offers set offered_at = now() - interval '1 minute', expires_at = now()
      where delivery_id = ${created.id} and outcome is null`;
    await waitFor(
      "unassigned",
      async () =>
        (await api(`/api/v1/deliveries/${created.id}`, { token: company.owner.token })).body.dispatch_status ===
          "unassigned",
    );
    await until(() => everyone.inbox.some((m) => m.event === "delivery_available" && m.payload.id === created.id));
    expect(everyone.inbox.some((m) => m.event === "delivery_available")).toBe(true);
    expect((await moveDelivery(company.driver, created.id, "accept")).status).toBe(200);
  });

  it("of two drivers accepting the same offer at once, one wins", async () => {
    const company = await dispatchingCompany({ mode: "offer", offer_batch: 2 });
    const created = await createInvoiceDelivery(company);
    await offeredTo(created.id, company.driver);
    await offeredTo(created.id, company.driver2);
    const answers = await Promise.all([
      moveDelivery(company.driver, created.id, "accept"),
      moveDelivery(company.driver2, created.id, "accept"),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 422]);
    const winner = answers.find((a) => a.status === 200)!.body.driver_id;
    const outcomes = Object.fromEntries((await offers(created.id)).map((o) => [o.driver_id, o.outcome]));
    expect(Object.values(outcomes).sort()).toEqual(["accepted", "withdrawn"]);
    expect(outcomes[winner]).toBe("accepted");
  });
});

describe("auto", () => {
  it("assigns the best-ranked driver at once, who is told", async () => {
    const company = await dispatchingCompany({ mode: "auto" });
    const driverApp = await listen(`driver:${company.driver.driverId}`, company.driver.token);
    const created = await createInvoiceDelivery(company);
    const assigned = await waitFor("the assignment", async () => {
      const res = await api(`/api/v1/deliveries/${created.id}`, { token: company.owner.token });
      return res.body.status === "accepted" && res.body;
    });
    expect(assigned).toMatchObject({ driver_id: company.driver.driverId, dispatch_status: "assigned" });
    expect(Date.parse(assigned.accepted_at) - Date.parse(assigned.created_at)).toBeLessThan(1_000);
    await until(() => driverApp.inbox.some((m) => m.event === "delivery_updated" && m.payload.id === created.id));
    expect(driverApp.inbox.find((m) => m.event === "delivery_updated")!.payload).toMatchObject({
      id: created.id,
      status: "accepted",
    });

    // At its limit (1), the first driver is passed over for the next delivery.
    const second = await createInvoiceDelivery(company);
    const next = await waitFor("the second assignment", async () => {
      const res = await api(`/api/v1/deliveries/${second.id}`, { token: company.owner.token });
      return res.body.status === "accepted" && res.body;
    });
    expect(next.driver_id).toBe(company.driver2.driverId);
    const record = await dispatchRecord(company, second.id);
    expect(record.body.rounds[0].candidates.find((c: any) => c.driver_id === company.driver.driverId)).toMatchObject({
      rank: null,
      left_out: "at_limit",
      active_deliveries: 1,
    });
  });
});

describe("the routing service failing", () => {
  for (
    const [how, fail, error] of [
      ["down", () => routing.down(), "unreachable"],
      ["slower than a second", () => routing.slow(3_000), "timed out"],
      ["answering an error", () => routing.set("error"), "answered NoTable"],
    ] as const
  ) {
    it(`${how}: straight-line distance ranks, and the offer is still made`, async () => {
      const company = await dispatchingCompany({ mode: "offer" });
      // Created (its route measured) while the routing service works, for a window that opens in 3 hours: its
      // round waits. Then the service fails, and the window comes near (moved, rather than waited for).
      const start = Date.now() + 3 * 3_600_000;
      const created = await createInvoiceDelivery(company, {
        window_start: new Date(start).toISOString(),
        window_end: new Date(start + 3_600_000).toISOString(),
      });
      expect(await offers(created.id)).toEqual([]);
      await fail();
      const [{ due }] = await db()`
        with moved as (update public.deliveries set window_start = now() + interval '30 minutes' where id = ${created.id})
        update private.dispatch_queue set due_at = now() where delivery_id = ${created.id} returning due_at as due`;
      // The job every 2 seconds finds the round due and wakes the dispatch function.
      const offer = await offeredTo(created.id, company.driver);
      expect(offer.offered_at.getTime() - due.getTime()).toBeLessThan(4_000);
      const round = (await dispatchRecord(company, created.id)).body.rounds[0];
      expect(round).toMatchObject({ ranked_by: "straight_line", routing_error: error, outcome: "offered" });
      expect(round.candidates.map((c: any) => [c.driver_id, c.rank, c.duration_s])).toEqual([
        [company.driver.driverId, 1, null],
        [company.driver2.driverId, 2, null],
      ]);
    });
  }
});

describe("the dispatch record", () => {
  it("shows managers each round's candidates, with rank, distance, duration and why any was left out, and each offer", async () => {
    const company = await dispatchingCompany({ mode: "offer", max_distance_km: 5 });
    const far = await api("/api/v1/drivers", {
      token: company.owner.token,
      body: { name: "Far Driver", email: `far-${company.companyId}@test.example`, password: "correct-horse-battery" },
    });
    await db()`insert into public.driver_locations (driver_id, company_id, lat, lng)
      values (${far.body.id}, ${company.companyId}, ${north(8).lat}, ${north(8).lng})`;
    const created = await createInvoiceDelivery(company);
    await offeredTo(created.id, company.driver);
    expect((await moveDelivery(company.driver, created.id, "decline")).status).toBe(200);
    await offeredTo(created.id, company.driver2);

    const record = await dispatchRecord(company, created.id);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ delivery_id: created.id, dispatch_status: "offered" });
    const [first, second] = record.body.rounds;
    expect(first).toMatchObject({
      round: 1,
      attempt: 1,
      mode: "offer",
      ranked_by: "road_duration",
      outcome: "offered",
    });
    expect(first.candidates.map((c: any) => [c.name, c.rank, c.left_out])).toEqual([
      ["Driver driver", 1, null],
      ["Driver driver2", 2, null],
      ["Far Driver", null, "out_of_radius"],
    ]);
    const nearest = first.candidates[0];
    expect(nearest.distance_m).toBeGreaterThan(990);
    expect(nearest.distance_m).toBeLessThan(1_010);
    expect(nearest.duration_s).toBeGreaterThan(0);
    expect(nearest).toMatchObject({ completed_today: 0, active_deliveries: 0 });
    expect(second.candidates.map((c: any) => [c.name, c.rank, c.left_out])).toEqual([
      ["Driver driver2", 1, null],
      ["Driver driver", null, "offered_before"],
      ["Far Driver", null, "out_of_radius"],
    ]);
    expect(record.body.offers.map((o: any) => [o.name, o.round, o.outcome])).toEqual([
      ["Driver driver", 1, "declined"],
      ["Driver driver2", 2, null],
    ]);
    expect(Date.parse(record.body.offers[0].expires_at) - Date.parse(record.body.offers[0].offered_at))
      .toBeGreaterThan(59_000);

    expect((await api(`/api/v1/deliveries/${created.id}/dispatch`, { token: company.legacyAdmin.token })).status)
      .toBe(200);
    expect((await api(`/api/v1/deliveries/${created.id}/dispatch`, { token: company.driver.token })).status).toBe(403);
    const other = await createCompany("Other Co");
    expect((await dispatchRecord(other, created.id)).status).toBe(404);
  });
});

describe("settings", () => {
  it("are the owner's and the admin's, within their bounds, and broadcast by default", async () => {
    const company = await createCompany("Settings Co");
    companies.push(company);
    const initial = await api("/api/v1/dispatch/settings", { token: company.admin.token });
    expect(initial.body).toEqual({
      mode: "broadcast",
      offer_timeout_s: 60,
      offer_batch: 1,
      max_active_per_driver: 1,
      max_distance_km: 20,
    });
    const changed = await api("/api/v1/dispatch/settings", {
      method: "PUT",
      token: company.admin.token,
      body: { mode: "auto", max_distance_km: 7.5 },
    });
    expect(changed.body).toEqual({ ...initial.body, mode: "auto", max_distance_km: 7.5 });
    const refused = await api("/api/v1/dispatch/settings", {
      method: "PUT",
      token: company.owner.token,
      body: { offer_timeout_s: 5, mode: "nearest" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail.map((d: any) => d.loc)).toEqual([["body", "mode"], ["body", "offer_timeout_s"]]);
    for (const who of [company.driver, company.legacyAdmin]) {
      expect((await api("/api/v1/dispatch/settings", { token: who.token })).status).toBe(403);
      expect(
        (await api("/api/v1/dispatch/settings", { method: "PUT", token: who.token, body: { mode: "offer" } })).status,
      )
        .toBe(403);
    }
    expect((await api("/api/v1/dispatch/settings", { token: company.owner.token })).body.mode).toBe("auto");
  });

  it("broadcast, the default, shows a delivery to every driver at once, as before", async () => {
    const company = await createCompany("Broadcast Co");
    const apps = await Promise.all(
      [company.driver, company.driver2].map((d) => listen(`driver:${d.driverId}`, d.token)),
    );
    const created = await createInvoiceDelivery(company);
    expect(created.dispatch_status).toBeNull();
    for (const app of apps) await until(() => app.inbox.some((m) => m.event === "delivery_available"));
    for (const app of apps) {
      expect(app.inbox.map((m) => [m.event, m.payload.id])).toEqual([["delivery_available", created.id]]);
    }
    expect((await dispatchRecord(company, created.id)).body).toEqual({
      delivery_id: created.id,
      dispatch_status: null,
      rounds: [],
      offers: [],
    });
  });
});

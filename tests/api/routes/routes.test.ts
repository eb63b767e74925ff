// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Routes through the whole stack (docs/routes.md): plans with windows and capacity, each checked by the independent
// validator against the problem rebuilt here from the routing fake's own numbers; what cannot be served unassigned
// with its reason; VROOM's request and answer through a loopback fake, and VROOM down, slow, failing or wrong ending
// with the built-in planner within the budget; a dispatcher's order with its violations, and a pickup after its
// drop-off refused; publish and the driver's view; a plan as a job; insertion into live routes by dispatch mode
// `routes`; `stops_before` on the tracking link; vehicles and sizes.
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkPlan } from "../../../functions/_shared/plan-check.ts";
import { buildProblem, Places, type PlanDelivery, type PlannedVehicle } from "../../../functions/api/plan-problem.ts";
import { createRoutingSimulator } from "../../../local/simulators/routing.ts";
import { api, createCompany, db, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, moveDelivery, SE } from "../../support/deliveries.ts";
import { optimization, routing } from "../../support/fakes.ts";
import { putLocation } from "../../support/locations.ts";
import { listen, until } from "../../support/realtime.ts";

/** `km` north and `east` km east of Sé. */
const at = (km: number, east = 0) => ({ lat: SE.lat + km / 111.195, lng: SE.lng + east / 101.9 });
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

let company: TestCompany;

beforeAll(async () => {
  company = await createCompany("Routes Co");
});

afterEach(async () => {
  await optimization.reset();
  await routing.reset();
});

afterAll(async () => {
  await optimization.reset();
});

/** An invoice delivery from Sé to `destination`, with `extra` fields (size, window...). */
async function delivery(destination: { lat: number; lng: number }, extra: Record<string, unknown> = {}, c = company) {
  return await createInvoiceDelivery(c, { destination, ...extra });
}

const plan = (body: Record<string, unknown>, c = company) => api("/api/v1/routes/plan", { token: c.owner.token, body });

/** A shift from now for two hours, with a start at Sé. */
const shift = (driverId: string, extra: Record<string, unknown> = {}) => ({
  driver_id: driverId,
  start: SE,
  shift_start: inMinutes(0),
  shift_end: inMinutes(120),
  ...extra,
});

/** The matrix the routing fake gives for `points`, computed by the same simulator in this process. */
async function matrixOf(points: { lat: number; lng: number }[]) {
  const coordinates = points.map((p) => `${p.lng.toFixed(6)},${p.lat.toFixed(6)}`).join(";");
  const res = await createRoutingSimulator().fetch(
    new Request(`http://sim/table/v1/driving/${coordinates}?annotations=duration,distance`),
  );
  const body = await res.json() as { durations: number[][]; distances: number[][] };
  const round = (m: number[][]) => m.map((row) => row.map((v) => Math.round(v)));
  return { durations: round(body.durations), distances: round(body.distances) };
}

/** Every route of a plan answer checked by the validator against the problem rebuilt from the request. */
async function expectValid(answer: any, vehicles: PlannedVehicle[], deliveries: any[]) {
  const planned: PlanDelivery[] = deliveries.map((d) => ({
    id: d.id,
    status: d.status,
    origin: d.origin,
    destination: d.destination,
    window_start: d.window_start,
    window_end: d.window_end,
    size: d.size,
    service_s: d.service_s,
  }));
  const places = new Places();
  vehicles.forEach((v) => places.of(v.start));
  planned.forEach((d) => {
    places.of(d.origin);
    places.of(d.destination);
  });
  const built = buildProblem(vehicles, planned, places, await matrixOf(places.points), { exclude: false });
  const routes = answer.routes.map((route: any) => ({
    vehicle: route.driver_id,
    steps: route.stops.map((s: any) => ({ type: s.kind === "pickup" ? "pickup" : "delivery", id: s.delivery_id })),
  }));
  const checked = checkPlan(built.problem, {
    routes,
    unassigned: answer.unassigned.map((u: any) => ({ id: u.delivery_id })),
  });
  expect(checked.violations).toEqual([]);
  expect(checked.valid).toBe(true);
}

const vehicleOf = (driverId: string, request: any, capacity: number): PlannedVehicle => ({
  driver_id: driverId,
  start: request.start,
  end: null,
  shift_start: Date.parse(request.shift_start),
  shift_end: Date.parse(request.shift_end),
  capacity,
});

describe("planning", () => {
  it("plans deliveries with windows and capacity into draft routes that keep every constraint", async () => {
    const made = [
      await delivery(at(1), { size: 2 }),
      await delivery(at(2), { size: 2, window_start: inMinutes(10), window_end: inMinutes(60) }),
      await delivery(at(0, 2), { size: 2, service_s: 300 }),
      await delivery(at(-1, 1), { size: 2, window_end: inMinutes(45) }),
      await delivery(at(1.5, -1), { size: 3 }),
      await delivery(at(-2), { size: 1 }),
    ];
    expect(made[2]).toMatchObject({ size: 2, service_s: 300 });
    expect(made[5]).toMatchObject({ size: 1, service_s: 120 });
    const drivers = [shift(company.driver.driverId, { capacity: 4 }), shift(company.driver2.driverId, { capacity: 4 })];
    const res = await plan({ delivery_ids: made.map((d) => d.id), drivers });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.engine).toBe("builtin");
    expect(res.body.engine_error).toBeTruthy(); // the VROOM fake fails by default
    expect(res.body.computed_ms).toBeGreaterThanOrEqual(0);
    const placed = res.body.routes.flatMap((r: any) => r.stops.map((s: any) => s.delivery_id));
    const unassigned = res.body.unassigned.map((u: any) => u.delivery_id);
    expect(new Set([...placed, ...unassigned])).toEqual(new Set(made.map((d) => d.id)));
    expect(unassigned).toEqual([]);
    for (const route of res.body.routes) {
      expect(route).toMatchObject({ status: "draft", engine: "builtin", capacity: 4, violations: [] });
      expect(route.stops.map((s: any) => s.seq)).toEqual(route.stops.map((_: any, i: number) => i + 1));
      expect(route.stops.every((s: any) => s.arrival_at && s.status === "pending")).toBe(true);
    }
    await expectValid(
      res.body,
      drivers.map((d) => vehicleOf(d.driver_id, d, 4)),
      made,
    );
    // A draft leaves its deliveries pending, and a delivery is in one live route only.
    expect((await api(`/api/v1/deliveries/${made[0].id}`, { token: company.owner.token })).body.status).toBe("pending");
    const again = await plan({ delivery_ids: [made[0].id], drivers });
    expect(again.status).toBe(409);
    for (const route of res.body.routes) {
      expect((await api(`/api/v1/routes/${route.id}/cancel`, { token: company.owner.token, body: {} })).status)
        .toBe(200);
    }
  });

  it("leaves an impossible window and an oversized delivery unassigned, with their reasons", async () => {
    const far = await delivery(at(40), { window_end: inMinutes(5) });
    const big = await delivery(at(1), { size: 50 });
    const fine = await delivery(at(1.2));
    const res = await plan({
      delivery_ids: [far.id, big.id, fine.id],
      drivers: [shift(company.driver.driverId, { capacity: 10 })],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.unassigned).toEqual(expect.arrayContaining([
      { delivery_id: far.id, reason: "window" },
      { delivery_id: big.id, reason: "capacity" },
    ]));
    expect(res.body.routes).toHaveLength(1);
    expect(res.body.routes[0].stops.map((s: any) => [s.delivery_id, s.kind])).toEqual([
      [fine.id, "pickup"],
      [fine.id, "dropoff"],
    ]);
    await api(`/api/v1/routes/${res.body.routes[0].id}/cancel`, { token: company.owner.token, body: {} });
    await moveDelivery(company.owner, far.id, "cancel");
    await moveDelivery(company.owner, big.id, "cancel");
  });

  it("refuses bad input with 4xx: duplicate drivers, another company's driver, a driver without a position", async () => {
    const d = await delivery(at(1));
    expect((await plan({ delivery_ids: [d.id], drivers: [] })).status).toBe(400);
    const twice = await plan({
      delivery_ids: [d.id],
      drivers: [shift(company.driver.driverId), shift(company.driver.driverId)],
    });
    expect(twice.status).toBe(400);
    const other = await createCompany("Other Routes Co");
    expect((await plan({ delivery_ids: [d.id], drivers: [shift(other.driver.driverId)] })).status).toBe(404);
    expect((await plan({ delivery_ids: [d.id], drivers: [shift(company.driver.driverId)] }, other)).status).toBe(404);
    const noStart = await plan({ delivery_ids: [d.id], drivers: [{ driver_id: other.driver2.driverId }] }, other);
    expect(noStart.status).toBe(404);
    const unknownStart = await plan({ delivery_ids: [d.id], drivers: [{ driver_id: company.driver2.driverId }] });
    expect(unknownStart.status).toBe(422);
    expect(unknownStart.body.detail).toBe(`driver ${company.driver2.driverId} has no known position: give its start`);
    expect((await plan({ drivers: [shift(company.driver.driverId)], max_seconds: 61 })).status).toBe(400);
    expect((await api("/api/v1/routes/plan", { token: company.driver.token, body: {} })).status).toBe(403);
    expect((await api("/api/v1/routes/plan", { token: company.legacyAdmin.token, body: {} })).status).toBe(403);
    await moveDelivery(company.owner, d.id, "cancel");
  });
});

describe("the engine", () => {
  it("asks VROOM with its input (vehicles, shipments, the table's matrices) and uses its answer", async () => {
    await optimization.set("sequential");
    const first = await delivery(at(2), { size: 2, window_end: inMinutes(90) });
    const second = await delivery(at(0.5), { service_s: 200 });
    const before = (await routing.state()).tables.length;
    const res = await plan({ delivery_ids: [first.id, second.id], drivers: [shift(company.driver.driverId)] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.engine).toBe("vroom");
    expect(res.body.engine_error).toBeUndefined();
    // One table call, every place to every place.
    const tables = (await routing.state()).tables.slice(before);
    expect(tables).toEqual([3]); // Sé (the start and both pickups) and the two drop-offs
    const input = (await optimization.state()).last as any;
    expect(input.vehicles).toEqual([
      { id: 1, start_index: 0, capacity: [20], time_window: [0, expect.any(Number)] },
    ]);
    expect(input.vehicles[0].time_window[1]).toBeGreaterThan(7100);
    expect(input.shipments).toEqual([
      {
        amount: [2],
        pickup: { id: 1, location_index: 0, service: 60 },
        delivery: { id: 1, location_index: 1, service: 120, time_windows: [[0, expect.any(Number)]] },
      },
      {
        amount: [1],
        pickup: { id: 2, location_index: 0, service: 60 },
        delivery: { id: 2, location_index: 2, service: 200 },
      },
    ]);
    expect(input.matrices.car.durations).toHaveLength(3);
    expect(input.matrices.car.distances[0][1]).toBeGreaterThan(input.matrices.car.durations[0][1]);
    // VROOM's order (the fake's: each pickup then its delivery, as sent) is the route's.
    expect(res.body.routes).toHaveLength(1);
    expect(res.body.routes[0].engine).toBe("vroom");
    expect(res.body.routes[0].stops.map((s: any) => `${s.kind}:${s.delivery_id}`)).toEqual([
      `pickup:${first.id}`,
      `dropoff:${first.id}`,
      `pickup:${second.id}`,
      `dropoff:${second.id}`,
    ]);
    await api(`/api/v1/routes/${res.body.routes[0].id}/cancel`, { token: company.owner.token, body: {} });
  });

  for (
    const [fault, make, error] of [
      ["down", () => optimization.down(), /unreachable/],
      ["slow", () => optimization.slow(20_000), /timed out/],
      ["failing (HTTP 500)", () => optimization.set("fail"), /HTTP 500/],
      ["answering an error", () => optimization.set("error"), /code 3/],
      ["answering a plan that breaks a constraint", () => optimization.set("wrong"), /breaks a constraint/],
    ] as const
  ) {
    it(`plans with the built-in planner within the budget when VROOM is ${fault}`, async () => {
      await make();
      const d = await delivery(at(1.1));
      const started = Date.now();
      // A budget of 1 s: VROOM gets half of it, the built-in planner the rest (it spends all it is given).
      const res = await plan({ delivery_ids: [d.id], drivers: [shift(company.driver.driverId)], max_seconds: 1 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(res.body.engine).toBe("builtin");
      expect(res.body.engine_error).toMatch(error);
      expect(res.body.routes[0].stops).toHaveLength(2);
      await api(`/api/v1/routes/${res.body.routes[0].id}/cancel`, { token: company.owner.token, body: {} });
    });
  }
});

describe("a dispatcher's order, publish, cancel", () => {
  it("times a manual order and answers its violations; refuses a pickup after its drop-off", async () => {
    const a = await delivery(at(1), { size: 3 });
    const b = await delivery(at(1.5), { size: 3 });
    const res = await plan({ delivery_ids: [a.id, b.id], drivers: [shift(company.driver.driverId, { capacity: 4 })] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.routes).toHaveLength(1);
    const route = res.body.routes[0];
    const put = (stops: { delivery_id: string; kind: string }[], token = company.owner.token) =>
      api(`/api/v1/routes/${route.id}/stops`, { method: "PUT", token, body: { stops } });
    const both = await put([
      { delivery_id: a.id, kind: "pickup" },
      { delivery_id: b.id, kind: "pickup" },
      { delivery_id: a.id, kind: "dropoff" },
      { delivery_id: b.id, kind: "dropoff" },
    ]);
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    expect(both.body.violations).toEqual([expect.objectContaining({ seq: 2, kind: "capacity" })]);
    expect(both.body.stops.map((s: any) => s.kind)).toEqual(["pickup", "pickup", "dropoff", "dropoff"]);
    const arrivals = both.body.stops.map((s: any) => Date.parse(s.arrival_at));
    expect([...arrivals].sort((x, y) => x - y)).toEqual(arrivals);

    const backwards = await put([
      { delivery_id: a.id, kind: "dropoff" },
      { delivery_id: a.id, kind: "pickup" },
      { delivery_id: b.id, kind: "pickup" },
      { delivery_id: b.id, kind: "dropoff" },
    ]);
    expect(backwards.status).toBe(422);
    expect(backwards.body.detail).toBe(`the pickup of delivery ${a.id} comes after its drop-off`);
    expect((await put([], company.driver.token)).status).toBe(403);

    // Bad input is a 4xx: an unknown route, another company's delivery, a malformed body.
    expect(
      (await api(`/api/v1/routes/${randomUUID()}/stops`, {
        method: "PUT",
        token: company.owner.token,
        body: { stops: [] },
      })).status,
    ).toBe(404);
    expect(
      (await put([{ delivery_id: randomUUID(), kind: "pickup" }, {
        delivery_id: randomUUID(),
        kind: "dropoff",
      }])).status,
    ).toBe(422);
    const stranger = randomUUID();
    const unknown = await put([{ delivery_id: stranger, kind: "pickup" }, { delivery_id: stranger, kind: "dropoff" }]);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe(`delivery not found: ${stranger}`);
    expect((await put([{ delivery_id: "nope", kind: "pickup" }])).status).toBe(400);
    expect((await put([{ delivery_id: a.id, kind: "teleport" }])).status).toBe(400);
    expect((await api(`/api/v1/routes/not-a-uuid`, { token: company.owner.token })).status).toBe(400);

    // Published with its violations (the dispatcher decides): both deliveries are the driver's, in order.
    const told = await listen(`driver:${company.driver.driverId}`, company.driver.token);
    expect(told.status).toBe("SUBSCRIBED");
    const published = await api(`/api/v1/routes/${route.id}/publish`, { token: company.owner.token, body: {} });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(published.body.status).toBe("published");
    for (const d of [a, b]) {
      const seen = await api(`/api/v1/deliveries/${d.id}`, { token: company.owner.token });
      expect(seen.body).toMatchObject({ status: "accepted", driver_id: company.driver.driverId });
    }
    const mine = await api("/api/v1/routes", { token: company.driver.token });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((r: any) => r.id)).toEqual([route.id]);
    expect((await api(`/api/v1/routes/${route.id}`, { token: company.driver2.token })).status).toBe(404);
    expect((await api(`/api/v1/routes/${route.id}/publish`, { token: company.owner.token, body: {} })).status)
      .toBe(422);

    // The driver picks the first up; cancelling then returns only the other to pending.
    await until(() => told.inbox.some((m) => m.event === "route_published"));
    const publishedMessage = told.inbox.find((m) => m.event === "route_published");
    expect(publishedMessage?.payload).toMatchObject({ id: route.id, status: "published" });
    expect(publishedMessage?.payload.stops).toHaveLength(4);
    expect((await moveDelivery(company.driver, a.id, "start")).status).toBe(200);
    await until(() => told.inbox.some((m) => m.event === "route_updated" && m.payload.status === "in_progress"));
    expect(told.inbox.filter((m) => m.event === "route_updated").at(-1)?.payload.stops[0].status).toBe("done");
    const inProgress = await api(`/api/v1/routes/${route.id}`, { token: company.driver.token });
    expect(inProgress.body.status).toBe("in_progress");
    expect(inProgress.body.stops[0].status).toBe("done");
    const cancelled = await api(`/api/v1/routes/${route.id}/cancel`, { token: company.owner.token, body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect((await api(`/api/v1/deliveries/${a.id}`, { token: company.owner.token })).body.status).toBe("in_progress");
    expect((await api(`/api/v1/deliveries/${b.id}`, { token: company.owner.token })).body)
      .toMatchObject({ status: "pending", driver_id: null });
    await moveDelivery(company.owner, b.id, "cancel");
    const list = await api(`/api/v1/routes?status=cancelled&driver_id=${company.driver.driverId}`, {
      token: company.owner.token,
    });
    expect(list.body.items.map((r: any) => r.id)).toContain(route.id);
  });
});

describe("a stop moved between drafts", () => {
  it("moves a delivery from one draft to another: it joins the end of one, the other is renumbered and timed again", async () => {
    const [a, b, c, d] = await Promise.all([at(1), at(1.5), at(-1), at(-1.5)].map((p) => delivery(p)));
    const first = await plan({ delivery_ids: [a.id, b.id], drivers: [shift(company.driver.driverId)] });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await plan({ delivery_ids: [c.id, d.id], drivers: [shift(company.driver2.driverId)] });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const [from, to] = [first.body.routes[0], second.body.routes[0]];
    const moved = from.stops[0].delivery_id;
    const stops = [
      ...to.stops.map((s: any) => ({ delivery_id: s.delivery_id, kind: s.kind })),
      { delivery_id: moved, kind: "pickup" },
      { delivery_id: moved, kind: "dropoff" },
    ];
    const put = await api(`/api/v1/routes/${to.id}/stops`, {
      method: "PUT",
      token: company.owner.token,
      body: { stops },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.stops.slice(-2).map((s: any) => [s.delivery_id, s.kind])).toEqual([
      [moved, "pickup"],
      [moved, "dropoff"],
    ]);
    const left = await api(`/api/v1/routes/${from.id}`, { token: company.owner.token });
    expect(left.body.stops.map((s: any) => s.seq)).toEqual(
      Array.from({ length: from.stops.length - 2 }, (_, i) => i + 1),
    );
    expect(left.body.stops.map((s: any) => s.delivery_id)).not.toContain(moved);
    // The draft it left is timed again without it: from its start straight to the stop that is now first.
    expect(left.body.duration_s).toBeLessThan(from.duration_s);
    expect(left.body.distance_m).toBeLessThan(from.distance_m);
    expect(Date.parse(left.body.ends_at)).toBeLessThan(Date.parse(from.ends_at));
    for (const r of [from, to]) {
      await api(`/api/v1/routes/${r.id}/cancel`, { token: company.owner.token, body: {} });
    }
    for (const x of [a, b, c, d]) await moveDelivery(company.owner, x.id, "cancel");
  });
});

describe("plans as jobs", () => {
  it("answers 202 with a Location beyond the request's budget, and the job ends done with the plan", async () => {
    const d = await delivery(at(0.8));
    const progress = await listen(`company:${company.companyId}`, company.owner.token, { event: "plan_progress" });
    expect(progress.status).toBe("SUBSCRIBED");
    const res = await plan({ delivery_ids: [d.id], drivers: [shift(company.driver2.driverId)], max_seconds: 6 });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: "running" });
    expect(res.headers.get("location")).toBe(`/api/v1/route-plans/${res.body.id}`);
    let job: any;
    const deadline = Date.now() + 30_000;
    for (;;) {
      job = (await api(`/api/v1/route-plans/${res.body.id}`, { token: company.owner.token })).body;
      if (job.status !== "running" || Date.now() > deadline) break;
      expect(job.progress).toBeGreaterThanOrEqual(0);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(job.status, JSON.stringify(job)).toBe("done");
    expect(job.progress).toBe(1);
    expect(job.result.routes[0].stops.map((s: any) => s.delivery_id)).toEqual([d.id, d.id]);
    // plan_progress on the company's topic: the job as GET shows it, running with its progress, then done.
    await until(() => progress.inbox.some((m) => m.payload.id === res.body.id && m.payload.status === "done"), 5_000);
    const told = progress.inbox.filter((m) => m.payload.id === res.body.id);
    expect(told.at(-1)?.payload).toMatchObject({ status: "done", progress: 1 });
    expect(told.some((m) => m.payload.status === "running" && m.payload.progress < 1)).toBe(true);
    expect((await api(`/api/v1/route-plans/${res.body.id}`, { token: company.driver.token })).status).toBe(403);
    const other = await createCompany("Job Other Co");
    expect((await api(`/api/v1/route-plans/${res.body.id}`, { token: other.owner.token })).status).toBe(404);
    await api(`/api/v1/routes/${job.result.routes[0].id}/cancel`, { token: company.owner.token, body: {} });
  });
});

describe("live routes", () => {
  it("inserts a new pending delivery into a live route of an online driver (dispatch mode routes)", async () => {
    const c = await createCompany("Live Routes Co");
    const first = await delivery(at(1), {}, c);
    const second = await delivery(at(3), {}, c);
    const planned = await plan({ delivery_ids: [first.id, second.id], drivers: [shift(c.driver.driverId)] }, c);
    expect(planned.status, JSON.stringify(planned.body)).toBe(201);
    const route = planned.body.routes[0];
    expect((await api(`/api/v1/routes/${route.id}/publish`, { token: c.owner.token, body: {} })).status).toBe(200);
    expect((await putLocation(c.driver, SE)).status).toBe(200);
    const settings = await api("/api/v1/dispatch/settings", {
      method: "PUT",
      token: c.owner.token,
      body: { mode: "routes" },
    });
    expect(settings.status).toBe(200);

    const started = Date.now();
    const added = await delivery(at(2), {}, c);
    let seen: any;
    for (;;) {
      seen = (await api(`/api/v1/deliveries/${added.id}`, { token: c.owner.token })).body;
      if (seen.status === "accepted" || Date.now() - started > 10_000) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen).toMatchObject({ status: "accepted", driver_id: c.driver.driverId, dispatch_status: "assigned" });
    const after = await api(`/api/v1/routes/${route.id}`, { token: c.driver.token });
    expect(after.body.stops).toHaveLength(6);
    const kinds = after.body.stops.filter((s: any) => s.delivery_id === added.id).map((s: any) => s.kind);
    expect(kinds).toEqual(["pickup", "dropoff"]);
    const record = await api(`/api/v1/deliveries/${added.id}/dispatch`, { token: c.owner.token });
    expect(record.body.rounds).toEqual([expect.objectContaining({ mode: "routes", outcome: "assigned" })]);

    // A company with no live route: unassigned, as dispatch leaves what nobody can take.
    const lonely = await createCompany("No Live Routes Co");
    await api("/api/v1/dispatch/settings", { method: "PUT", token: lonely.owner.token, body: { mode: "routes" } });
    const orphan = await delivery(at(1), {}, lonely);
    let status: string | null = null;
    const until = Date.now() + 10_000;
    while (status !== "unassigned" && Date.now() < until) {
      status = (await api(`/api/v1/deliveries/${orphan.id}`, { token: lonely.owner.token })).body.dispatch_status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe("unassigned");
    await api("/api/v1/dispatch/settings", { method: "PUT", token: c.owner.token, body: { mode: "broadcast" } });
    await api("/api/v1/dispatch/settings", { method: "PUT", token: lonely.owner.token, body: { mode: "broadcast" } });
  });

  it("shows the recipient stops_before and the route's ETA, falling as the driver delivers", async () => {
    const c = await createCompany("Tracking Routes Co");
    const near = await delivery(at(0.5), {}, c);
    const farther = await delivery(at(4), {}, c);
    const res = await plan({ delivery_ids: [near.id, farther.id], drivers: [shift(c.driver.driverId)] }, c);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const route = res.body.routes[0];
    const order = route.stops.filter((s: any) => s.kind === "dropoff").map((s: any) => s.delivery_id);
    expect((await api(`/api/v1/routes/${route.id}/publish`, { token: c.owner.token, body: {} })).status).toBe(200);
    const track = async (id: string) => {
      const token = (await api(`/api/v1/deliveries/${id}`, { token: c.owner.token })).body.tracking_token;
      return (await api(`/api/v1/track/${token}`)).body;
    };
    const lastDrop = route.stops.find((s: any) => s.kind === "dropoff" && s.delivery_id === order[1]);
    expect(await track(order[0])).toMatchObject({ stops_before: 0 });
    expect(await track(order[1])).toMatchObject({ stops_before: 1 });
    expect(Date.parse((await track(order[1])).eta_at)).toBe(Date.parse(lastDrop.arrival_at));
    expect((await moveDelivery(c.driver, order[0], "start")).status).toBe(200);
    expect((await moveDelivery(c.driver, order[0], "complete")).status).toBe(200);
    expect(await track(order[1])).toMatchObject({ stops_before: 0 });
    expect(await track(order[0])).toMatchObject({ stops_before: null });
  });
});

describe("vehicles", () => {
  it("gives a driver a vehicle with a default capacity per type, and plans with it", async () => {
    const driver = await api(`/api/v1/drivers/${company.driver2.driverId}`, { token: company.owner.token });
    expect(driver.body.vehicle).toEqual({ type: "car", plate: null, capacity: 20 });
    const moto = await api(`/api/v1/drivers/${company.driver2.driverId}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { vehicle: { type: "moto", plate: "ABC1D23" } },
    });
    expect(moto.status, JSON.stringify(moto.body)).toBe(200);
    expect(moto.body.vehicle).toEqual({ type: "moto", plate: "ABC1D23", capacity: 6 });
    const van = await api(`/api/v1/drivers/${company.driver2.driverId}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { vehicle: { type: "van", capacity: 2 } },
    });
    expect(van.body.vehicle).toEqual({ type: "van", plate: "ABC1D23", capacity: 2 });
    const bad = await api(`/api/v1/drivers/${company.driver2.driverId}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { vehicle: { type: "truck" } },
    });
    expect(bad.status).toBe(400);
    const big = await delivery(at(1), { size: 3 });
    const res = await plan({ delivery_ids: [big.id], drivers: [shift(company.driver2.driverId)] });
    expect(res.status).toBe(201);
    expect(res.body.unassigned).toEqual([{ delivery_id: big.id, reason: "capacity" }]);
    await moveDelivery(company.owner, big.id, "cancel");
    const created = await api("/api/v1/drivers", {
      token: company.owner.token,
      body: {
        name: "Biker",
        email: `biker-${Date.now()}@example.com`,
        password: "correct-horse-battery",
        vehicle: { type: "bike" },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.vehicle).toEqual({ type: "bike", plate: null, capacity: 4 });
    expect(
      (await db()`select count(*)::int as n from public.routes where company_id = ${company.companyId}
      and status in ('draft', 'published', 'in_progress')`)[0].n,
    ).toBe(0);
  });
});

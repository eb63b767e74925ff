// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// A live route followed by its recipients (docs/routes.md, The recipient): the stops still to come are timed again
// from the driver's position when the ETA refreshes (the arrival at the next stop is the routing service's travel
// from where the driver is, the recipient hears the new ETA and the driver route_updated), and a recipient hears
// tracking_updated when its stops_before falls. And the timing itself, pure: waits for a window, counts the service.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type StopToCome, timeStops } from "../../../functions/_shared/route-timing.ts";
import { createRoutingSimulator } from "../../../local/simulators/routing.ts";
import { api, createCompany, stack } from "../../support/api.ts";
import { createInvoiceDelivery, moveDelivery, SE } from "../../support/deliveries.ts";
import { routing } from "../../support/fakes.ts";
import { putLocation } from "../../support/locations.ts";
import { listen, until } from "../../support/realtime.ts";
import { supabaseClient } from "../../support/supabase.ts";

const at = (km: number, east = 0) => ({
  lat: SE.lat + km / 111.195,
  lng: SE.lng + east / 101.9,
});
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const topicOf = (token: string) => `track:${createHash("sha256").update(token).digest("hex")}`;

afterEach(async () => {
  await routing.reset();
});

/** Seconds the routing fake says driving from `a` to `b` takes (the same simulator, in this process). */
async function drive(
  a: { lat: number; lng: number },
  b: { lat: number; lng: number },
) {
  const coordinates = [a, b].map((p) => `${p.lng.toFixed(6)},${p.lat.toFixed(6)}`).join(";");
  const res = await createRoutingSimulator().fetch(
    new Request(
      `http://sim/table/v1/driving/${coordinates}?annotations=duration,distance`,
    ),
  );
  return ((await res.json()) as { durations: number[][] }).durations[0][1];
}

describe("a live route followed by its recipients", () => {
  it("times the stops still to come from the driver's position, and tells the recipient its ETA and its place", async () => {
    const c = await createCompany("Route Timing Co");
    const first = await createInvoiceDelivery(c, { destination: at(1) });
    const second = await createInvoiceDelivery(c, { destination: at(3) });
    const planned = await api("/api/v1/routes/plan", {
      token: c.owner.token,
      body: {
        delivery_ids: [first.id, second.id],
        drivers: [{
          driver_id: c.driver.driverId,
          start: SE,
          shift_start: inMinutes(0),
          shift_end: inMinutes(240),
        }],
      },
    });
    expect(planned.status, JSON.stringify(planned.body)).toBe(201);
    const route = planned.body.routes[0];
    expect(
      (await api(`/api/v1/routes/${route.id}/publish`, {
        token: c.owner.token,
        body: {},
      })).status,
    ).toBe(200);
    const drops = route.stops.filter((s: any) => s.kind === "dropoff").map((
      s: any,
    ) => s.delivery_id);
    const tokenOf = async (id: string) =>
      (await api(`/api/v1/deliveries/${id}`, { token: c.owner.token })).body
        .tracking_token as string;
    const last = await listen(
      topicOf(await tokenOf(drops[1])),
      stack().anonKey,
      { client: supabaseClient() },
    );
    expect(last.status).toBe("SUBSCRIBED");
    const driverTopic = await listen(
      `driver:${c.driver.driverId}`,
      c.driver.token,
      { event: "route_updated" },
    );
    expect(driverTopic.status).toBe("SUBSCRIBED");

    // The driver is 6 km south of the shop when it sends its position: the route is timed from there.
    const far = at(-6);
    const sentAt = Date.now();
    expect((await putLocation(c.driver, far)).status).toBe(200);
    let timed: any;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      timed = (await api(`/api/v1/routes/${route.id}`, { token: c.driver.token }))
        .body;
      if (timed.stops[0].arrival_at !== route.stops[0].arrival_at) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(timed.stops[0].arrival_at, "the route was timed again").not.toBe(route.stops[0].arrival_at);
    const toShop = await drive(far, SE);
    const arrival = Date.parse(timed.stops[0].arrival_at);
    expect(arrival).toBeGreaterThanOrEqual(sentAt + (toShop - 2) * 1000);
    expect(arrival).toBeLessThanOrEqual(Date.now() + (toShop + 2) * 1000);
    // Both pickups are at the shop: the second follows the first's 60 s of service, without travel.
    expect(timed.stops[0].kind).toBe("pickup");
    expect(timed.stops[1].kind).toBe("pickup");
    expect(Date.parse(timed.stops[1].arrival_at) - arrival).toBe(60_000);
    // The recipient hears its new ETA (its drop-off's arrival as now timed), the driver the route.
    const lastDrop = timed.stops.find((s: any) => s.kind === "dropoff" && s.delivery_id === drops[1]);
    await until(
      () => last.inbox.some((m) => m.event === "tracking_updated" && m.payload.eta_at),
      5_000,
    );
    const heard = last.inbox.filter((m) => m.event === "tracking_updated").at(-1)!.payload;
    expect(Date.parse(heard.eta_at)).toBe(Date.parse(lastDrop.arrival_at));
    expect(heard.stops_before).toBe(1);
    await until(() => driverTopic.inbox.length > 0, 5_000);
    expect(driverTopic.inbox.at(-1)!.payload.stops[0].arrival_at).toBe(
      timed.stops[0].arrival_at,
    );

    // The first recipient's drop-off done: the last one hears it is next.
    last.inbox.length = 0;
    expect((await moveDelivery(c.driver, drops[0], "start")).status).toBe(200);
    expect((await moveDelivery(c.driver, drops[0], "complete")).status).toBe(
      200,
    );
    await until(
      () => last.inbox.some((m) => m.event === "tracking_updated" && m.payload.stops_before === 0),
      5_000,
    );
    expect(
      last.inbox.filter((m) => m.event === "tracking_updated").map((m) => m.payload.stops_before),
    ).toEqual([0]);

    await api(`/api/v1/routes/${route.id}/cancel`, {
      token: c.owner.token,
      body: {},
    });
  });
});

describe("the timing, pure", () => {
  const stop = (
    id: string,
    kind: "pickup" | "dropoff",
    extra: Partial<StopToCome> = {},
  ): StopToCome => ({
    delivery_id: id,
    kind,
    status: "pending",
    lat: kind === "pickup" ? 0 : 1,
    lng: 0,
    window_start: null,
    window_end: null,
    service_s: 120,
    ...extra,
  });
  // Three places: the driver (0), the shop (1), the recipients' street (2).
  const matrix = {
    durations: [[0, 100, 300], [100, 0, 200], [300, 200, 0]],
    distances: [[0, 1000, 3000], [1000, 0, 2000], [3000, 2000, 0]],
  };
  const from = { lat: 5, lng: 5 };
  const now = Date.parse("2026-11-29T12:00:00Z");
  const clock = (s: number) => new Date(now + s * 1000).toISOString();

  it("travels, serves, and waits for a window to open; skips what is done", () => {
    const stops = [
      stop("a", "pickup", { status: "done" }),
      stop("b", "pickup"),
      stop("a", "dropoff"),
      stop("b", "dropoff", { window_start: clock(1000) }),
    ];
    expect(timeStops(from, stops, matrix, now)).toEqual({
      stops: [
        { delivery_id: "b", kind: "pickup", arrival_at: clock(100) },
        // 100 + 60 s at the shop + 200 s on the road.
        { delivery_id: "a", kind: "dropoff", arrival_at: clock(360) },
        // Same street: no travel, after a's 120 s.
        { delivery_id: "b", kind: "dropoff", arrival_at: clock(480) },
      ],
      // b's window opens at 1000: served until 1120.
      ends_at: clock(1120),
    });
  });

  it("answers nothing when a stop has no road to it", () => {
    const cut = {
      durations: [[0, 10_000_000, 0], [0, 0, 0], [0, 0, 0]],
      distances: matrix.distances,
    };
    expect(
      timeStops(from, [stop("a", "pickup"), stop("a", "dropoff")], cut, now),
    ).toBeNull();
  });
});

// The routing service client (functions/api/routing.ts): reading OSRM's
// answer, building its URL, and failing as 502 when the service is down, slow
// or answers anything but a route, against the loopback routing fake.
import { afterEach, describe, expect, it } from "vitest";
import {
  osrmRouteUrl,
  routeBetween,
  routeFromOsrm,
  ROUTING_TIMEOUT_MS,
  RoutingUnavailable,
} from "../../../functions/api/routing.ts";
import { stack } from "../../support/api.ts";
import { routing } from "../../support/fakes.ts";

const SE = { lat: -23.5505, lng: -46.6333 };
const PAULISTA = { lat: -23.5614, lng: -46.6559 };

afterEach(async () => {
  await routing.reset();
});

describe("routeFromOsrm", () => {
  it("takes the first route's distance and duration", () => {
    expect(routeFromOsrm({ code: "Ok", routes: [{ distance: 1234.5, duration: 98.7 }, { distance: 1, duration: 1 }] }))
      .toEqual({ distance_m: 1234.5, duration_s: 98.7 });
  });

  it.each([
    [{ code: "NoRoute", message: "Impossible route" }, "answered NoRoute"],
    [{ code: "Ok", routes: [] }, "answered without a route"],
    [{ code: "Ok" }, "answered without a route"],
    [{ code: "Ok", routes: [{ distance: -1, duration: 10 }] }, "answered without a route"],
    [{ code: "Ok", routes: [{ distance: "12", duration: 10 }] }, "answered without a route"],
    [{ message: "oops" }, "answered without a code"],
    [null, "answered without a code"],
  ])("refuses %j as a 502", (answer, reason) => {
    const failure = (() => {
      try {
        routeFromOsrm(answer);
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(RoutingUnavailable);
    expect(failure).toMatchObject({ status: 502, detail: `Routing service unavailable: ${reason}` });
  });
});

describe("osrmRouteUrl", () => {
  it("asks OSRM for lng,lat pairs in fixed notation, without the geometry", () => {
    expect(osrmRouteUrl("http://osrm.example/", { lat: -23.5505, lng: 1e-7 }, { lat: 0, lng: -46.6559 }))
      .toBe("http://osrm.example/route/v1/driving/0.000000,-23.550500;-46.655900,0.000000?overview=false");
  });
});

describe("routeBetween", () => {
  const base = () => stack().fakes.routing.url;

  it("measures a route", async () => {
    const route = await routeBetween(base(), SE, PAULISTA);
    expect(route.distance_m).toBeGreaterThan(2000);
    expect(route.duration_s).toBeGreaterThan(0);
    expect((await routing.state()).requests).toBe(1);
  });

  it("is 502 when the service answers an error", async () => {
    await routing.set("error");
    await expect(routeBetween(base(), SE, PAULISTA)).rejects.toMatchObject({
      status: 502,
      detail: "Routing service unavailable: answered NoRoute",
    });
  });

  it("is 502 when the service is down", async () => {
    await routing.down();
    await expect(routeBetween(base(), SE, PAULISTA)).rejects.toMatchObject({
      status: 502,
      detail: "Routing service unavailable: unreachable",
    });
  });

  it(`gives up after ${ROUTING_TIMEOUT_MS} ms: 502`, async () => {
    await routing.slow(ROUTING_TIMEOUT_MS + 2_000);
    const started = Date.now();
    await expect(routeBetween(base(), SE, PAULISTA)).rejects.toMatchObject({
      status: 502,
      detail: "Routing service unavailable: timed out",
    });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(ROUTING_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(ROUTING_TIMEOUT_MS + 1_500);
  });

  it("answers within the deadline when the service is merely slowish", async () => {
    await routing.slow(300);
    await expect(routeBetween(base(), SE, PAULISTA)).resolves.toMatchObject({ distance_m: expect.any(Number) });
  });
});

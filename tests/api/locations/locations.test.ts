// Driver locations over HTTP: the 10-second limit (with the database's clock
// moved back instead of sleeping), concurrent updates, validation, the
// broadcast, and who may call each endpoint.
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, type DriverMember, type TestCompany } from "../../support/api.ts";
import { lastAcceptedAgo, putLocation as put } from "../../support/locations.ts";

async function storedLocation(driver: DriverMember) {
  const [row] = await db()`select lat, lng, heading, speed, accuracy from public.driver_locations
                            where driver_id = ${driver.driverId}`;
  return row;
}

async function broadcasts(company: TestCompany) {
  return await db()`select payload from realtime.messages
                    where topic = ${`company:${company.companyId}`} and event = 'driver_location'
                    order by inserted_at`;
}

describe("PUT /api/v1/locations/me", () => {
  let company: TestCompany;
  beforeAll(async () => {
    company = await createCompany("Locations Co");
  });

  it("stores the driver's position and answers it", async () => {
    const res = await put(company.driver, { lat: -23.5505, lng: -46.6333, heading: 270.5, speed: 13.9, accuracy: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      driver_id: company.driver.driverId,
      lat: -23.5505,
      lng: -46.6333,
      heading: 270.5,
      speed: 13.9,
      accuracy: 5,
      updated_at: expect.any(String),
    });
    expect(Date.parse(res.body.updated_at)).not.toBeNaN();
    expect(await storedLocation(company.driver)).toEqual({
      lat: -23.5505,
      lng: -46.6333,
      heading: 270.5,
      speed: 13.9,
      accuracy: 5,
    });
  });

  it("broadcasts the accepted position as driver_location on the company topic", async () => {
    const [last] = (await broadcasts(company)).slice(-1);
    const [row] =
      await db()`select updated_at from public.driver_locations where driver_id = ${company.driver.driverId}`;
    expect(last.payload).toMatchObject({
      driver_id: company.driver.driverId,
      lat: -23.5505,
      lng: -46.6333,
      heading: 270.5,
    });
    expect(Date.parse(last.payload.updated_at)).toBe(row.updated_at.getTime());
  });

  it("refuses a second update inside 10 seconds with 429 and Retry-After, changing nothing", async () => {
    const before = (await broadcasts(company)).length;
    const res = await put(company.driver, { lat: 1, lng: 2 });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ detail: "location updates are limited to one every 10 seconds" });
    const retryAfter = res.headers.get("retry-after");
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(10);
    expect(await storedLocation(company.driver)).toMatchObject({ lat: -23.5505, lng: -46.6333 });
    expect((await broadcasts(company)).length).toBe(before);
  });

  it("counts Retry-After from the last accepted update", async () => {
    await lastAcceptedAgo(company.driver, 6.5);
    const res = await put(company.driver, { lat: 1, lng: 2 });
    expect(res.status).toBe(429);
    // 3.5 s, less the few milliseconds since, remain: rounded up to whole seconds.
    expect(res.headers.get("retry-after")).toBe("4");
  });

  it("accepts the next update once 10 seconds have passed", async () => {
    await lastAcceptedAgo(company.driver);
    const res = await put(company.driver, { lat: 1.5, lng: 2.5 });
    expect(res.status).toBe(200);
    // Omitted fields are unknown now, not carried over from the last update.
    expect(res.body).toMatchObject({ lat: 1.5, lng: 2.5, heading: null, speed: null, accuracy: null });
    expect((await put(company.driver, { lat: 3, lng: 4 })).status).toBe(429);
  });

  it("limits each driver separately", async () => {
    const res = await put(company.driver2, { lat: 10, lng: 20 });
    expect(res.status).toBe(200);
  });

  describe("concurrent updates from one driver", () => {
    let racer: TestCompany;
    beforeAll(async () => {
      racer = await createCompany("Race Co");
    });

    it("the very first two at once: one 200 and one 429", async () => {
      const statuses =
        (await Promise.all([put(racer.driver, { lat: 1, lng: 1 }), put(racer.driver, { lat: 2, lng: 2 })]))
          .map((r) => r.status);
      expect(statuses.sort()).toEqual([200, 429]);
    });

    it("two at once after the window: one 200 and one 429, in every round", async () => {
      for (let round = 0; round < 5; round++) {
        await lastAcceptedAgo(racer.driver);
        const statuses =
          (await Promise.all([put(racer.driver, { lat: round, lng: 1 }), put(racer.driver, { lat: round, lng: 2 })]))
            .map((r) => r.status);
        expect(statuses.sort()).toEqual([200, 429]);
      }
    });

    it("ten at once: exactly one is accepted, and exactly one broadcast", async () => {
      await lastAcceptedAgo(racer.driver);
      const before = (await broadcasts(racer)).length;
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => put(racer.driver, { lat: i, lng: i })));
      const accepted = results.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(1);
      expect(results.filter((r) => r.status === 429)).toHaveLength(9);
      expect(await storedLocation(racer.driver)).toMatchObject({ lat: accepted[0].body.lat });
      expect((await broadcasts(racer)).length).toBe(before + 1);
    });
  });

  describe("validation", () => {
    it.each([
      ["lat above 90", { lat: 90.1, lng: 0 }, "lat"],
      ["lat below -90", { lat: -91, lng: 0 }, "lat"],
      ["lng above 180", { lat: 0, lng: 180.01 }, "lng"],
      ["lng below -180", { lat: 0, lng: -180.5 }, "lng"],
      ["heading of 360", { lat: 0, lng: 0, heading: 360 }, "heading"],
      ["negative heading", { lat: 0, lng: 0, heading: -0.1 }, "heading"],
      ["negative speed", { lat: 0, lng: 0, speed: -1 }, "speed"],
      ["negative accuracy", { lat: 0, lng: 0, accuracy: -3 }, "accuracy"],
      ["lat as a string", { lat: "12.5", lng: 0 }, "lat"],
      ["speed as a string", { lat: 0, lng: 0, speed: "fast" }, "speed"],
    ])("%s is 400 naming the field", async (_name, body, field) => {
      const res = await put(company.driver2, body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ loc: ["body", field], type: expect.any(String), msg: expect.any(String) }),
        ]),
      );
      expect(res.body.detail.find((item: { loc: string[] }) => item.loc[1] === field)).toHaveProperty("input");
    });

    it("a missing lat and lng are 400 `missing` items", async () => {
      const res = await put(company.driver2, { heading: 10 });
      expect(res.status).toBe(400);
      expect(res.body.detail).toEqual(expect.arrayContaining([
        { type: "missing", loc: ["body", "lat"], msg: "Field required", input: null },
        { type: "missing", loc: ["body", "lng"], msg: "Field required", input: null },
      ]));
    });

    it("an empty or malformed body is 400", async () => {
      expect((await api("/api/v1/locations/me", { method: "PUT", token: company.driver2.token })).status).toBe(400);
      const malformed = await api("/api/v1/locations/me", {
        method: "PUT",
        token: company.driver2.token,
        rawBody: "{lat: 1",
        headers: { "content-type": "application/json" },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.detail[0]).toMatchObject({ type: "json_invalid", loc: ["body"] });
    });

    it("accepts the bounds themselves and null optional fields", async () => {
      await lastAcceptedAgo(company.driver2);
      const res = await put(company.driver2, { lat: -90, lng: 180, heading: 0, speed: 0, accuracy: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ lat: -90, lng: 180, heading: 0, speed: 0, accuracy: null });
    });
  });

  describe("who may update a location", () => {
    it.each(["owner", "admin", "legacyAdmin"] as const)("%s: 403", async (who) => {
      const res = await put(company[who], { lat: 0, lng: 0 });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: expect.any(String) });
    });

    it("no token: 401", async () => {
      const res = await api("/api/v1/locations/me", { method: "PUT", body: { lat: 0, lng: 0 } });
      expect(res.status).toBe(401);
    });

    it("a deactivated driver: 403", async () => {
      const other = await createCompany("Deactivation Co");
      const patch = await api(`/api/v1/drivers/${other.driver.driverId}`, {
        method: "PATCH",
        token: other.owner.token,
        body: { active: false },
      });
      expect(patch.status).toBe(200);
      expect((await put(other.driver, { lat: 0, lng: 0 })).status).toBe(403);
    });
  });
});

describe("GET /api/v1/drivers/locations", () => {
  let company: TestCompany;
  let other: TestCompany;
  beforeAll(async () => {
    [company, other] = await Promise.all([createCompany("Fleet Co"), createCompany("Other Fleet Co")]);
    expect((await put(company.driver, { lat: -22.9, lng: -43.2, heading: 45, speed: 8, accuracy: 3 })).status).toBe(
      200,
    );
    expect((await put(other.driver, { lat: 1, lng: 1 })).status).toBe(200);
  });

  it.each(["owner", "admin", "legacyAdmin"] as const)(
    "%s lists every driver of the company with its last position",
    async (who) => {
      const res = await api("/api/v1/drivers/locations", { token: company[who].token });
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(2);
      const byId = Object.fromEntries(res.body.items.map((item: { driver_id: string }) => [item.driver_id, item]));
      expect(byId[company.driver.driverId]).toEqual({
        driver_id: company.driver.driverId,
        name: "Driver driver",
        lat: -22.9,
        lng: -43.2,
        heading: 45,
        speed: 8,
        accuracy: 3,
        updated_at: expect.any(String),
      });
      // A driver that never sent a position is listed, with nulls.
      expect(byId[company.driver2.driverId]).toEqual({
        driver_id: company.driver2.driverId,
        name: "Driver driver2",
        lat: null,
        lng: null,
        heading: null,
        speed: null,
        accuracy: null,
        updated_at: null,
      });
    },
  );

  it("a driver may not call it: 403", async () => {
    const res = await api("/api/v1/drivers/locations", { token: company.driver.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: expect.any(String) });
  });

  it("no token: 401", async () => {
    expect((await api("/api/v1/drivers/locations")).status).toBe(401);
  });

  it("shows nothing of another company", async () => {
    const res = await api("/api/v1/drivers/locations", { token: other.owner.token });
    expect(res.status).toBe(200);
    expect(res.body.items.map((item: { driver_id: string }) => item.driver_id).sort())
      .toEqual([other.driver.driverId, other.driver2.driverId].sort());
  });

  it("shows the latest accepted position", async () => {
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: -22.95, lng: -43.25 })).status).toBe(200);
    const res = await api("/api/v1/drivers/locations", { token: company.owner.token });
    const mine = res.body.items.find((item: { driver_id: string }) => item.driver_id === company.driver.driverId);
    expect(mine).toMatchObject({ lat: -22.95, lng: -43.25, heading: null });
  });
});

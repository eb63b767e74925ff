// Positions reach the company panel live: driver_location on the private topic
// company:{company_id}, through the real supabase-js Realtime client.
import { beforeAll, describe, expect, it } from "vitest";
import { createCompany, type TestCompany } from "../../support/api.ts";
import { lastAcceptedAgo, putLocation as put } from "../../support/locations.ts";
import { listen as listenTo, until } from "../../support/realtime.ts";

const listen = (topic: string, token: string) => listenTo(topic, token, { event: "driver_location" });

describe("driver_location broadcasts", () => {
  let company: TestCompany;
  beforeAll(async () => {
    company = await createCompany("Live Map Co");
  });

  it("each accepted position reaches the company's managers, as the API returned it; a refused one does not", async () => {
    const owner = await listen(`company:${company.companyId}`, company.owner.token);
    const legacy = await listen(`company:${company.companyId}`, company.legacyAdmin.token);
    expect([owner.status, legacy.status]).toEqual(["SUBSCRIBED", "SUBSCRIBED"]);

    const first = await put(company.driver, { lat: -23.55, lng: -46.63, heading: 180, speed: 7, accuracy: 4 });
    expect(first.status).toBe(200);
    expect((await put(company.driver, { lat: 0, lng: 0 })).status).toBe(429);
    const second = await put(company.driver2, { lat: -23.6, lng: -46.7 });
    expect(second.status).toBe(200);

    await until(() => owner.inbox.length >= 2 && legacy.inbox.length >= 2);
    for (const { inbox } of [owner, legacy]) {
      // As the API returned it, plus the id Realtime gives a message whose payload has none (realtime.send).
      expect(inbox).toEqual([
        { event: "driver_location", payload: { ...first.body, id: expect.any(String) } },
        { event: "driver_location", payload: { ...second.body, id: expect.any(String) } },
      ]);
    }
  });

  it("a driver may not listen to the company's positions", async () => {
    const driver = await listen(`company:${company.companyId}`, company.driver.token);
    expect(driver.status).toBe("CHANNEL_ERROR");
  });

  it("another company hears nothing", async () => {
    const other = await createCompany("Other Live Map Co");
    const outsider = await listen(`company:${company.companyId}`, other.owner.token);
    expect(outsider.status).toBe("CHANNEL_ERROR");
    const own = await listen(`company:${other.companyId}`, other.owner.token);
    expect(own.status).toBe("SUBSCRIBED");
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: 1, lng: 1 })).status).toBe(200);
    expect((await put(other.driver, { lat: 2, lng: 2 })).status).toBe(200);
    await until(() => own.inbox.length >= 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(own.inbox.map((m) => m.payload.driver_id)).toEqual([other.driver.driverId]);
  });
});

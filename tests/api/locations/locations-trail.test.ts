// The trail of a delivery in progress over HTTP: accepted positions only, read
// by the company's managers.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, type TestCompany } from "../../support/api.ts";
import { deliveryIn } from "../../support/deliveries.ts";
import { lastAcceptedAgo, putLocation as put } from "../../support/locations.ts";

describe("GET /api/v1/deliveries/{id}/trail", () => {
  let company: TestCompany;
  let deliveryId: string;
  beforeAll(async () => {
    company = await createCompany("Trail Co");
    expect((await put(company.driver, { lat: -23.5, lng: -46.6 })).status).toBe(200); // before: not on the trail
    deliveryId = await deliveryIn(company, "in_progress");
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: -23.51, lng: -46.61 })).status).toBe(200);
    expect((await put(company.driver, { lat: -23.99, lng: -46.99 })).status).toBe(429); // refused: not on the trail
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: -23.52, lng: -46.62 })).status).toBe(200);
  });

  it.each(["owner", "admin", "legacyAdmin"] as const)(
    "%s reads the accepted positions since it started, oldest first",
    async (who) => {
      const res = await api(`/api/v1/deliveries/${deliveryId}/trail`, { token: company[who].token });
      expect(res.status).toBe(200);
      expect(res.body.delivery_id).toBe(deliveryId);
      expect(res.body.points.map((p: { lat: number; lng: number }) => [p.lat, p.lng])).toEqual([[-23.51, -46.61], [
        -23.52,
        -46.62,
      ]]);
      expect(Date.parse(res.body.points[0].recorded_at)).toBeLessThan(Date.parse(res.body.points[1].recorded_at));
    },
  );

  it("a driver may not read it: 403", async () => {
    expect((await api(`/api/v1/deliveries/${deliveryId}/trail`, { token: company.driver.token })).status).toBe(403);
  });

  it("another company's delivery, or none: 404; a malformed id: 400", async () => {
    const other = await createCompany("Other Trail Co");
    expect((await api(`/api/v1/deliveries/${deliveryId}/trail`, { token: other.owner.token })).status).toBe(404);
    expect((await api(`/api/v1/deliveries/${randomUUID()}/trail`, { token: company.owner.token })).status).toBe(404);
    expect((await api(`/api/v1/deliveries/not-a-uuid/trail`, { token: company.owner.token })).status).toBe(400);
  });
});

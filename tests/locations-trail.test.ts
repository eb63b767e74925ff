// The trail of a delivery in progress over HTTP: accepted positions only, read
// by the company's managers.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, type DriverMember, type TestCompany } from "./support/api.ts";

/** A delivery of the company that `driver` has in progress, arranged in the database. */
async function deliveryInProgress(company: TestCompany, driver: DriverMember): Promise<string> {
  const [row] = await db()`
    insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
      origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
      driver_id, accepted_at, started_at)
    values (${company.companyId}, 'in_progress', 'invoiced', 'invoice', 'Origin', -23.55, -46.63, 'Destination',
      -23.56, -46.64, 1500, 300, 12.50, 0.80, ${driver.driverId}, now(), now())
    returning id`;
  return row.id;
}

const put = (driver: DriverMember, body: unknown) => api("/api/v1/locations/me", { method: "PUT", token: driver.token, body });

async function lastAcceptedAgo(driver: DriverMember, seconds = 10) {
  await db()`update public.driver_locations set updated_at = now() - make_interval(secs => ${seconds})
             where driver_id = ${driver.driverId}`;
}

describe("GET /api/v1/deliveries/{id}/trail", () => {
  let company: TestCompany;
  let deliveryId: string;
  beforeAll(async () => {
    company = await createCompany("Trail Co");
    expect((await put(company.driver, { lat: -23.5, lng: -46.6 })).status).toBe(200); // before: not on the trail
    deliveryId = await deliveryInProgress(company, company.driver);
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: -23.51, lng: -46.61 })).status).toBe(200);
    expect((await put(company.driver, { lat: -23.99, lng: -46.99 })).status).toBe(429); // refused: not on the trail
    await lastAcceptedAgo(company.driver);
    expect((await put(company.driver, { lat: -23.52, lng: -46.62 })).status).toBe(200);
  });

  it.each(["owner", "admin", "legacyAdmin"] as const)("%s reads the accepted positions since it started, oldest first", async (who) => {
    const res = await api(`/api/v1/deliveries/${deliveryId}/trail`, { token: company[who].token });
    expect(res.status).toBe(200);
    expect(res.body.delivery_id).toBe(deliveryId);
    expect(res.body.points.map((p: { lat: number; lng: number }) => [p.lat, p.lng])).toEqual([[-23.51, -46.61], [-23.52, -46.62]]);
    expect(Date.parse(res.body.points[0].recorded_at)).toBeLessThan(Date.parse(res.body.points[1].recorded_at));
  });

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

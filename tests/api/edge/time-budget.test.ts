// One time budget per request (DESIGN.md §10.1): every request answers within 10 s whatever is slow, with 502 for
// the external service that did not answer in time. Before, each call had its own timeout: a Pix delivery with a
// gateway answering in 6 s per call took 12 s (the charge, then its QR code), and a withdrawal waited the whole
// 10 s of its transfer request before recording it in doubt.
import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, configureGateway, createCompany, db, type TestCompany } from "../../support/api.ts";
import { createPixDelivery, deliveryBody } from "../../support/deliveries.ts";
import { gateway, geocoding, routing } from "../../support/fakes.ts";
import { creditDriver } from "../../support/money.ts";

const BUDGET_MS = 10_000;

let company: TestCompany;

beforeAll(async () => {
  company = await createCompany("Budget Co");
  await configureGateway(company);
  await creditDriver(company.companyId, company.driver, "100.00");
});

afterEach(async () => {
  await gateway.set("ok", 0);
  await routing.set("ok", 0);
  await geocoding.set("ok", 0);
});

async function timed<T>(work: Promise<T>): Promise<{ answer: T; ms: number }> {
  const started = Date.now();
  const answer = await work;
  return { answer, ms: Date.now() - started };
}

describe("a request whose external calls are slow", () => {
  it("a Pix delivery with a gateway answering in 6 s per call: 502 within 10 s, nothing created", async () => {
    const external = `budget-${randomUUID()}`;
    await gateway.slow(6_000);
    const { answer, ms } = await timed(createPixDelivery(company, { external_id: external }));
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(answer.status).toBe(502);
    expect(answer.body.detail).toMatch(/^Payment gateway unavailable: timed out/);
    expect(await db()`select 1 from public.deliveries where external_id = ${external}`).toHaveLength(0);
    console.log(JSON.stringify({ budget: { pixDeliveryWithSlowGatewayMs: ms, status: answer.status } }));
  }, 30_000);

  it("a withdrawal whose transfer request takes 12 s: 502 within 10 s, the withdrawal in doubt", async () => {
    await gateway.slow(12_000);
    const { answer, ms } = await timed(api("/api/v1/withdrawals", {
      token: company.driver.token,
      body: { amount: 3, pix_key: "12345678909", pix_key_type: "cpf" },
    }));
    expect(ms).toBeLessThan(BUDGET_MS);
    expect(answer.status).toBe(502);
    const [row] =
      await db()`select status, in_doubt from public.withdrawals where driver_id = ${company.driver.driverId}
                             order by created_at desc limit 1`;
    expect(row).toEqual({ status: "processing", in_doubt: true });
    console.log(JSON.stringify({ budget: { withdrawalWithSlowGatewayMs: ms, status: answer.status } }));
  }, 30_000);

  it("a delivery geocoded and routed by slow services: 502 within 10 s", async () => {
    // Its addresses are geocoded afresh, not taken from the day's cache (functions/api/address-lookups.ts).
    await db()`delete from private.address_lookups`;
    await geocoding.slow(4_500);
    await routing.slow(4_500);
    const { answer, ms } = await timed(
      api("/api/v1/deliveries", {
        token: company.owner.token,
        body: deliveryBody({ origin: undefined, destination: undefined }),
      }),
    );
    expect(ms).toBeLessThan(BUDGET_MS);
    // Geocoded in 4.5 s; the routing service, as slow, is cut where the budget ends for outgoing calls.
    expect(answer).toMatchObject({ status: 502, body: { detail: "Routing service unavailable: timed out" } });
    console.log(JSON.stringify({ budget: { slowGeocodingAndRoutingMs: ms, status: answer.status } }));
  }, 30_000);
});

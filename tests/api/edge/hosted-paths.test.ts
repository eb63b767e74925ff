// The paths of a hosted project. There every function answers only under
// https://<ref>.supabase.co/functions/v1/<name>/..., and the function sees
// /<name>/...: the api function, named `api`, is reached at
// /functions/v1/api/v1/... and sees /api/v1/..., its own routes, with no
// router in front. The local stack serves the same paths under /functions/v1
// with the same answers as its public paths (/api/v1, /health).
import { describe, expect, it } from "vitest";
import { api, createCompany } from "../../support/api.ts";
import { createInvoiceDelivery, deliveryBody } from "../../support/deliveries.ts";

const HOSTED = "/functions/v1/api";

describe("the api function under /functions/v1/api, as on a hosted project", () => {
  it("serves the OpenAPI document at /functions/v1/api/v1/openapi.json", async () => {
    const hosted = await api(`${HOSTED}/v1/openapi.json`);
    expect(hosted.status).toBe(200);
    expect(hosted.body.openapi).toMatch(/^3\.1\./);
    expect(hosted.body).toEqual((await api("/api/v1/openapi.json")).body);
  });

  it("serves /functions/v1/api/v1/deliveries: the caller's deliveries, created and read there", async () => {
    const company = await createCompany("Hosted paths");
    const other = await createCompany("Hosted paths, other");
    const earlier = await createInvoiceDelivery(company);

    const created = await api(`${HOSTED}/v1/deliveries`, {
      token: company.owner.token,
      body: deliveryBody({ payment_method: "invoice", customer: undefined }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const hosted = await api(`${HOSTED}/v1/deliveries?limit=100`, { token: company.owner.token });
    expect(hosted.status).toBe(200);
    expect(hosted.body.items.map((d: { id: string }) => d.id).sort()).toEqual([earlier.id, created.body.id].sort());
    expect(hosted.body).toEqual((await api("/api/v1/deliveries?limit=100", { token: company.owner.token })).body);

    const one = await api(`${HOSTED}/v1/deliveries/${created.body.id}`, { token: company.owner.token });
    expect(one).toMatchObject({ status: 200, body: { id: created.body.id, company_id: company.companyId } });
    // Another company's user sees none of them, there as on /api/v1.
    expect((await api(`${HOSTED}/v1/deliveries/${created.body.id}`, { token: other.owner.token })).status).toBe(404);
    expect((await api(`${HOSTED}/v1/deliveries?limit=100`, { token: other.owner.token })).body.items).toEqual([]);
  });

  it("refuses an unauthenticated call there as on /api/v1", async () => {
    const hosted = await api(`${HOSTED}/v1/deliveries`);
    const local = await api("/api/v1/deliveries");
    expect(hosted.status).toBe(401);
    expect({ status: hosted.status, body: hosted.body }).toEqual({ status: local.status, body: local.body });
  });

  it("serves /health at /functions/v1/api/health", async () => {
    const hosted = await api(`${HOSTED}/health`);
    expect(hosted).toMatchObject({ status: 200, body: { status: "ok", database: "ok" } });
  });

  it("answers a webhook sent to it with 404 naming the gateway-webhook function's path", async () => {
    const hosted = await api(`${HOSTED}/v1/webhooks/gateway`, { body: { event: "TRANSFER_DONE" } });
    expect(hosted).toMatchObject({
      status: 404,
      body: {
        detail: "The gateway webhooks are served by the gateway-webhook function: POST /functions/v1/gateway-webhook",
      },
    });
  });
});

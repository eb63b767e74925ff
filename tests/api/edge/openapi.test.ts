// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// The OpenAPI document (GET /api/v1/openapi.json) is valid OpenAPI 3.1 that
// standard tools load, and documents every endpoint of docs/contract.md.
import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { api } from "../../support/api.ts";

const CONTRACT_ENDPOINTS = [
  "get /health",
  "post /api/v1/companies/register",
  "get /api/v1/companies/me",
  "post /api/v1/companies/me/gateway-config",
  "get /api/v1/webhook-events",
  "post /api/v1/drivers",
  "get /api/v1/drivers",
  "get /api/v1/drivers/{id}",
  "patch /api/v1/drivers/{id}",
  "get /api/v1/drivers/locations",
  "get /api/v1/prices",
  "put /api/v1/prices",
  "post /api/v1/routes/quote",
  "get /api/v1/postcodes/{cep}",
  "get /api/v1/geocode",
  "post /api/v1/deliveries",
  "get /api/v1/deliveries",
  "get /api/v1/deliveries/{id}",
  "post /api/v1/deliveries/{id}/cancel",
  "post /api/v1/deliveries/{id}/assign",
  "post /api/v1/deliveries/{id}/accept",
  "post /api/v1/deliveries/{id}/start",
  "post /api/v1/deliveries/{id}/complete",
  "get /api/v1/wallets/me",
  "get /api/v1/wallets/me/transactions",
  "post /api/v1/withdrawals",
  "get /api/v1/withdrawals",
  "get /api/v1/withdrawals/{id}",
  "put /api/v1/locations/me",
  "get /api/v1/billing/subscription",
  "put /api/v1/billing/subscription",
  "post /api/v1/webhooks/gateway/{company_id}",
  "post /api/v1/webhooks/gateway",
  "get /api/v1/openapi.json",
];

describe("GET /api/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
    const res = await api("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeTruthy();
    await expect(SwaggerParser.dereference(structuredClone(res.body))).resolves.toBeTruthy();
  });

  it("documents every endpoint of the design, each with its error bodies", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    expect(documented).toEqual(expect.arrayContaining(CONTRACT_ENDPOINTS));
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
          if (Number(status) >= 400) expect(response.content, `${method} ${path} ${status}`).toBeDefined();
        }
      }
    }
  });

  it("lists 413 on every operation with a body, and 503 with Retry-After on every one that uses the database", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ name: `${method} ${path}`, op })));
    const withBody = operations.filter(({ op }) => op.requestBody);
    expect(withBody.map(({ name }) => name)).toEqual(
      expect.arrayContaining(["post /api/v1/deliveries", "put /api/v1/locations/me", "post /api/v1/webhooks/gateway"]),
    );
    for (const { name, op } of withBody) expect(op.responses["413"], name).toBeDefined();
    // /health answers its own 503 (the probe's body); every other operation reads or writes the database.
    for (const { name, op } of operations.filter(({ name }) => name !== "get /health")) {
      expect(op.responses["503"]?.headers?.["Retry-After"], name).toBeDefined();
    }
    expect(doc.paths["/health"].get.responses["503"]).toBeDefined();
  });

  it("names every operation once, for generated clients", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === "string" && /^[a-z]+[A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain("getDeliveriesById");
    expect(ids).toContain("postWebhooksGatewayByCompanyId");
  });
});

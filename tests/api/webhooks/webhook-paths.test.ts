// Exactly one function serves each public path: the webhooks are the
// gateway-webhook function's. The api function documents them but does not
// serve them: a hosted project that routes one to it gets a 404 naming the
// function that does.
import { randomUUID } from "node:crypto";
import { PLATFORM_WEBHOOK } from "../../support/webhooks.ts";
import { describe, expect, it } from "vitest";
import { api } from "../../support/api.ts";
import { callFunctionProcess } from "../../support/function-process.ts";

describe("the webhook paths", () => {
  it("are in the api's OpenAPI document", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([PLATFORM_WEBHOOK, "/api/v1/webhooks/gateway/{company_id}"]),
    );
  });

  it("reaching the api function are 404, naming the gateway-webhook function", () => {
    const body = JSON.stringify({ event: "TRANSFER_DONE", transfer: { id: "tra_1" } });
    const post = (path: string) => ({ method: "POST", path, headers: { "content-type": "application/json" }, body });
    const { answers, stderr } = callFunctionProcess("api", [
      post(PLATFORM_WEBHOOK),
      post(`/api/v1/webhooks/gateway/${randomUUID()}`),
    ]);
    expect(answers.map(({ status, body }) => ({ status, body })), stderr).toEqual([
      {
        status: 404,
        body: {
          detail: "The gateway webhooks are served by the gateway-webhook function: POST /functions/v1/gateway-webhook",
        },
      },
      {
        status: 404,
        body: {
          detail: "The gateway webhooks are served by the gateway-webhook function: " +
            "POST /functions/v1/gateway-webhook/{company_id}",
        },
      },
    ]);
  });
});

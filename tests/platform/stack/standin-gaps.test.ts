// What Supabase's client suites still met in the local stack (issue 31): Storage's info() of an object uploaded
// without user metadata answers `metadata: {}`, as Storage does (storage-js reads it as an object), and
// pg_graphql's endpoint, which the local stack does not have (README.md, What the local stack lacks), is a 404, not
// the web app's page.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api, stack } from "../../support/api.ts";

const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4b10000000049454e44ae426082",
  "hex",
);

describe("the local stand-ins", () => {
  it("Storage info() of an object without user metadata: metadata is {}", async () => {
    const service = { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` };
    const path = `gaps/${randomUUID()}.png`;
    const upload = await fetch(`${stack().apiUrl}/storage/v1/object/delivery-proofs/${path}`, {
      method: "POST",
      headers: { ...service, "content-type": "image/png" },
      body: PNG,
    });
    expect(upload.status, await upload.clone().text()).toBe(200);
    const info = await api(`/storage/v1/object/info/delivery-proofs/${path}`, { headers: service });
    expect(info.status).toBe(200);
    expect(info.body.metadata).toEqual({});
  });

  it("/graphql/v1 (pg_graphql, not offered locally) is a 404 in JSON", async () => {
    const res = await api("/graphql/v1", { headers: { apikey: stack().anonKey } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: "Not Found" });
  });
});

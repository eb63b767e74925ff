// Realtime's HTTP side (local/realtime, routed with Hono): the REST broadcast
// API reads a body no further than Realtime's parser limit (8,000,000 bytes),
// answering 413 before a longer body ends, with or without Content-Length; a
// path Realtime does not have is its 404, never another service's answer.
import { describe, expect, it } from "vitest";
import { stack } from "../../support/api.ts";
import { sendStream, stallingBody } from "../../support/streams.ts";

const LIMIT = 8_000_000;
const headers = () => ({ apikey: stack().anonKey, authorization: `Bearer ${stack().serviceRoleKey}` });

describe("the REST broadcast API", () => {
  it("answers 413 to a batch over the limit, before its body ends", async () => {
    const res = await sendStream("POST", "/realtime/v1/api/broadcast", stallingBody(LIMIT + 64 * 1024), {
      ...headers(),
      "content-type": "application/json",
    });
    expect(res).toEqual({ status: 413, body: "Request Entity Too Large" });
  });

  it("answers 413 to a single binary message over the limit, before its body ends", async () => {
    const res = await sendStream(
      "POST",
      "/realtime/v1/api/broadcast/room/events/blob",
      stallingBody(LIMIT + 64 * 1024),
      { ...headers(), "content-type": "application/octet-stream" },
    );
    expect(res).toEqual({ status: 413, body: "Request Entity Too Large" });
  });

  it("still takes a message within the limit, and refuses a topic that does not decode", async () => {
    const ok = await fetch(`${stack().apiUrl}/realtime/v1/api/broadcast/room/events/hello`, {
      method: "POST",
      headers: { ...headers(), "content-type": "application/json" },
      body: JSON.stringify({ n: 1 }),
    });
    expect(ok.status).toBe(202);
    const bad = await fetch(`${stack().apiUrl}/realtime/v1/api/broadcast/%E0%A4%A/events/hello`, {
      method: "POST",
      headers: { ...headers(), "content-type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(400);
  });
});

describe("a path Realtime does not have", () => {
  it("is Realtime's 404", async () => {
    for (const [method, path] of [["GET", "/realtime/v1/api/broadcast"], ["POST", "/realtime/v1/api/tenants"]]) {
      const res = await fetch(`${stack().apiUrl}${path}`, { method, headers: headers() });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ message: "Not Found" });
    }
  });
});

// The local PostgREST under hostile input: request bodies of tables and RPC
// are bounded as /api/v1's are (413 as soon as they pass 1 MiB, also without
// Content-Length, never read whole into memory), and malformed input (a NUL
// in a select alias or a value, runaway nesting, bad percent-escapes, bytes
// that are not UTF-8) is a 4xx in PostgREST's error body, never a 5xx. And
// the API gateway in front of it refuses a request without the project's key.
import { describe, expect, it } from "vitest";
import { stack } from "../../support/api.ts";
import { sendStream, stallingBody } from "../../support/streams.ts";

const MiB = 1_048_576;

const rest = (path: string, init: RequestInit = {}) =>
  fetch(`${stack().apiUrl}/rest/v1${path}`, {
    ...init,
    headers: { apikey: stack().serviceRoleKey, ...(init.headers as Record<string, string>) },
  });

/** A chunked JSON body posted to the local PostgREST, as the service role. */
const postStream = (path: string, body: ReadableStream<Uint8Array>) =>
  sendStream("POST", `/rest/v1${path}`, body, { apikey: stack().serviceRoleKey, "content-type": "application/json" });

const tooLarge = { message: "Payload Too Large", hint: `The request body is larger than ${MiB} bytes` };

describe("request bodies", () => {
  it("over 1 MiB are 413 on a table and on an RPC, without Content-Length, before the body ends", async () => {
    expect(await postStream("/prices", stallingBody(MiB + 64 * 1024))).toEqual({ status: 413, body: tooLarge });
    expect(await postStream("/rpc/get_prices", stallingBody(MiB + 64 * 1024))).toEqual({ status: 413, body: tooLarge });
  });

  it("declared over 1 MiB are 413 at once", async () => {
    const res = await rest("/prices", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: `{"note": "${"x".repeat(MiB)}"}`,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(tooLarge);
  });
});

describe("malformed input", () => {
  it("is a 4xx in PostgREST's body, never a 5xx", async () => {
    const cases: [string, RequestInit, number, string][] = [
      ["/prices?select=%22a%00b%22:company_id", {}, 400, "PGRST100"],
      ["/prices?select=a%00b:company_id", {}, 400, "PGRST100"],
      ["/prices?select=company_id&company_id=eq.a%00b", {}, 400, "22021"],
      ["/prices?select=company_id&or=(company_id.eq.%00)", {}, 400, "22021"],
      [`/prices?select=${"a(".repeat(200)}`, {}, 400, "PGRST100"],
      [`/prices?or=${"(or".repeat(200)}`, {}, 400, "PGRST100"],
      ["/pri%E0%A4%Aces", {}, 404, "PGRST205"],
      ["/rpc/%FF", {}, 404, "PGRST202"],
      ["/prices?offset=99999999999999999999", {}, 400, "22003"],
      [
        "/prices",
        { method: "POST", headers: { "content-type": "application/json" }, body: new Uint8Array([0x7b, 0xff, 0x7d]) },
        400,
        "PGRST102",
      ],
      [
        "/prices",
        { method: "POST", headers: { "content-type": "application/json" }, body: '{"company_id": "\\u0000"}' },
        400,
        "22P05",
      ],
      ["/prices", { method: "POST", headers: { "content-type": "application/json" }, body: "[1, 2" }, 400, "PGRST102"],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await rest(path, init);
      const body = await res.json();
      expect({ path, status: res.status, code: body.code }).toEqual({ path, status, code });
      expect(body).toHaveProperty("message");
    }
  });
});

describe("the API gateway", () => {
  it("refuses a request without the project's key, or with another key, before PostgREST sees it", async () => {
    const missing = await fetch(`${stack().apiUrl}/rest/v1/prices?select=company_id`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      message: "No API key found in request",
      hint: "No `apikey` request header or url param was found.",
    });
    const wrong = await rest("/prices?select=company_id", { headers: { apikey: `${stack().anonKey}x` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({
      message: "Invalid API key",
      hint: "Double check your Supabase `anon` or `service_role` API key.",
    });
    const asQuery = await fetch(`${stack().apiUrl}/rest/v1/prices?select=company_id&apikey=${stack().serviceRoleKey}`);
    expect(asQuery.status).toBe(200);
  });
});

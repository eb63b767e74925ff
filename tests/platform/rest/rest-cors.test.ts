// Browsers' CORS preflights: to a function deployed with verify_jwt, the
// preflight reaches the function without a token (as `supabase functions
// serve` and the edge runtime pass it), while a real call still needs one;
// /rest/v1 answers preflights and exposes Content-Range, as PostgREST does.
import { describe, expect, it } from "vitest";
import { stack } from "../../support/api.ts";

const preflight = (path: string) =>
  fetch(`${stack().apiUrl}${path}`, {
    method: "OPTIONS",
    headers: {
      origin: "http://app.example",
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization, apikey, content-type, x-client-info",
    },
  });

describe("CORS preflight", () => {
  it("reaches a verify_jwt function without a token and gets the function's answer, not 401", async () => {
    const res = await preflight("/functions/v1/whoami");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toContain("authorization");
    // The function's own CORS (Hono's), which names the header it exposes.
    expect(res.headers.get("access-control-expose-headers")).toContain("Retry-After");
    const call = await fetch(`${stack().apiUrl}/functions/v1/whoami`, { method: "POST" });
    expect(call.status).toBe(401);
    expect(await call.json()).toEqual({ code: 401, message: "Missing authorization header" });
  });

  it("is answered by /rest/v1, which exposes Content-Range to browsers", async () => {
    const res = await preflight("/rest/v1/deliveries");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("PATCH");
    const read = await fetch(`${stack().apiUrl}/rest/v1/deliveries`, { headers: { apikey: stack().anonKey } });
    expect(read.headers.get("access-control-expose-headers")).toContain("Content-Range");
    expect(read.headers.get("server")).toMatch(/^postgrest\/\d+\.\d+$/);
  });
});

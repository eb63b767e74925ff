// Losing the database is 503 with Retry-After, never a 500: every connection
// error code postgres.js or the socket reports, and Postgres's admin-shutdown
// and connection-exception SQLSTATEs, as toHttpError (functions/_shared/errors.ts)
// maps them. The whole-stack case, the database unreachable, is in platform.test.ts.
import { describe, expect, it } from "vitest";
import { HttpError, toHttpError } from "../../../functions/_shared/errors.ts";

/** An error as postgres.js reports a socket or driver failure. */
const driverError = (code: string) => Object.assign(new Error(`write ${code}`), { code });
/** An error as postgres.js reports an ErrorResponse from the server. */
const serverError = (code: string, severity = "FATAL") =>
  Object.assign(new Error("terminating connection due to administrator command"), {
    code,
    severity,
    name: "PostgresError",
  });

describe("toHttpError", () => {
  // Socket errors (Node's and Deno's node:net), then postgres.js's own.
  const SOCKET = ["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"];
  const LOOKUP = ["ENOTFOUND", "EAI_AGAIN"];
  const DRIVER = ["CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED"];
  it.each([...SOCKET, ...LOOKUP, ...DRIVER])("maps the connection error %s to 503 with Retry-After", (code) => {
    const http = toHttpError(driverError(code));
    expect(http).toBeInstanceOf(HttpError);
    expect({ status: http.status, retryAfter: http.headers["Retry-After"] }).toEqual({ status: 503, retryAfter: "1" });
  });

  it.each(["BrokenPipe", "ConnectionReset", "ConnectionRefused", "NotConnected"])(
    "maps Deno's %s error to 503 with Retry-After",
    (name) => {
      const http = toHttpError(Object.assign(new Error("socket"), { name }));
      expect({ status: http.status, retryAfter: http.headers["Retry-After"] }).toEqual({
        status: 503,
        retryAfter: "1",
      });
    },
  );

  it.each(["57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08P01", "53300"])(
    "maps SQLSTATE %s to 503 with Retry-After",
    (code) => {
      const http = toHttpError(serverError(code));
      expect({ status: http.status, retryAfter: http.headers["Retry-After"] }).toEqual({
        status: 503,
        retryAfter: "1",
      });
    },
  );

  it("maps a rate limit (PT429) to 429 with the function's wait as Retry-After, a minute when it names none", () => {
    const limited = (detail?: string) =>
      Object.assign(new Error("location updates are limited to one every 10 seconds"), {
        code: "PT429",
        severity: "ERROR",
        detail,
      });
    const http = toHttpError(limited('{"retry_after": 7}'));
    expect({ status: http.status, detail: http.detail, retryAfter: http.headers["Retry-After"] }).toEqual({
      status: 429,
      detail: "location updates are limited to one every 10 seconds",
      retryAfter: "7",
    });
    expect(toHttpError(limited()).headers["Retry-After"]).toBe("60");
    expect(toHttpError(limited('{"retry_after": "soon"}')).headers["Retry-After"]).toBe("60");
  });

  it("still answers 500 for an error that is not the database's availability", () => {
    expect(toHttpError(new Error("boom")).status).toBe(500);
    expect(toHttpError(serverError("XX000", "ERROR")).status).toBe(500);
  });
});

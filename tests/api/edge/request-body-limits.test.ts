// Request bodies over 1 MiB are refused with 413 as they arrive, not after
// being read whole: also a chunked body that declares no Content-Length.
import { describe, expect, it } from "vitest";
import { sendStream, stallingBody } from "../../support/streams.ts";

const MiB = 1_048_576;

describe("a request body over 1 MiB", () => {
  it("is 413 on the api, without Content-Length, before the body ends", async () => {
    const res = await sendStream("POST", "/api/v1/companies/register", stallingBody(MiB + 64 * 1024), {
      "content-type": "application/json",
    });
    expect(res).toEqual({ status: 413, body: { detail: `The body is larger than ${MiB} bytes` } });
  });
});

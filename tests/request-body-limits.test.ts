// Request bodies over 1 MiB are refused with 413 as they arrive, not after
// being read whole: also a chunked body that declares no Content-Length.
import { describe, expect, it } from "vitest";
import { stack } from "./support/api.ts";

const MiB = 1_048_576;

/** A chunked body that sends `bytes` and then stalls: it never ends, so only a server that stops reading answers. */
function stallingBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return new Promise(() => {}); // never more, never the end
      const chunk = new Uint8Array(Math.min(64 * 1024, bytes - sent)).fill(0x20);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

async function postStream(path: string, body: ReadableStream<Uint8Array>) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  try {
    const res = await fetch(`${stack().apiUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
      signal: abort.signal,
    } as RequestInit);
    return { status: res.status, body: await res.json() };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

describe("a request body over 1 MiB", () => {
  it("is 413 on the api, without Content-Length, before the body ends", async () => {
    const res = await postStream("/api/v1/companies/register", stallingBody(MiB + 64 * 1024));
    expect(res).toEqual({ status: 413, body: { detail: `The body is larger than ${MiB} bytes` } });
  });
});

// Request bodies that show whether a server bounds what it reads: a chunked
// body (no Content-Length) that sends some bytes and then stalls, so only a
// server that stops reading at its limit can answer before the client gives up.
import { stack } from "./api.ts";

/** A chunked body that sends `bytes` and then never ends. */
export function stallingBody(bytes: number, fill = 0x20): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return new Promise(() => {}); // never more, never the end
      const chunk = new Uint8Array(Math.min(64 * 1024, bytes - sent)).fill(fill);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

/** Sends `body` to `path` and resolves with the answer's status and JSON, or rejects after 10 s. */
export async function sendStream(
  method: string,
  path: string,
  body: ReadableStream<Uint8Array>,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  try {
    const res = await fetch(`${stack().apiUrl}${path}`, {
      method,
      headers,
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

// Neutral code (common/): a request body read within a bound, for the Edge
// Functions (/api/v1 and the webhooks) and the local stand-ins (PostgREST,
// Storage, Realtime's broadcast API) alike. Each says a body over its bound in
// its own service's words.

/** Request bodies larger than this are refused (413) before they are parsed: the gateway's bound on every service. */
export const MAX_BODY_BYTES = 1_048_576;

/** A body over the bound it was read with. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The body is larger than ${limit} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/**
 * The request body, refused with 413 as soon as it passes `limit` bytes: a
 * declared Content-Length is checked first, and a chunked body is counted as
 * it arrives, never read whole.
 */
export async function readBody(req: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array<ArrayBuffer>> {
  const length = req.headers.get("content-length");
  const declared = Number(length ?? 0);
  if (declared > limit) throw new BodyTooLargeError(limit);
  // A declared length within the limit: the HTTP server delivers no byte past it, so the body is read whole,
  // before anything touches `req.body` (which would make it a JS stream, where Deno reads it natively).
  if (length !== null && /^\d+$/.test(length)) {
    const bytes = new Uint8Array(await req.arrayBuffer());
    if (bytes.byteLength > limit) throw new BodyTooLargeError(limit);
    return bytes;
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

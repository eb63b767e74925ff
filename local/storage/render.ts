// Serving an object as Storage's renderers do: its bytes (whole or one range)
// with Content-Type (text/html as text/plain), ETag, Last-Modified,
// Cache-Control (or Expires for a signed URL), X-Robots-Tag and, with
// `download`, an attachment whose name is percent-encoded so nothing the
// caller sends can break the header; a conditional request answered 304; the
// info route's JSON. Every answer also says `X-Content-Type-Options: nosniff`
// (set for all of Storage's answers in mod.ts).
import type { Context } from "hono";
import { ERRORS } from "./errors.ts";
import type { ObjectFiles } from "./files.ts";

export interface ObjectRow {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: Record<string, unknown> | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

interface AssetMetadata {
  mimetype?: string;
  cacheControl?: string;
  eTag?: string;
  size?: number;
  lastModified?: Date;
  xRobotsTag?: string;
}

function assetMetadata(row: ObjectRow): AssetMetadata {
  const raw = row.metadata ?? {};
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const number = (value: unknown) =>
    typeof value === "number" && Number.isSafeInteger(value)
      ? value
      : typeof value === "string" && /^\d+$/.test(value)
      ? Number(value)
      : undefined;
  const lastModified = raw.lastModified ? new Date(raw.lastModified as string) : undefined;
  return {
    mimetype: text(raw.mimetype),
    cacheControl: text(raw.cacheControl),
    eTag: text(raw.eTag),
    size: number(raw.size),
    lastModified: lastModified && !Number.isNaN(lastModified.getTime()) ? lastModified : row.updated_at,
    xRobotsTag: text(raw.xRobotsTag),
  };
}

/** Storage's renderer hides what a browser would run: HTML is served as plain text. */
const contentType = (mime: string | undefined) => (mime?.includes("text/html") ? "text/plain" : mime);

/** Storage's answer when a row's bytes are missing. */
const missing = () =>
  Response.json(
    { error: "Not found", message: "The resource was not found", statusCode: "404", code: "NoSuchKey" },
    { status: 400, headers: { "cache-control": "no-store" } },
  );

/** One `bytes=` range of a file of `size` bytes, or null for none; a malformed or unsatisfiable one is refused. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) throw ERRORS.invalidRange();
  let start: number;
  let end: number;
  if (match[1] === "") {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start > end || start >= size) throw ERRORS.invalidRange();
  return { start, end };
}

/** At most `count` bytes of `stream`. */
function take(stream: ReadableStream<Uint8Array>, count: number): ReadableStream<Uint8Array> {
  let left = count;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (left <= 0) return;
        const part = chunk.byteLength > left ? chunk.subarray(0, left) : chunk;
        left -= part.byteLength;
        controller.enqueue(part);
        if (left <= 0) controller.terminate();
      },
    }),
  );
}

export interface RenderOptions {
  /** The `download` query parameter: an attachment, named by it when not empty. */
  download?: string;
  /** A signed URL's expiry, sent as Expires instead of Cache-Control. */
  expires?: string;
  /** HEAD: the headers alone. */
  head?: boolean;
}

export async function renderObject(files: ObjectFiles, c: Context, row: ObjectRow, options: RenderOptions) {
  const opened = await files.open(row);
  if (!opened) return missing();
  const meta = assetMetadata(row);
  const headers = new Headers({ "accept-ranges": "bytes", "x-robots-tag": meta.xRobotsTag ?? "none" });
  const type = contentType(meta.mimetype);
  if (type) headers.set("content-type", type);
  if (meta.eTag) headers.set("etag", meta.eTag);
  if (meta.lastModified) headers.set("last-modified", meta.lastModified.toUTCString());
  if (options.expires) headers.set("expires", options.expires);
  else headers.set("cache-control", meta.cacheControl ?? "no-cache");
  if (options.download !== undefined) {
    const name = encodeURIComponent(options.download);
    headers.set(
      "content-disposition",
      name === "" ? "attachment;" : `attachment; filename=${name}; filename*=UTF-8''${name}`,
    );
  }

  const ifNoneMatch = c.req.header("if-none-match");
  const ifModifiedSince = Date.parse(c.req.header("if-modified-since") ?? "");
  const notModified = ifNoneMatch !== undefined
    ? meta.eTag !== undefined && ifNoneMatch === meta.eTag
    : !Number.isNaN(ifModifiedSince) && meta.lastModified !== undefined &&
      Math.floor(meta.lastModified.getTime() / 1000) * 1000 <= ifModifiedSince;
  if (notModified || options.head) {
    opened.file.close();
    if (!notModified) headers.set("content-length", String(opened.size));
    return new Response(null, { status: notModified ? 304 : 200, headers });
  }

  let range;
  try {
    range = parseRange(c.req.header("range"), opened.size);
  } catch (error) {
    opened.file.close();
    throw error;
  }
  if (!range) {
    headers.set("content-length", String(opened.size));
    return new Response(opened.file.readable, { status: 200, headers });
  }
  await opened.file.seek(range.start, Deno.SeekMode.Start);
  const length = range.end - range.start + 1;
  headers.set("content-length", String(length));
  headers.set("content-range", `bytes ${range.start}-${range.end}/${opened.size}`);
  return new Response(take(opened.file.readable, length), { status: 206, headers });
}

/** GET /object/info/...: the object's description (Storage's InfoRenderer). */
export function renderInfo(c: Context, row: ObjectRow): Response {
  const meta = assetMetadata(row);
  const headers = new Headers({ "cache-control": meta.cacheControl ?? "no-cache" });
  if (meta.eTag) headers.set("etag", meta.eTag);
  if (meta.lastModified) headers.set("last-modified", meta.lastModified.toUTCString());
  return c.json(
    {
      id: row.id,
      name: row.name,
      version: row.version,
      bucket_id: row.bucket_id,
      size: meta.size ?? null,
      content_type: meta.mimetype ?? null,
      cache_control: meta.cacheControl ?? null,
      etag: meta.eTag ?? null,
      // Storage answers {} for an object uploaded without user metadata, never null.
      metadata: row.user_metadata ?? {},
      last_modified: row.updated_at,
      created_at: row.created_at,
    },
    200,
    Object.fromEntries(headers),
  );
}

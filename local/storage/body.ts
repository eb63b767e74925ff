// Request bodies of the Storage stand-in, never read whole into memory past
// their limit: JSON bodies up to Fastify's default bodyLimit (1 MiB), as
// Storage's framework refuses larger ones (413), read by the project's one
// bounded reader (common/body.ts readBody); uploads streamed to a file as
// they arrive, refused once the file passes the bucket's (or the project's)
// size limit, as Storage's uploader does (EntityTooLarge), with or without a
// Content-Length. A multipart upload is parsed as a stream: the fields before
// the first file part (cacheControl, metadata, contentType) and that file,
// as @fastify/multipart's request.file() gives them to Storage.
import { createHash } from "node:crypto";
import { BodyTooLargeError, readBody } from "../../common/body.ts";
import { bodyTooLarge, ERRORS, FrameworkError, invalidJsonBody } from "./errors.ts";

/** Fastify's default bodyLimit, which Storage keeps for its JSON routes. */
export const JSON_BODY_LIMIT = 1_048_576;
/** Storage's cap on user metadata (a multipart `metadata` field or the x-metadata header). */
const MAX_USER_METADATA = 1_048_576;
/** The most a multipart preamble or a part's headers may take. */
const MAX_PART_HEADERS = 16 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON body as Fastify parses it for Storage: undefined when there is none. */
export async function readJson(req: Request): Promise<unknown> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  let bytes: Uint8Array;
  try {
    bytes = await readBody(req, JSON_BODY_LIMIT);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw bodyTooLarge();
    throw error;
  }
  if (bytes.byteLength === 0) {
    if (type === "application/json") {
      throw new FrameworkError(
        400,
        "InvalidRequest",
        "FastifyError",
        "Body cannot be empty when content-type is set to 'application/json'",
      );
    }
    return undefined;
  }
  if (type === "text/plain") return decoder.decode(bytes);
  if (type !== "application/json" && !type.endsWith("+json")) {
    throw new FrameworkError(400, "InvalidMimeType", "invalid_mime_type", "Invalid Content-Type header");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return JSON.parse(text);
  } catch {
    throw invalidJsonBody();
  }
}

export interface UploadLimits {
  /** Bytes the file may have (the bucket's limit, capped by the project's). */
  maxFileSize: number;
  /** The bucket's allowed MIME types; empty: any. */
  allowedMimeTypes: string[];
}

/**
 * An upload whose headers (and multipart fields) are read and checked, its
 * bytes not yet: Storage checks the caller may write the object before it
 * consumes them.
 */
export interface PendingUpload {
  mimetype: string;
  cacheControl: string;
  userMetadata: Record<string, unknown> | undefined;
  /** The request's Content-Length, which Storage hands to policies as metadata.contentLength. */
  declaredLength: number | undefined;
  /** Streams the file's bytes to `path`; refused once they pass the limit. */
  writeTo(path: string): Promise<{ size: number; eTag: string }>;
  /** Stops reading the request. */
  discard(): void;
}

/** Storage's validateMimeType: `type/subtype` equal to an allowed type, or its type with `/*`. */
export function checkMimeType(mime: string, allowed: string[]): void {
  if (allowed.length === 0) return;
  const [type, subtype, ...rest] = mime.split("/");
  if (subtype === undefined) throw ERRORS.invalidMimeType(mime);
  const ext = [subtype, ...rest].join("/");
  const ok = allowed.some((entry) => {
    const [allowedType, allowedSubtype] = entry.split("/");
    return allowedType === type && (allowedSubtype === "*" || allowedSubtype === ext);
  });
  if (!ok) throw ERRORS.invalidMimeType(mime);
}

/** The x-metadata header: base64 of a JSON object (anything else is ignored, as Storage ignores it). */
export function parseUserMetadataHeader(value: string | null): Record<string, unknown> | undefined {
  if (value === null) return undefined;
  if (value.length > (MAX_USER_METADATA * 4) / 3 + 4) throw ERRORS.entityTooLarge("user_metadata");
  try {
    const parsed = JSON.parse(decoder.decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0))));
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function parseUserMetadataField(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (encoder.encode(value).byteLength > MAX_USER_METADATA) throw ERRORS.entityTooLarge("user_metadata");
  try {
    const parsed = JSON.parse(value);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a file's bytes, counting them and hashing them for the ETag, refusing any past the limit. */
class FileSink {
  readonly #hash = createHash("md5");
  size = 0;
  private constructor(readonly file: Deno.FsFile, readonly limit: number) {}

  static async open(path: string, limit: number): Promise<FileSink> {
    return new FileSink(await Deno.open(path, { write: true, create: true, truncate: true }), limit);
  }

  async write(bytes: Uint8Array): Promise<void> {
    if (bytes.byteLength === 0) return;
    this.size += bytes.byteLength;
    if (this.size > this.limit) throw ERRORS.entityTooLarge();
    this.#hash.update(bytes);
    let written = 0;
    while (written < bytes.byteLength) written += await this.file.write(bytes.subarray(written));
  }

  eTag(): string {
    return `"${this.#hash.digest("hex")}"`;
  }

  close(): void {
    try {
      this.file.close();
    } catch {
      // already closed
    }
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  outer: for (let i = haystack.indexOf(first, from); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The bytes of a stream, looked ahead into for delimiters. */
class Lookahead {
  #buffer = new Uint8Array(0);
  #done = false;
  constructor(readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  async #fill(): Promise<boolean> {
    if (this.#done) return false;
    const { done, value } = await this.reader.read();
    if (done) {
      this.#done = true;
      return false;
    }
    const joined = new Uint8Array(this.#buffer.length + value.length);
    joined.set(this.#buffer);
    joined.set(value, this.#buffer.length);
    this.#buffer = joined;
    return true;
  }

  /** The next `n` bytes, consumed; null at the end of the stream. */
  async take(n: number): Promise<Uint8Array | null> {
    while (this.#buffer.length < n) if (!(await this.#fill())) return null;
    const out = this.#buffer.slice(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  /** The bytes before `delimiter` (consumed with it), at most `max` of them; null when it never comes. */
  async until(delimiter: Uint8Array, max: number): Promise<Uint8Array | null> {
    for (;;) {
      const at = indexOf(this.#buffer, delimiter);
      if (at >= 0) {
        const out = this.#buffer.slice(0, at);
        this.#buffer = this.#buffer.subarray(at + delimiter.length);
        return out;
      }
      if (this.#buffer.length > max + delimiter.length) return null;
      if (!(await this.#fill())) return null;
    }
  }

  /** Hands the bytes before `delimiter` to `sink` as they arrive; false when the stream ends first. */
  async pipeUntil(delimiter: Uint8Array, sink: (bytes: Uint8Array) => Promise<void>): Promise<boolean> {
    for (;;) {
      const at = indexOf(this.#buffer, delimiter);
      if (at >= 0) {
        await sink(this.#buffer.subarray(0, at));
        this.#buffer = this.#buffer.subarray(at + delimiter.length);
        return true;
      }
      // Keep what could be the start of a delimiter split across chunks.
      const safe = this.#buffer.length - (delimiter.length - 1);
      if (safe > 0) {
        await sink(this.#buffer.slice(0, safe));
        this.#buffer = this.#buffer.subarray(safe);
      }
      if (!(await this.#fill())) return false;
    }
  }
}

interface PartHeaders {
  name: string | null;
  filename: string | null;
  contentType: string | null;
}

function parsePartHeaders(text: string): PartHeaders {
  const headers: PartHeaders = { name: null, filename: null, contentType: null };
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === "content-type") headers.contentType = value;
    if (field === "content-disposition") {
      headers.name = /(?:^|;)\s*name="([^"]*)"/i.exec(value)?.[1] ?? /(?:^|;)\s*name=([^;]*)/i.exec(value)?.[1] ?? null;
      headers.filename = /;\s*filename="([^"]*)"/i.exec(value)?.[1] ?? /;\s*filename=([^;]*)/i.exec(value)?.[1] ??
        null;
    }
  }
  return headers;
}

function declaredLength(req: Request): number | undefined {
  const value = Number(req.headers.get("content-length") ?? Number.NaN);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

async function openMultipart(req: Request, boundary: string, limits: UploadLimits): Promise<PendingUpload> {
  if (!req.body) throw ERRORS.noContent();
  const reader = req.body.getReader();
  const discard = () => void reader.cancel().catch(() => {});
  const input = new Lookahead(reader);
  const partEnd = encoder.encode(`\r\n--${boundary}`);
  const fields: Record<string, string> = {};
  let fieldBytes = 0;
  try {
    if ((await input.until(encoder.encode(`--${boundary}`), MAX_PART_HEADERS)) === null) throw ERRORS.noContent();
    for (;;) {
      const after = await input.take(2);
      if (after === null || (after[0] === 0x2d && after[1] === 0x2d)) throw ERRORS.noContent(); // "--": no file
      const rawHeaders = await input.until(encoder.encode("\r\n\r\n"), MAX_PART_HEADERS);
      if (rawHeaders === null) throw ERRORS.noContent();
      const headers = parsePartHeaders(decoder.decode(rawHeaders));
      if (headers.filename !== null) {
        // The first file part is the object; a contentType field before it overrides the part's own type.
        const mimetype = fields.contentType || headers.contentType || "application/octet-stream";
        checkMimeType(mimetype, limits.allowedMimeTypes);
        return {
          mimetype,
          cacheControl: fields.cacheControl ? `max-age=${fields.cacheControl}` : "no-cache",
          userMetadata: parseUserMetadataField(fields.metadata ?? fields.userMetadata),
          declaredLength: declaredLength(req),
          async writeTo(path) {
            const sink = await FileSink.open(path, limits.maxFileSize);
            try {
              const ended = await input.pipeUntil(partEnd, (bytes) => sink.write(bytes));
              if (!ended) throw ERRORS.noContent("Request stream closed before upload could complete");
            } finally {
              sink.close();
              discard();
            }
            return { size: sink.size, eTag: sink.eTag() };
          },
          discard,
        };
      }
      const value = await input.until(partEnd, MAX_USER_METADATA + 1);
      if (value === null) {
        if (headers.name === "metadata" || headers.name === "userMetadata") {
          throw ERRORS.entityTooLarge("user_metadata");
        }
        throw ERRORS.noContent();
      }
      fieldBytes += value.byteLength;
      if (fieldBytes > 2 * MAX_USER_METADATA) throw ERRORS.noContent();
      if (headers.name !== null) fields[headers.name] = decoder.decode(value);
    }
  } catch (error) {
    discard();
    throw error;
  }
}

function openBinary(req: Request, limits: UploadLimits): PendingUpload {
  const mimetype = req.headers.get("content-type") || "application/octet-stream";
  checkMimeType(mimetype, limits.allowedMimeTypes);
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limits.maxFileSize) throw ERRORS.entityTooLarge();
  const userMetadata = parseUserMetadataHeader(req.headers.get("x-metadata"));
  const reader = req.body?.getReader();
  const discard = () => void reader?.cancel().catch(() => {});
  return {
    mimetype,
    cacheControl: req.headers.get("cache-control") ?? "no-cache",
    userMetadata,
    declaredLength: declared,
    async writeTo(path) {
      const sink = await FileSink.open(path, limits.maxFileSize);
      try {
        while (reader) {
          const { done, value } = await reader.read();
          if (done) break;
          await sink.write(value);
        }
      } finally {
        sink.close();
        discard();
      }
      return { size: sink.size, eTag: sink.eTag() };
    },
    discard,
  };
}

/** Opens an upload: a multipart form's first file part, or the raw body. */
export async function openUpload(req: Request, limits: UploadLimits): Promise<PendingUpload> {
  const type = req.headers.get("content-type") ?? "";
  if (/^multipart\/form-data/i.test(type)) {
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (!boundary) throw ERRORS.noContent();
    return await openMultipart(req, boundary, limits);
  }
  return openBinary(req, limits);
}

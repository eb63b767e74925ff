// A local stand-in for Supabase Storage (/storage/v1), speaking the part of its
// HTTP API that supabase-js's storage client uses: upload (POST/PUT
// /object/{bucket}/{path}), download (GET /object[/authenticated]/{bucket}/{path}),
// signed URLs (POST /object/sign/{bucket}[/{path}], GET /object/sign/...?token=),
// list (POST /object/list/{bucket}) and remove (DELETE /object/{bucket}).
// As Storage does (storage-api's database layer), every metadata read and
// write runs in the `storage` schema as the caller's role with its claims, so
// the policies on storage.objects decide; the bytes are files under
// DATA_DIR/storage/{bucket}/{name}. The bucket's file_size_limit and
// allowed_mime_types are enforced before anything is written. Errors have
// Storage's body: {statusCode, error, message}.
import { jwtVerify, SignJWT } from "jose";
import postgres from "postgres";
import { bearerToken, type Claims } from "../../functions/_shared/jwt.ts";

export interface StorageOptions {
  sql: postgres.Sql;
  verifyToken: (token: string) => Promise<Claims>;
  /** The legacy HS256 secret, which Storage signs its URL tokens with. */
  jwtSecret: string;
  dataDir: string;
}

class StorageError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly statusCode = String(status)) {
    super(message);
  }
}

const errorResponse = (e: StorageError) =>
  Response.json({ statusCode: e.statusCode, error: e.code, message: e.message }, { status: e.status });

/** Storage answers a missing object with HTTP 400 and statusCode "404". */
const notFound = () => new StorageError(400, "not_found", "Object not found", "404");

interface Bucket {
  id: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
}

interface ObjectRow {
  id: string;
  name: string;
  metadata: { mimetype?: string; size?: number } | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

function safeName(name: string): string {
  const decoded = decodeURIComponent(name);
  if (
    !decoded || decoded.split("/").some((part) => part === "" || part === "." || part === "..") ||
    decoded.includes("\0")
  ) {
    throw new StorageError(400, "InvalidKey", `Invalid key: ${decoded}`);
  }
  return decoded;
}

function mimeAllowed(bucket: Bucket, mime: string): boolean {
  if (!bucket.allowed_mime_types?.length) return true;
  return bucket.allowed_mime_types.some((allowed) =>
    allowed.endsWith("/*") ? mime.startsWith(allowed.slice(0, -1)) : allowed === mime
  );
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * The first file part of a multipart body. By hand, because supabase-js names
 * the file's field "" and the platform's FormData parser drops unnamed fields.
 */
export function fileFromMultipart(body: Uint8Array, boundary: string): { bytes: Uint8Array; mime: string } | null {
  const encoder = new TextEncoder();
  const delimiter = encoder.encode(`--${boundary}`);
  const headerEnd = encoder.encode("\r\n\r\n");
  let at = indexOf(body, delimiter, 0);
  while (at >= 0) {
    const start = at + delimiter.length + 2; // past the delimiter's CRLF
    const next = indexOf(body, delimiter, start);
    if (next < 0) break;
    const split = indexOf(body, headerEnd, start);
    if (split > 0 && split < next) {
      const headers = new TextDecoder().decode(body.subarray(start, split));
      if (/filename=/i.test(headers)) {
        const mime = /content-type:\s*([^\r\n;]+)/i.exec(headers)?.[1].trim() ?? "application/octet-stream";
        return { bytes: body.slice(split + headerEnd.length, next - 2), mime };
      }
    }
    at = next;
  }
  return null;
}

export function createStorage(options: StorageOptions) {
  const { sql } = options;
  const secret = new TextEncoder().encode(options.jwtSecret);
  const root = `${options.dataDir}/storage`;
  const filePath = (bucket: string, name: string) => `${root}/${bucket}/${name}`;

  async function claimsOf(req: Request): Promise<Claims & { role: string }> {
    const token = bearerToken(req.headers.get("authorization")) ?? req.headers.get("apikey");
    if (!token) throw new StorageError(400, "Error", "headers must have required property 'authorization'");
    try {
      const claims = await options.verifyToken(token);
      return { ...claims, role: typeof claims.role === "string" ? claims.role : "anon" };
    } catch {
      throw new StorageError(400, "InvalidJWT", "invalid signature", "403");
    }
  }

  /** One transaction as the caller: role, claims, and the policies on storage.objects. */
  async function asCaller<T>(claims: Claims & { role: string }, work: (tx: postgres.TransactionSql) => Promise<T>) {
    return await sql.begin(async (tx) => {
      await tx`select set_config('role', ${claims.role}, true),
                      set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                      set_config('request.jwt.claim.sub', ${claims.sub ?? ""}, true),
                      set_config('request.jwt.claim.role', ${claims.role}, true)`;
      return await work(tx);
    }) as T;
  }

  async function bucketOf(id: string): Promise<Bucket> {
    const [bucket] = await sql<Bucket[]>`
      select id, public, file_size_limit::float8 as file_size_limit, allowed_mime_types from storage.buckets where id = ${id}`;
    if (!bucket) throw new StorageError(400, "Bucket not found", "Bucket not found", "404");
    return bucket;
  }

  async function readUpload(req: Request, limit: number | null): Promise<{ bytes: Uint8Array; mime: string }> {
    const declared = Number(req.headers.get("content-length") ?? 0);
    if (limit !== null && declared > limit + 64 * 1024) throw tooLarge();
    const type = req.headers.get("content-type") ?? "";
    if (type.startsWith("multipart/form-data")) {
      const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
      const file = boundary ? fileFromMultipart(new Uint8Array(await req.arrayBuffer()), boundary) : null;
      if (!file) throw new StorageError(400, "Error", "No file was sent");
      return file;
    }
    return {
      bytes: new Uint8Array(await req.arrayBuffer()),
      mime: type.split(";")[0].trim() || "application/octet-stream",
    };
  }

  const tooLarge = () =>
    new StorageError(413, "Payload too large", "The object exceeded the maximum allowed size", "413");

  async function upload(req: Request, bucketId: string, name: string, upsert: boolean): Promise<Response> {
    const claims = await claimsOf(req);
    const bucket = await bucketOf(bucketId);
    const { bytes, mime } = await readUpload(req, bucket.file_size_limit);
    if (bucket.file_size_limit !== null && bytes.byteLength > bucket.file_size_limit) throw tooLarge();
    if (!mimeAllowed(bucket, mime)) {
      throw new StorageError(415, "invalid_mime_type", `mime type ${mime} is not supported`, "415");
    }
    const metadata = {
      mimetype: mime,
      size: bytes.byteLength,
      contentLength: bytes.byteLength,
      cacheControl: "max-age=3600",
    };
    const id = crypto.randomUUID();
    try {
      await asCaller(claims, async (tx) => {
        if (upsert) {
          // As Storage: an upsert over an existing object needs the update policy too.
          await tx`insert into storage.objects (id, bucket_id, name, owner, owner_id, metadata)
                   values (${id}, ${bucketId}, ${name}, ${claims.sub ?? null}, ${claims.sub ?? null}, ${
            tx.json(metadata)
          })
                   on conflict (bucket_id, name) do update set metadata = excluded.metadata, updated_at = now()`;
        } else {
          await tx`insert into storage.objects (id, bucket_id, name, owner, owner_id, metadata)
                   values (${id}, ${bucketId}, ${name}, ${claims.sub ?? null}, ${claims.sub ?? null}, ${
            tx.json(metadata)
          })`;
        }
        // The bytes land before the row commits: a row never points at a missing file.
        await Deno.mkdir(filePath(bucketId, name).replace(/\/[^/]+$/, ""), { recursive: true });
        await Deno.writeFile(filePath(bucketId, name), bytes);
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "23505") throw new StorageError(409, "Duplicate", "The resource already exists", "409");
      if (code === "42501") {
        throw new StorageError(403, "Unauthorized", "new row violates row-level security policy", "403");
      }
      throw error;
    }
    return Response.json({ Id: id, Key: `${bucketId}/${name}` });
  }

  async function visible(claims: Claims & { role: string }, bucketId: string, name: string): Promise<ObjectRow> {
    const [row] = await asCaller(
      claims,
      (tx) =>
        tx<ObjectRow[]>`select id, name, metadata, created_at, updated_at, last_accessed_at from storage.objects
                     where bucket_id = ${bucketId} and name = ${name}`,
    );
    if (!row) throw notFound();
    return row;
  }

  async function serve(bucketId: string, row: ObjectRow, download: string | null): Promise<Response> {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(filePath(bucketId, row.name));
    } catch {
      throw notFound();
    }
    const headers: Record<string, string> = {
      "content-type": row.metadata?.mimetype ?? "application/octet-stream",
      "cache-control": "private, max-age=3600",
      "last-modified": row.updated_at.toUTCString(),
    };
    if (download !== null) {
      headers["content-disposition"] = `attachment; filename="${download || row.name.split("/").pop()}"`;
    }
    return new Response(bytes as BodyInit, { headers });
  }

  async function sign(bucketId: string, name: string, expiresIn: number): Promise<string> {
    const token = await new SignJWT({ url: `${bucketId}/${name}` })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + Math.max(1, Math.floor(expiresIn)))
      .sign(secret);
    return `/object/sign/${bucketId}/${name.split("/").map(encodeURIComponent).join("/")}?token=${token}`;
  }

  async function handle(req: Request, path: string, url: URL): Promise<Response> {
    const m = (re: RegExp) => re.exec(path);
    let match: RegExpExecArray | null;
    if (req.method === "GET" && (match = m(/^\/object\/sign\/([^/]+)\/(.+)$/))) {
      const [bucketId, name] = [match[1], safeName(match[2])];
      const token = url.searchParams.get("token") ?? "";
      try {
        const { payload } = await jwtVerify(token, secret);
        if (payload.url !== `${bucketId}/${name}`) throw new Error("another object");
      } catch {
        throw new StorageError(400, "InvalidJWT", "jwt expired or invalid", "400");
      }
      const [row] = await sql<ObjectRow[]>`select id, name, metadata, created_at, updated_at, last_accessed_at
        from storage.objects where bucket_id = ${bucketId} and name = ${name}`;
      if (!row) throw notFound();
      return await serve(bucketId, row, url.searchParams.get("download"));
    }
    if (req.method === "POST" && (match = m(/^\/object\/sign\/([^/]+)$/))) {
      const claims = await claimsOf(req);
      const body = await req.json() as { expiresIn?: number; paths?: string[] };
      const out = [];
      for (const raw of body.paths ?? []) {
        try {
          const name = safeName(raw);
          await visible(claims, match[1], name);
          out.push({ path: raw, signedURL: await sign(match[1], name, body.expiresIn ?? 60), error: null });
        } catch {
          out.push({
            path: raw,
            signedURL: null,
            error: "Either the object does not exist or you do not have access to it",
          });
        }
      }
      return Response.json(out);
    }
    if (req.method === "POST" && (match = m(/^\/object\/sign\/([^/]+)\/(.+)$/))) {
      const claims = await claimsOf(req);
      const name = safeName(match[2]);
      await visible(claims, match[1], name);
      const body = await req.json() as { expiresIn?: number };
      return Response.json({ signedURL: await sign(match[1], name, body.expiresIn ?? 60) });
    }
    if (req.method === "POST" && (match = m(/^\/object\/list\/([^/]+)$/))) {
      const claims = await claimsOf(req);
      const body = await req.json() as { prefix?: string; limit?: number; offset?: number; search?: string };
      const prefix = (body.prefix ?? "").replace(/\/?$/, body.prefix ? "/" : "");
      const rows = await asCaller(
        claims,
        (tx) =>
          tx<ObjectRow[]>`select id, name, metadata, created_at, updated_at, last_accessed_at from storage.objects
                       where bucket_id = ${match![1]} and starts_with(name, ${prefix}) order by name`,
      );
      const seen = new Set<string>();
      const items = [];
      for (const row of rows) {
        const rest = row.name.slice(prefix.length);
        const [head, ...tail] = rest.split("/");
        if (body.search && !head.includes(body.search)) continue;
        if (tail.length > 0) {
          if (seen.has(head)) continue;
          seen.add(head);
          items.push({
            name: head,
            id: null,
            updated_at: null,
            created_at: null,
            last_accessed_at: null,
            metadata: null,
          });
        } else {
          items.push({ ...row, name: head });
        }
      }
      const offset = body.offset ?? 0;
      return Response.json(items.slice(offset, offset + (body.limit ?? 100)));
    }
    if (req.method === "DELETE" && (match = m(/^\/object\/([^/]+)$/))) {
      const claims = await claimsOf(req);
      const body = await req.json() as { prefixes?: string[] };
      const names = (body.prefixes ?? []).map(safeName);
      const deleted = await asCaller(
        claims,
        (tx) =>
          tx<ObjectRow[]>`delete from storage.objects where bucket_id = ${match![1]} and name = any(${names})
                       returning id, name, metadata, created_at, updated_at, last_accessed_at`,
      );
      for (const row of deleted) await Deno.remove(filePath(match[1], row.name)).catch(() => {});
      return Response.json(deleted.map((row) => ({ ...row, bucket_id: match![1] })));
    }
    if ((req.method === "POST" || req.method === "PUT") && (match = m(/^\/object\/([^/]+)\/(.+)$/))) {
      const upsert = req.method === "PUT" || req.headers.get("x-upsert") === "true";
      return await upload(req, match[1], safeName(match[2]), upsert);
    }
    if (
      (req.method === "GET" || req.method === "HEAD") && (match = m(/^\/object\/(?:authenticated\/)?([^/]+)\/(.+)$/))
    ) {
      const claims = await claimsOf(req);
      const name = safeName(match[2]);
      const row = await visible(claims, match[1], name);
      const res = await serve(match[1], row, url.searchParams.get("download"));
      return req.method === "HEAD" ? new Response(null, { headers: res.headers }) : res;
    }
    throw new StorageError(404, "not_found", "Route not found", "404");
  }

  return async function storage(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname.replace(/^\/storage\/v1/, "");
    try {
      return await handle(req, path, url);
    } catch (error) {
      if (error instanceof StorageError) return errorResponse(error);
      if (error instanceof SyntaxError) {
        return errorResponse(new StorageError(400, "Error", "The body is not valid JSON"));
      }
      console.error(JSON.stringify({ event: "storage_error", path, error: String(error) }));
      return errorResponse(new StorageError(500, "internal", "Internal Server Error"));
    }
  };
}

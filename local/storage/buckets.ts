// /storage/v1/bucket: list, get, create, update, empty and delete buckets, as
// storage-api's bucket routes do them. Reads and writes of storage.buckets run
// as the caller, so its policies decide (the service role bypasses them; anon
// and authenticated users get what the project's policies on storage.buckets
// give); emptying a bucket is for the service role only.
import type { Hono } from "hono";
import { readJson } from "./body.ts";
import { authenticate, isUuid, scopeOf, segment, type StorageContext } from "./context.ts";
import { ERRORS, StorageError } from "./errors.ts";
import {
  checkAllowedMimeTypes,
  mustBeValidBucketName,
  parseFileSize,
  parseInput,
  queryInteger,
  schemas,
} from "./validate.ts";

/** Storage's emptyBucketMax: a bucket with more objects than this is not emptied by the API. */
const EMPTY_BUCKET_MAX = 200_000;

const BUCKET_COLUMNS = [
  "id",
  "name",
  "owner",
  "public",
  "file_size_limit",
  "allowed_mime_types",
  "created_at",
  "updated_at",
];

interface BucketRow {
  id: string;
  name: string;
  owner: string | null;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
  type?: string;
}

export function mountBuckets(app: Hono, ctx: StorageContext): void {
  /** Storage's parseMaxSizeLimit: bytes, never above the project's limit. */
  function sizeLimit(value: number | string | null | undefined): number | null | undefined {
    if (value === undefined || value === null) return value;
    const bytes = typeof value === "string" ? parseFileSize(value) : value;
    if (bytes > ctx.fileSizeLimit) throw ERRORS.entityTooLarge();
    return bytes;
  }

  function mimeTypes(value: string[] | null | undefined): string[] | null | undefined {
    if (!value) return value;
    const types = value.filter((type) => type);
    checkAllowedMimeTypes(types);
    return types;
  }

  app.get("/bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const query = parseInput(schemas.listBuckets, {
      limit: queryInteger(c.req.query("limit")),
      offset: queryInteger(c.req.query("offset")),
      sortColumn: c.req.query("sortColumn"),
      sortOrder: c.req.query("sortOrder"),
      search: c.req.query("search"),
    }, "querystring");
    const rows = await ctx.db.asCaller(caller, scopeOf(c, "storage.bucket.list"), (tx) =>
      tx<BucketRow[]>`
        select id, name, public, owner, created_at, updated_at, file_size_limit::float8 as file_size_limit,
               allowed_mime_types, type
        from storage.buckets
        where ${query.search ? tx`name ilike ${"%" + query.search.replace(/[\\%_]/g, "\\$&") + "%"}` : tx`true`}
        ${
        query.sortColumn
          ? tx`order by ${tx(query.sortColumn)} ${query.sortOrder === "desc" ? tx`desc` : tx`asc`}`
          : tx``
      }
        ${query.limit !== undefined ? tx`limit ${query.limit}` : tx``}
        ${query.offset !== undefined ? tx`offset ${query.offset}` : tx``}`);
    return c.json(rows);
  });

  app.get("/bucket/:id", async (c) => {
    const caller = await authenticate(ctx, c);
    const id = segment(c, "/bucket/");
    const [row] = await ctx.db.asCaller(caller, scopeOf(c, "storage.bucket.get"), (tx) =>
      tx<BucketRow[]>`
        select ${tx(BUCKET_COLUMNS.filter((column) => column !== "file_size_limit"))},
               file_size_limit::float8 as file_size_limit
        from storage.buckets where id = ${id} limit 1`);
    if (!row) throw ERRORS.noSuchBucket();
    return c.json(row);
  });

  app.post("/bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const body = parseInput(schemas.createBucket, await readJson(c.req.raw), "body");
    if (body.name.trim() !== body.name) throw ERRORS.invalidBucketName();
    mustBeValidBucketName(body.name);
    if (body.type === "ANALYTICS") {
      throw new StorageError(
        "FeatureNotEnabled",
        409,
        "The feature Iceberg buckets are not enabled for this tenant is not enabled for this resource",
      );
    }
    const sub = caller.claims.sub;
    const row = {
      id: body.id || body.name,
      name: body.name,
      owner: isUuid(sub) ? sub : null,
      owner_id: sub ?? null,
      public: body.public ?? false,
      file_size_limit: sizeLimit(body.file_size_limit) ?? null,
      allowed_mime_types: mimeTypes(body.allowed_mime_types) ?? null,
      type: "STANDARD",
    };
    try {
      await ctx.db.asCaller(
        caller,
        scopeOf(c, "storage.bucket.create"),
        (tx) => tx`insert into storage.buckets ${tx(row)}`,
      );
    } catch (error) {
      if (error instanceof StorageError && error.code === "ResourceAlreadyExists") throw ERRORS.bucketAlreadyExists();
      throw error;
    }
    return c.json({ name: body.name });
  });

  app.put("/bucket/:id", async (c) => {
    const caller = await authenticate(ctx, c);
    const id = segment(c, "/bucket/");
    const body = parseInput(schemas.updateBucket, await readJson(c.req.raw), "body");
    mustBeValidBucketName(id);
    const fields: Record<string, unknown> = {};
    if (body.public !== undefined) fields.public = body.public;
    if (body.file_size_limit !== undefined) fields.file_size_limit = sizeLimit(body.file_size_limit);
    if (body.allowed_mime_types !== undefined) fields.allowed_mime_types = mimeTypes(body.allowed_mime_types);
    if (Object.keys(fields).length === 0) throw ERRORS.noContent();
    const updated = await ctx.db.asCaller(
      caller,
      scopeOf(c, "storage.bucket.update"),
      (tx) => tx`update storage.buckets set ${tx(fields)} where id = ${id} returning id`,
    );
    if (updated.length === 0) throw ERRORS.noSuchBucket();
    return c.json({ message: "Successfully updated" });
  });

  app.post("/bucket/:id/empty", async (c) => {
    const caller = await authenticate(ctx, c, true);
    if (!caller.authenticated) throw ERRORS.accessDenied("Access denied: JWT is not authenticated", 403);
    if (caller.claims.role !== "service_role") throw ERRORS.accessDenied("Access denied: Invalid role", 403);
    const id = segment(c, "/bucket/");
    const removed = await ctx.db.asCaller(caller, scopeOf(c, "storage.bucket.empty"), async (tx) => {
      const [bucket] = await tx`select id from storage.buckets where id = ${id}`;
      if (!bucket) throw ERRORS.noSuchBucket();
      const many = await tx`select 1 from storage.objects where bucket_id = ${id} limit ${EMPTY_BUCKET_MAX + 1}`;
      if (many.length > EMPTY_BUCKET_MAX) {
        throw ERRORS.unableToEmptyBucket("Unable to empty the bucket because it contains too many objects");
      }
      // Storage queues this deletion (as its superuser); the stand-in does it at once.
      await tx`reset role`;
      return await tx<{ bucket_id: string; name: string; version: string | null }[]>`
        delete from storage.objects where bucket_id = ${id} returning bucket_id, name, version`;
    });
    await ctx.files.remove(removed);
    return c.json({ message: "Empty bucket has been queued. Completion may take up to an hour." });
  });

  app.delete("/bucket/:id", async (c) => {
    const caller = await authenticate(ctx, c);
    const id = segment(c, "/bucket/");
    await ctx.db.inTransaction(async (tx, becomeCaller) => {
      // As Storage's superuser: the bucket exists and is empty; then the delete itself as the caller.
      const [bucket] = await tx`select id from storage.buckets where id = ${id} for update`;
      if (!bucket) throw ERRORS.noSuchBucket();
      const [object] = await tx`select 1 from storage.objects where bucket_id = ${id} limit 1`;
      if (object) throw ERRORS.bucketNotEmpty();
      await becomeCaller(caller, scopeOf(c, "storage.bucket.delete"));
      const deleted = await tx`delete from storage.buckets where id = ${id} returning id`;
      if (deleted.length === 0) throw ERRORS.noSuchBucket();
    });
    return c.json({ message: "Successfully deleted" });
  });
}

// /storage/v1/object: the object routes of storage-api as supabase-js's
// storage client calls them. Who may read, write, move or remove an object is
// decided by the policies on storage.objects, acting as the caller; the bytes
// are written only once the caller may write the row (Storage's uploader), and
// the row is completed as Storage's superuser. Public buckets are read without
// policies; signed URLs carry a token scoped to one object and one action.
import type { Context, Hono } from "hono";
import { jwtVerify, SignJWT } from "jose";
import { openUpload, readJson } from "./body.ts";
import { authenticate, bucketAndKey, isUuid, scopeOf, segment, type StorageContext } from "./context.ts";
import type { Caller, RequestScope, Tx } from "./database.ts";
import { ERRORS, routeNotFound, StorageError } from "./errors.ts";
import { listObjects, listObjectsV2 } from "./listing.ts";
import { type ObjectRow, renderInfo, renderObject } from "./render.ts";
import { checkExpiresIn, mustBeValidBucketName, mustBeValidKey, parseInput, schemas } from "./validate.ts";

interface BucketRow {
  id: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
}

const OBJECT_COLUMNS = [
  "id",
  "bucket_id",
  "name",
  "owner",
  "owner_id",
  "version",
  "metadata",
  "user_metadata",
  "created_at",
  "updated_at",
  "last_accessed_at",
] as const;

/** The columns of a removed object in Storage's answer (its objectSchema). */
const publicObject = (row: ObjectRow) => Object.fromEntries(OBJECT_COLUMNS.map((column) => [column, row[column]]));

/** A jsonb parameter (null stays SQL null). */
const json = (tx: Tx, value: Record<string, unknown> | null) =>
  value === null ? null : tx.json(value as Parameters<Tx["json"]>[0]);

const isEmptyFolder = (key: string) => key.endsWith(".emptyFolderPlaceholder");

export function mountObjects(app: Hono, ctx: StorageContext): void {
  const { db, files } = ctx;

  async function findBucket(id: string): Promise<BucketRow | null> {
    const [bucket] = await db.asSuper((tx) =>
      tx<BucketRow[]>`select id, public, file_size_limit::float8 as file_size_limit, allowed_mime_types
                      from storage.buckets where id = ${id}`
    );
    return bucket ?? null;
  }

  const selectObject = (tx: Tx, bucket: string, key: string) =>
    tx<ObjectRow[]>`select ${tx(OBJECT_COLUMNS)} from storage.objects
                    where bucket_id = ${bucket} and name = ${key} limit 1`;

  /** Storage's findObject: as the caller (policies apply), or as its superuser with null. */
  async function findObject(caller: Caller | null, scope: RequestScope, bucket: string, key: string) {
    mustBeValidKey(key);
    const [row] = caller
      ? await db.asCaller(caller, scope, (tx) => selectObject(tx, bucket, key))
      : await db.asSuper((tx) => selectObject(tx, bucket, key));
    if (!row) throw ERRORS.noSuchKey();
    return row;
  }

  /** The bucket and key of an object path after `prefix`; Storage has no such route without a key. */
  function objectPath(c: Context, prefix: string): { bucket: string; key: string } {
    const path = bucketAndKey(c, prefix);
    if (!new URL(c.req.url).pathname.slice(`/storage/v1${prefix}`.length).includes("/")) {
      throw routeNotFound(c.req.method, new URL(c.req.url).pathname.slice("/storage/v1".length));
    }
    mustBeValidBucketName(path.bucket);
    return path;
  }

  // Section: signed URL tokens

  async function signToken(claims: Record<string, unknown>, expiresIn: number): Promise<string> {
    return await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
      .sign(ctx.urlSigningKey);
  }

  /** Storage's verifyObjectSignature: signature, scope, the object it names, expiry. */
  async function verifyToken(token: string, bucket: string, key: string, scope: "download" | "upload") {
    let payload: Record<string, unknown>;
    try {
      payload = (await jwtVerify(token, ctx.urlSigningKey, { algorithms: ["HS256"] })).payload;
    } catch (error) {
      throw ERRORS.invalidJwt(error instanceof Error ? error.message : "Invalid JWT");
    }
    const scoped = scope === "upload"
      ? payload.scope === "upload" || (payload.scope === undefined && "upsert" in payload)
      : payload.scope === "download" || (payload.scope === undefined && !("upsert" in payload));
    if (!scoped) throw ERRORS.invalidSignature(`Token is not scoped for ${scope}`);
    if (payload.url !== `${bucket}/${key}`) throw ERRORS.invalidSignature();
    if (typeof payload.exp !== "number" || payload.exp * 1000 < Date.now()) throw ERRORS.expiredSignature();
    return payload;
  }

  // Section: reading

  /** GET and HEAD of /object/{bucket}/{key} and /object/authenticated/...: public buckets need no policy. */
  async function download(c: Context, prefix: string, optionalAuth: boolean, operation: string) {
    const caller = await authenticate(ctx, c, optionalAuth);
    const { bucket, key } = objectPath(c, prefix);
    const found = await findBucket(bucket);
    if (!found || (!caller.authenticated && !found.public)) throw ERRORS.noSuchBucket();
    const row = await findObject(found.public ? null : caller, scopeOf(c, operation), bucket, key);
    return await renderObject(files, c, row, { download: c.req.query("download") });
  }

  async function info(c: Context, prefix: string, mode: "optional" | "required" | "public") {
    const caller = mode === "public" ? null : await authenticate(ctx, c, mode === "optional");
    const { bucket, key } = objectPath(c, prefix);
    const found = await findBucket(bucket);
    if (!found || (caller && !caller.authenticated && !found.public)) throw ERRORS.noSuchBucket();
    const operation = mode === "public" ? "storage.object.info_public" : "object.get_authenticated_info";
    const row = await findObject(found.public || !caller ? null : caller, scopeOf(c, operation), bucket, key);
    return c.req.method === "HEAD" ? await renderObject(files, c, row, { head: true }) : renderInfo(c, row);
  }

  app.get("/object/public/*", async (c) => {
    const { bucket, key } = objectPath(c, "/object/public/");
    const found = await findBucket(bucket);
    if (!found?.public) throw ERRORS.noSuchBucket();
    const row = await findObject(null, scopeOf(c, "storage.object.get_public"), bucket, key);
    return await renderObject(files, c, row, { download: c.req.query("download"), head: c.req.method === "HEAD" });
  });
  app.get(
    "/object/authenticated/*",
    (c) => download(c, "/object/authenticated/", false, "storage.object.get_authenticated"),
  );
  app.get("/object/sign/*", async (c) => {
    if (c.req.method === "HEAD") throw routeNotFound("HEAD", new URL(c.req.url).pathname.slice("/storage/v1".length));
    const { bucket, key } = objectPath(c, "/object/sign/");
    const token = c.req.query("token");
    if (token === undefined) throw ERRORS.invalidRequest("querystring must have required property 'token'");
    const payload = await verifyToken(token, bucket, key, "download");
    const row = await findObject(null, scopeOf(c, "storage.object.get_signed"), bucket, key);
    return await renderObject(files, c, row, {
      download: c.req.query("download"),
      expires: new Date((payload.exp as number) * 1000).toUTCString(),
    });
  });
  app.get("/object/info/public/*", (c) => info(c, "/object/info/public/", "public"));
  app.get("/object/info/authenticated/*", (c) => info(c, "/object/info/authenticated/", "required"));
  app.get("/object/info/*", (c) => info(c, "/object/info/", "optional"));
  app.get("/object/*", async (c) => {
    if (c.req.method === "HEAD") return await info(c, "/object/", "optional");
    return await download(c, "/object/", true, "storage.object.get_authenticated");
  });

  // Section: signing

  app.post("/object/sign/:bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const bucket = segment(c, "/object/sign/");
    mustBeValidBucketName(bucket);
    const body = parseInput(schemas.signMany, await readJson(c.req.raw), "body");
    checkExpiresIn(body.expiresIn);
    const visible = await db.asCaller(
      caller,
      scopeOf(c, "storage.object.sign_many"),
      (tx) =>
        tx<
          { name: string }[]
        >`select name from storage.objects where bucket_id = ${bucket} and name = any(${body.paths})`,
    );
    const names = new Set(visible.map((row) => row.name));
    return c.json(
      await Promise.all(body.paths.map(async (path) => {
        if (!names.has(path)) {
          return { error: "Either the object does not exist or you do not have access to it", path, signedURL: null };
        }
        const url = `${bucket}/${path}`;
        const token = await signToken({ url, scope: "download" }, body.expiresIn);
        return { error: null, path, signedURL: `/object/sign/${url}?token=${token}` };
      })),
    );
  });

  app.post("/object/sign/*", async (c) => {
    const caller = await authenticate(ctx, c);
    const { bucket, key } = objectPath(c, "/object/sign/");
    const body = parseInput(schemas.signOne, await readJson(c.req.raw), "body");
    checkExpiresIn(body.expiresIn);
    await findObject(caller, scopeOf(c, "storage.object.sign"), bucket, key);
    // Image transformations are not offered locally: as Storage with them disabled, `transform` is ignored.
    const url = `${bucket}/${key}`;
    const token = await signToken({ url, scope: "download" }, body.expiresIn);
    return c.json({ signedURL: `/object/sign/${url}?token=${token}` });
  });

  // Section: writing

  interface UploadOptions {
    /** Null for a signed upload, which Storage completes as its superuser (the URL's token was the permission). */
    caller: Caller | null;
    owner: string | undefined;
    upsert: boolean;
    scope: RequestScope;
  }

  /** Storage's canUpload: the insert (or, with upsert, insert-or-update) the caller would make, rolled back. */
  async function canUpload(
    options: UploadOptions,
    bucket: string,
    key: string,
    metadata: Record<string, unknown>,
    userMetadata: Record<string, unknown> | undefined,
  ) {
    const values = {
      bucket_id: bucket,
      name: key,
      version: "1",
      owner: isUuid(options.owner) ? options.owner : null,
      owner_id: options.owner ?? null,
    };
    try {
      await db.testPermission(options.caller, options.scope, (tx) => {
        const row = { ...values, metadata: json(tx, metadata), user_metadata: json(tx, userMetadata ?? null) };
        return options.upsert
          ? tx`insert into storage.objects ${tx(row)} on conflict (bucket_id, name) do update set
                 metadata = excluded.metadata, user_metadata = excluded.user_metadata, version = excluded.version,
                 owner = excluded.owner, owner_id = excluded.owner_id`
          : tx`insert into storage.objects ${tx(row)}`;
      });
    } catch (error) {
      if (error instanceof StorageError && error.code === "ResourceAlreadyExists") throw ERRORS.keyAlreadyExists();
      throw error;
    }
  }

  /** Writes the object's row as Storage's superuser once its bytes are in place; returns the row and the replaced version. */
  async function completeUpload(bucket: string, key: string, owner: string | undefined, values: {
    version: string;
    metadata: Record<string, unknown>;
    user_metadata: Record<string, unknown> | null;
  }) {
    return await db.asSuper(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${`${bucket}/${key}`}))`;
      const [previous] = await tx<ObjectRow[]>`
        select ${tx(OBJECT_COLUMNS)} from storage.objects where bucket_id = ${bucket} and name = ${key} for update`;
      const row = {
        bucket_id: bucket,
        name: key,
        owner: isUuid(owner) ? owner : null,
        owner_id: owner ?? null,
        version: values.version,
        metadata: json(tx, values.metadata),
        user_metadata: json(tx, values.user_metadata),
      };
      const [saved] = await tx<ObjectRow[]>`
        insert into storage.objects ${tx(row)} on conflict (bucket_id, name) do update set
          metadata = excluded.metadata, user_metadata = excluded.user_metadata, version = excluded.version,
          owner = excluded.owner, owner_id = excluded.owner_id, updated_at = now(), last_accessed_at = now()
        returning ${tx(OBJECT_COLUMNS)}`;
      return { saved, previous: previous ?? null };
    });
  }

  async function upload(c: Context, bucket: string, key: string, options: UploadOptions) {
    const found = await findBucket(bucket);
    if (!found) throw ERRORS.noSuchBucket();
    const emptyFolder = isEmptyFolder(key);
    const bucketLimit = found.file_size_limit ?? ctx.fileSizeLimit;
    const pending = await openUpload(c.req.raw, {
      maxFileSize: emptyFolder ? 0 : Math.min(bucketLimit, ctx.fileSizeLimit),
      allowedMimeTypes: emptyFolder ? [] : found.allowed_mime_types ?? [],
    });
    const temp = await files.tempPath();
    try {
      mustBeValidKey(key);
      await canUpload(options, bucket, key, {
        mimetype: pending.mimetype,
        ...(pending.declaredLength !== undefined ? { contentLength: pending.declaredLength } : {}),
      }, pending.userMetadata);
      const { size, eTag } = await pending.writeTo(temp);
      const version = crypto.randomUUID();
      const now = new Date();
      await files.commit(temp, version);
      const metadata = {
        eTag,
        size,
        mimetype: pending.mimetype,
        cacheControl: pending.cacheControl,
        lastModified: now.toISOString(),
        contentLength: size,
        httpStatusCode: 200,
      };
      let result;
      try {
        result = await completeUpload(bucket, key, options.owner, {
          version,
          metadata,
          user_metadata: pending.userMetadata ?? null,
        });
      } catch (error) {
        await files.remove([{ bucket_id: bucket, name: key, version }]);
        throw error;
      }
      if (result.previous) await files.remove([result.previous]);
      return result.saved;
    } finally {
      pending.discard();
      await files.discard(temp);
    }
  }

  app.post("/object/move", async (c) => {
    const caller = await authenticate(ctx, c);
    const body = parseInput(schemas.move, await readJson(c.req.raw), "body");
    const destinationBucket = body.destinationBucket || body.bucketId;
    mustBeValidBucketName(body.bucketId);
    mustBeValidKey(body.destinationKey);
    const scope = scopeOf(c, "storage.object.move");
    const owner = caller.claims.sub;
    const moved = {
      bucket_id: destinationBucket,
      name: body.destinationKey,
      owner: isUuid(owner) ? owner : null,
      owner_id: owner ?? null,
    };
    // As Storage: the caller must see the source and may update it into its new place (rolled back), ...
    await db.testPermission(caller, scope, async (tx) => {
      const [source] = await selectObject(tx, body.bucketId, body.sourceKey);
      if (!source) throw ERRORS.noSuchKey();
      const updated = await tx`update storage.objects set ${tx(moved)}
                               where bucket_id = ${body.bucketId} and name = ${body.sourceKey} returning id`;
      if (updated.length === 0) throw ERRORS.noSuchKey();
    });
    // ... then Storage's superuser moves it (the bytes stay with the version).
    const row = await db.asSuper(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${`${destinationBucket}/${body.destinationKey}`}))`;
      const [updated] = await tx<ObjectRow[]>`
        update storage.objects set ${tx(moved)}, updated_at = now()
        where bucket_id = ${body.bucketId} and name = ${body.sourceKey} returning ${tx(OBJECT_COLUMNS)}`;
      if (!updated) throw ERRORS.noSuchKey();
      return updated;
    });
    return c.json({ message: "Successfully moved", Id: row.id, Key: row.name });
  });

  app.post("/object/copy", async (c) => {
    const caller = await authenticate(ctx, c);
    const body = parseInput(schemas.copy, await readJson(c.req.raw), "body");
    const destinationBucket = body.destinationBucket || body.bucketId;
    mustBeValidBucketName(body.bucketId);
    mustBeValidKey(body.destinationKey);
    const scope = scopeOf(c, "storage.object.copy");
    const upsert = c.req.header("x-upsert") === "true";
    const source = await findObject(caller, scope, body.bucketId, body.sourceKey);
    const copyMetadata = body.copyMetadata ?? true;
    const metadata: Record<string, unknown> = { ...(source.metadata ?? {}) };
    if (!copyMetadata) {
      if (body.metadata?.cacheControl !== undefined) metadata.cacheControl = body.metadata.cacheControl;
      if (body.metadata?.mimetype !== undefined) metadata.mimetype = body.metadata.mimetype;
    }
    const userMetadata = copyMetadata ? source.user_metadata : undefined;
    await canUpload(
      { caller, owner: caller.claims.sub, upsert, scope },
      destinationBucket,
      body.destinationKey,
      metadata,
      userMetadata ?? undefined,
    );
    const version = crypto.randomUUID();
    if (!(await files.copy(source, version))) throw ERRORS.noSuchKey();
    let result;
    try {
      result = await completeUpload(destinationBucket, body.destinationKey, caller.claims.sub, {
        version,
        metadata: { ...metadata, lastModified: new Date().toISOString() },
        user_metadata: userMetadata ?? null,
      });
    } catch (error) {
      await files.remove([{ bucket_id: destinationBucket, name: body.destinationKey, version }]);
      throw error;
    }
    if (result.previous) await files.remove([result.previous]);
    const { saved } = result;
    return c.json({ Id: saved.id, Key: `${destinationBucket}/${body.destinationKey}`, ...publicObject(saved) });
  });

  app.post("/object/upload/sign/*", async (c) => {
    const caller = await authenticate(ctx, c);
    const { bucket, key } = objectPath(c, "/object/upload/sign/");
    mustBeValidKey(key);
    const upsert = c.req.header("x-upsert") === "true";
    const declared = Number(c.req.header("content-length"));
    await canUpload(
      { caller, owner: caller.claims.sub, upsert, scope: scopeOf(c, "storage.object.sign_upload_url") },
      bucket,
      key,
      {
        mimetype: c.req.header("content-type"),
        ...(Number.isFinite(declared) ? { contentLength: declared } : {}),
      },
      undefined,
    );
    const url = `${bucket}/${key}`;
    const token = await signToken({ owner: caller.claims.sub, url, upsert, scope: "upload" }, ctx.uploadUrlSeconds);
    return c.json({ url: `/object/upload/sign/${url}?token=${token}`, token });
  });

  app.put("/object/upload/sign/*", async (c) => {
    const { bucket, key } = objectPath(c, "/object/upload/sign/");
    const token = c.req.query("token");
    if (token === undefined) throw ERRORS.invalidRequest("querystring must have required property 'token'");
    const payload = await verifyToken(token, bucket, key, "upload");
    await upload(c, bucket, key, {
      caller: null,
      owner: typeof payload.owner === "string" ? payload.owner : undefined,
      upsert: payload.upsert === true,
      scope: scopeOf(c, "storage.object.upload_signed"),
    });
    return c.json({ Key: `${bucket}/${key}` });
  });

  app.post("/object/list/:bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const bucket = segment(c, "/object/list/");
    mustBeValidBucketName(bucket);
    const body = parseInput(schemas.list, await readJson(c.req.raw), "body");
    return c.json(
      await db.asCaller(caller, scopeOf(c, "storage.object.list"), (tx) => listObjects(tx, bucket, body)),
    );
  });

  app.post("/object/list-v2/:bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const bucket = segment(c, "/object/list-v2/");
    mustBeValidBucketName(bucket);
    const body = parseInput(schemas.listV2, await readJson(c.req.raw), "body");
    return c.json(
      await db.asCaller(caller, scopeOf(c, "storage.object.list_v2"), (tx) => listObjectsV2(tx, bucket, body)),
    );
  });

  app.post("/object/*", async (c) => {
    const caller = await authenticate(ctx, c);
    const { bucket, key } = objectPath(c, "/object/");
    const upsert = c.req.header("x-upsert") === "true";
    const saved = await upload(c, bucket, key, {
      caller,
      owner: caller.claims.sub,
      upsert,
      scope: scopeOf(c, "storage.object.upload"),
    });
    return c.json({ Id: saved.id, Key: `${bucket}/${key}` });
  });

  app.put("/object/*", async (c) => {
    const caller = await authenticate(ctx, c);
    const { bucket, key } = objectPath(c, "/object/");
    const saved = await upload(c, bucket, key, {
      caller,
      owner: caller.claims.sub,
      upsert: true,
      scope: scopeOf(c, "storage.object.upload_update"),
    });
    return c.json({ Id: saved.id, Key: `${bucket}/${key}` });
  });

  // Section: removing

  app.delete("/object/:bucket", async (c) => {
    const caller = await authenticate(ctx, c);
    const bucket = segment(c, "/object/");
    mustBeValidBucketName(bucket);
    const body = parseInput(schemas.deleteObjects, await readJson(c.req.raw), "body");
    const deleted = await db.asCaller(
      caller,
      scopeOf(c, "storage.object.delete_many"),
      (tx) =>
        tx<ObjectRow[]>`delete from storage.objects where bucket_id = ${bucket} and name = any(${body.prefixes})
                      returning ${tx(OBJECT_COLUMNS)}`,
    );
    await files.remove(deleted);
    return c.json(deleted.map(publicObject));
  });

  app.delete("/object/*", async (c) => {
    const caller = await authenticate(ctx, c);
    const { bucket, key } = objectPath(c, "/object/");
    const removed = await db.inTransaction(async (tx, becomeCaller) => {
      const [row] = await tx<ObjectRow[]>`
        select ${tx(OBJECT_COLUMNS)} from storage.objects where bucket_id = ${bucket} and name = ${key} for update`;
      if (!row) throw ERRORS.noSuchKey();
      await becomeCaller(caller, scopeOf(c, "storage.object.delete"));
      const deleted = await tx`delete from storage.objects where bucket_id = ${bucket} and name = ${key} returning id`;
      if (deleted.length === 0) throw ERRORS.accessDenied("Access denied");
      return row;
    });
    await files.remove([removed]);
    return c.json({ message: "Successfully deleted" });
  });
}

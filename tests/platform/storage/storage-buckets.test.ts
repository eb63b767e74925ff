// The Storage bucket API with the real supabase-js client, as storage-api
// answers it: the service role manages buckets; anon and signed-in users do
// what the policies on storage.buckets let them (here, test policies: a user
// creates buckets named `mine-*` and sees, changes and removes only those it
// owns); limits are checked as Storage checks them; errors carry Storage's
// status codes and messages; a route Storage does not have is its own 404.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createUser, db, signIn, stack, uniqueEmail } from "../../support/api.ts";

const client = (key: string, token?: string): SupabaseClient =>
  createClient(stack().apiUrl, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });

async function user(): Promise<{ id: string; client: SupabaseClient }> {
  const email = uniqueEmail("storage");
  const { id } = await createUser(email, "storage-user-pass");
  const { access_token } = await signIn(email, "storage-user-pass");
  return { id, client: client(stack().anonKey, access_token) };
}

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

describe("the bucket API as the service role", () => {
  const service = () => client(stack().serviceRoleKey).storage;

  it("creates, reads, lists, updates, empties and deletes a bucket", async () => {
    const id = unique("s26-bucket");
    const created = await service().createBucket(id, {
      public: true,
      fileSizeLimit: "1mb",
      allowedMimeTypes: ["image/png", "text/*"],
    });
    expect(created).toEqual({ data: { name: id }, error: null });

    const got = await service().getBucket(id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      id,
      name: id,
      public: true,
      file_size_limit: 1_000_000,
      allowed_mime_types: ["image/png", "text/*"],
    });
    expect(typeof got.data?.created_at).toBe("string");

    const listed = await service().listBuckets({ search: id, sortColumn: "name", sortOrder: "desc", limit: 5 });
    expect(listed.data?.map((b) => b.id)).toEqual([id]);
    expect(listed.data?.[0]).toMatchObject({ type: "STANDARD", public: true });

    const updated = await service().updateBucket(id, { public: false, fileSizeLimit: null, allowedMimeTypes: null });
    expect(updated).toEqual({ data: { message: "Successfully updated" }, error: null });
    expect((await service().getBucket(id)).data).toMatchObject({
      public: false,
      file_size_limit: null,
      allowed_mime_types: null,
    });

    const duplicate = await service().createBucket(id);
    expect(duplicate.error?.message).toBe("The resource already exists");
    expect(duplicate.error).toMatchObject({ status: 400, statusCode: "409" });

    expect((await service().from(id).upload("a/one.txt", "one", { contentType: "text/plain" })).error).toBeNull();
    expect((await service().from(id).upload("two.txt", "two", { contentType: "text/plain" })).error).toBeNull();
    const notEmpty = await service().deleteBucket(id);
    expect(notEmpty.error?.message).toBe("The bucket you tried to delete is not empty");
    expect(notEmpty.error).toMatchObject({ statusCode: "409" });

    const emptied = await service().emptyBucket(id);
    expect(emptied.data?.message).toBe("Empty bucket has been queued. Completion may take up to an hour.");
    expect((await service().from(id).list("")).data).toEqual([]);
    expect(await db()`select 1 from storage.objects where bucket_id = ${id}`).toHaveLength(0);

    expect(await service().deleteBucket(id)).toEqual({ data: { message: "Successfully deleted" }, error: null });
    const gone = await service().getBucket(id);
    expect(gone.error?.message).toBe("Bucket not found");
    expect(gone.error).toMatchObject({ status: 400, statusCode: "404" });
  });

  it("checks names, sizes and MIME types as Storage does", async () => {
    const badName = await service().createBucket("a/b");
    expect(badName.error?.message).toBe("Bucket name invalid");
    const spaced = await service().createBucket(" padded");
    expect(spaced.error?.message).toBe("Bucket name invalid");
    // The project's limit (config.toml [storage] file_size_limit, 5 MiB) caps a bucket's.
    const tooBig = await service().createBucket(unique("s26-big"), { public: false, fileSizeLimit: "6mb" });
    expect(tooBig.error?.message).toBe("The object exceeded the maximum allowed size");
    expect(tooBig.error).toMatchObject({ statusCode: "413" });
    const badSize = await service().createBucket(unique("s26-size"), { public: false, fileSizeLimit: "ten" });
    expect(badSize.error).toMatchObject({ status: 400, statusCode: "400" });
    const badMime = await service().createBucket(unique("s26-mime"), { public: false, allowedMimeTypes: ["images"] });
    expect(badMime.error?.message).toBe("mime type images is not supported");
    const emptyUpdate = await fetch(`${stack().apiUrl}/storage/v1/bucket/delivery-proofs`, {
      method: "PUT",
      headers: { authorization: `Bearer ${stack().serviceRoleKey}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "delivery-proofs" }),
    });
    expect(emptyUpdate.status).toBe(400);
    expect((await emptyUpdate.json()).message).toBe("No content provided");
    const missing = await service().updateBucket(unique("s26-none"), { public: true });
    expect(missing.error?.message).toBe("Bucket not found");
  });
});

describe("the bucket API under the policies on storage.buckets", () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let bob: Awaited<ReturnType<typeof user>>;
  beforeAll(async () => {
    await db().unsafe(`
      drop policy if exists s26_buckets_insert_mine on storage.buckets;
      drop policy if exists s26_buckets_select_own on storage.buckets;
      drop policy if exists s26_buckets_update_own on storage.buckets;
      drop policy if exists s26_buckets_delete_own on storage.buckets;
      create policy s26_buckets_insert_mine on storage.buckets for insert to authenticated
        with check (name like 'mine-%' and owner = (select auth.uid()));
      create policy s26_buckets_select_own on storage.buckets for select to authenticated
        using (owner = (select auth.uid()));
      create policy s26_buckets_update_own on storage.buckets for update to authenticated
        using (owner = (select auth.uid()));
      create policy s26_buckets_delete_own on storage.buckets for delete to authenticated
        using (owner = (select auth.uid()));`);
    [alice, bob] = await Promise.all([user(), user()]);
  });

  it("refuses anon: nothing to list, nothing to create", async () => {
    const anon = client(stack().anonKey).storage;
    expect((await anon.listBuckets()).data).toEqual([]);
    const created = await anon.createBucket(unique("mine"));
    expect(created.error?.message).toBe("new row violates row-level security policy");
    expect(created.error).toMatchObject({ status: 400, statusCode: "403" });
    expect((await anon.getBucket("delivery-proofs")).error?.message).toBe("Bucket not found");
  });

  it("lets a user create, see, change and remove its own buckets, and nobody else's", async () => {
    const id = unique("mine");
    expect((await alice.client.storage.createBucket(id, { public: false })).error).toBeNull();
    const [row] = await db()`select owner, owner_id from storage.buckets where id = ${id}`;
    expect(row).toEqual({ owner: alice.id, owner_id: alice.id });

    const refused = await alice.client.storage.createBucket(unique("theirs"));
    expect(refused.error?.message).toBe("new row violates row-level security policy");

    expect((await alice.client.storage.getBucket(id)).data?.id).toBe(id);
    expect((await alice.client.storage.listBuckets()).data?.map((b) => b.id)).toContain(id);
    expect((await bob.client.storage.getBucket(id)).error?.message).toBe("Bucket not found");
    expect((await bob.client.storage.listBuckets()).data?.map((b) => b.id)).not.toContain(id);
    expect((await bob.client.storage.updateBucket(id, { public: true })).error?.message).toBe("Bucket not found");
    expect((await bob.client.storage.deleteBucket(id)).error?.message).toBe("Bucket not found");
    // Emptying a bucket is for the service role only, whoever owns it.
    const emptied = await alice.client.storage.emptyBucket(id);
    expect(emptied.error?.message).toBe("Access denied: Invalid role");
    expect(emptied.error).toMatchObject({ status: 403, statusCode: "403" });

    expect((await alice.client.storage.updateBucket(id, { public: true })).error).toBeNull();
    expect((await db()`select public from storage.buckets where id = ${id}`)[0].public).toBe(true);
    expect((await alice.client.storage.deleteBucket(id)).error).toBeNull();
    expect(await db()`select 1 from storage.buckets where id = ${id}`).toHaveLength(0);
  });
});

describe("a call Storage does not have", () => {
  const call = (method: string, path: string) =>
    fetch(`${stack().apiUrl}/storage/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${stack().serviceRoleKey}` },
    });

  it("is Storage's own 404, never a misleading 'Bucket not found'", async () => {
    for (
      const [method, path] of [
        ["GET", "/object/delivery-proofs"],
        ["GET", "/nothing/here"],
        ["GET", "/render/image/public/delivery-proofs/a.png"],
        ["POST", "/upload/resumable"],
        ["PATCH", "/bucket/delivery-proofs"],
      ]
    ) {
      const res = await call(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({
        statusCode: "404",
        code: "InvalidRequest",
        error: "Not Found",
        message: `Route ${method}:${path} not found`,
      });
    }
  });

  it("answers a browser's preflight, as the API gateway does for Storage", async () => {
    const res = await fetch(`${stack().apiUrl}/storage/v1/object/delivery-proofs/a/b.png`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, x-upsert, x-metadata",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toContain("x-upsert");
  });

  it("reports the Storage version the stand-in follows", async () => {
    const res = await call("GET", "/version");
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

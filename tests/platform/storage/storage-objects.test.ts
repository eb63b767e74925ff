// The Storage object API with the real supabase-js client, as storage-api
// answers it: public URLs, info and exists, move and copy, signed upload URLs,
// list and list-v2, upserts (x-upsert) decided by the update policy, bucket
// limits, and how objects are served (nosniff, HTML as text, ranges, ETags).
// Test buckets `s26-*` carry test policies: a signed-in user writes, reads,
// replaces and removes its own objects in `s26-notes-*`, and only adds and
// reads them in `s26-append-*` (no update policy there).
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createUser, db, signIn, stack, uniqueEmail } from "../../support/api.ts";

const client = (key: string, token?: string): SupabaseClient =>
  createClient(stack().apiUrl, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
const service = () => client(stack().serviceRoleKey).storage;
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function user(): Promise<{ id: string; client: SupabaseClient }> {
  const email = uniqueEmail("objects");
  const { id } = await createUser(email, "objects-user-pass");
  const { access_token } = await signIn(email, "objects-user-pass");
  return { id, client: client(stack().anonKey, access_token) };
}

async function bucket(prefix: string, options: Parameters<ReturnType<typeof service>["createBucket"]>[1] = {
  public: false,
}): Promise<string> {
  const id = unique(prefix);
  const { error } = await service().createBucket(id, options);
  expect(error).toBeNull();
  return id;
}

/** Where the stack keeps an object version's bytes (DATA_DIR/storage/objects; the log file sits in DATA_DIR). */
const fileOf = (version: string) => `${dirname(stack().logFile)}/storage/objects/${version}`;
const text = (body: string, type = "text/plain") => new Blob([body], { type });

beforeAll(async () => {
  await db().unsafe(`
    drop policy if exists s26_objects_insert_own on storage.objects;
    drop policy if exists s26_objects_select_own on storage.objects;
    drop policy if exists s26_objects_update_own_notes on storage.objects;
    drop policy if exists s26_objects_delete_own on storage.objects;
    create policy s26_objects_insert_own on storage.objects for insert to authenticated
      with check (bucket_id like 's26-%' and owner_id = (select auth.uid())::text);
    create policy s26_objects_select_own on storage.objects for select to authenticated
      using (bucket_id like 's26-%' and owner_id = (select auth.uid())::text);
    create policy s26_objects_update_own_notes on storage.objects for update to authenticated
      using (bucket_id like 's26-notes-%' and owner_id = (select auth.uid())::text);
    create policy s26_objects_delete_own on storage.objects for delete to authenticated
      using (bucket_id like 's26-%' and owner_id = (select auth.uid())::text);`);
});

describe("public buckets", () => {
  it("serve their objects at /object/public/... to anyone, private ones to no one", async () => {
    const open = await bucket("s26-public", { public: true });
    const closed = await bucket("s26-private");
    for (const id of [open, closed]) {
      expect((await service().from(id).upload("docs/hello.txt", text("hello"))).error).toBeNull();
    }
    const url = service().from(open).getPublicUrl("docs/hello.txt").data.publicUrl;
    expect(url).toBe(`${stack().apiUrl}/storage/v1/object/public/${open}/docs/hello.txt`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello");
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);

    const refused = await fetch(service().from(closed).getPublicUrl("docs/hello.txt").data.publicUrl);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ statusCode: "404", message: "Bucket not found" });

    // Anon reads a public bucket through the ordinary download route too, without any policy.
    const anon = client(stack().anonKey).storage;
    expect(await (await anon.from(open).download("docs/hello.txt")).data?.text()).toBe("hello");
    expect((await anon.from(closed).download("docs/hello.txt")).error?.message).toBe("Object not found");
    const attachment = await fetch(
      service().from(open).getPublicUrl("docs/hello.txt", { download: "report.txt" }).data
        .publicUrl,
    );
    expect(attachment.headers.get("content-disposition")).toBe(
      "attachment; filename=report.txt; filename*=UTF-8''report.txt",
    );
  });

  it("serve HTML as plain text, answer ranges and conditional requests", async () => {
    const open = await bucket("s26-public", { public: true });
    await service().from(open).upload("page.html", text("<script>alert(1)</script>", "text/html"));
    const url = service().from(open).getPublicUrl("page.html").data.publicUrl;
    const page = await fetch(url);
    expect(page.headers.get("content-type")).toBe("text/plain");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const etag = page.headers.get("etag")!;
    await page.body?.cancel();

    const part = await fetch(url, { headers: { range: "bytes=1-6" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 1-6/25");
    expect(await part.text()).toBe("script");
    expect((await fetch(url, { headers: { "if-none-match": etag } })).status).toBe(304);
  });
});

describe("info, exists, move and copy", () => {
  it("describe an object, and move and copy it within and across buckets", async () => {
    const id = await bucket("s26-files");
    const other = await bucket("s26-files");
    const files = service().from(id);
    expect((await files.upload("a/one.txt", text("one"), { metadata: { kind: "note" } })).error).toBeNull();

    const info = await files.info("a/one.txt");
    expect(info.error).toBeNull();
    expect(info.data).toMatchObject({
      name: "a/one.txt",
      bucketId: id,
      size: 3,
      contentType: "text/plain",
      cacheControl: "max-age=3600",
      metadata: { kind: "note" },
    });
    expect(info.data?.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await files.exists("a/one.txt")).toEqual({ data: true, error: null });
    expect((await files.exists("a/none.txt")).data).toBe(false);
    expect((await files.info("a/none.txt")).error?.message).toBe("Object not found");

    expect((await files.copy("a/one.txt", "b/copy.txt")).data).toEqual({ path: `${id}/b/copy.txt` });
    expect((await files.copy("a/one.txt", "b/copy.txt")).error?.message).toBe("The resource already exists");
    expect(await (await files.download("b/copy.txt")).data?.text()).toBe("one");

    expect((await files.move("a/one.txt", "c/moved.txt")).data?.message).toBe("Successfully moved");
    expect((await files.download("a/one.txt")).error?.message).toBe("Object not found");
    expect(await (await files.download("c/moved.txt")).data?.text()).toBe("one");
    expect((await files.move("c/moved.txt", "b/copy.txt")).error?.message).toBe("The resource already exists");

    expect((await files.move("c/moved.txt", "far.txt", { destinationBucket: other })).error).toBeNull();
    expect(await (await service().from(other).download("far.txt")).data?.text()).toBe("one");
    expect((await files.copy("b/copy.txt", "near.txt", { destinationBucket: other })).data?.path).toBe(
      `${other}/near.txt`,
    );
    expect((await files.move("nothing.txt", "x.txt")).error?.message).toBe("Object not found");
  });

  it("move and copy only what the caller's policies allow", async () => {
    const id = await bucket("s26-notes");
    const [alice, bob] = await Promise.all([user(), user()]);
    expect((await alice.client.storage.from(id).upload("mine.txt", text("a"))).error).toBeNull();
    expect((await bob.client.storage.from(id).move("mine.txt", "stolen.txt")).error?.message).toBe("Object not found");
    expect((await bob.client.storage.from(id).copy("mine.txt", "stolen.txt")).error?.message).toBe("Object not found");
    expect((await alice.client.storage.from(id).move("mine.txt", "still-mine.txt")).error).toBeNull();
    const [row] = await db()`select owner_id from storage.objects where bucket_id = ${id} and name = 'still-mine.txt'`;
    expect(row.owner_id).toBe(alice.id);
  });
});

describe("signed upload URLs", () => {
  it("let whoever holds the token upload that one object, once, when the signer may", async () => {
    const id = await bucket("s26-append");
    const alice = await user();
    const signed = await alice.client.storage.from(id).createSignedUploadUrl("drop/file.txt");
    expect(signed.error).toBeNull();
    expect(signed.data?.signedUrl).toContain(`/storage/v1/object/upload/sign/${id}/drop/file.txt?token=`);

    // No session needed: the token is the permission.
    const anon = client(stack().anonKey).storage.from(id);
    const uploaded = await anon.uploadToSignedUrl("drop/file.txt", signed.data!.token, text("signed"));
    expect(uploaded).toEqual({ data: { path: "drop/file.txt", fullPath: `${id}/drop/file.txt` }, error: null });
    const [row] = await db()`select owner_id, metadata ->> 'size' as size from storage.objects
                             where bucket_id = ${id} and name = 'drop/file.txt'`;
    expect(row).toEqual({ owner_id: alice.id, size: "6" });

    const again = await anon.uploadToSignedUrl("drop/file.txt", signed.data!.token, text("again"));
    expect(again.error?.message).toBe("The resource already exists");
    expect(again.error).toMatchObject({ statusCode: "409" });
    const elsewhere = await anon.uploadToSignedUrl("drop/other.txt", signed.data!.token, text("x"));
    expect(elsewhere.error?.message).toBe("Invalid signature");

    // A download token is not an upload token.
    const read = await alice.client.storage.from(id).createSignedUrl("drop/file.txt", 60);
    const downloadToken = new URL(read.data!.signedUrl).searchParams.get("token")!;
    const replay = await anon.uploadToSignedUrl("drop/file.txt", downloadToken, text("x"));
    expect(replay.error?.message).toBe("Token is not scoped for upload");

    // Signing checks the signer's insert policy first.
    const refused = await client(stack().anonKey).storage.from(id).createSignedUploadUrl("drop/anon.txt");
    expect(refused.error?.message).toBe("new row violates row-level security policy");
  });

  it("replace an object when signed with upsert", async () => {
    const id = await bucket("s26-notes");
    const alice = await user();
    expect((await alice.client.storage.from(id).upload("doc.txt", text("v1"))).error).toBeNull();
    const signed = await alice.client.storage.from(id).createSignedUploadUrl("doc.txt", { upsert: true });
    expect(signed.error).toBeNull();
    const anon = client(stack().anonKey).storage.from(id);
    expect((await anon.uploadToSignedUrl("doc.txt", signed.data!.token, text("v2"))).error).toBeNull();
    expect(await (await alice.client.storage.from(id).download("doc.txt")).data?.text()).toBe("v2");
  });
});

describe("upserts (x-upsert)", () => {
  it("replace an object when the update policy allows it, and only then", async () => {
    const notes = await bucket("s26-notes");
    const append = await bucket("s26-append");
    const alice = await user();
    for (const id of [notes, append]) {
      expect((await alice.client.storage.from(id).upload("draft.txt", text("first"))).error).toBeNull();
      const duplicate = await alice.client.storage.from(id).upload("draft.txt", text("second"));
      expect(duplicate.error?.message).toBe("The resource already exists");
      expect(duplicate.error).toMatchObject({ status: 400, statusCode: "409" });
    }
    const versionOf = async () =>
      (await db()`select version from storage.objects where bucket_id = ${notes} and name = 'draft.txt'`)[0].version;
    const first = await versionOf();
    expect(existsSync(fileOf(first))).toBe(true);
    expect((await alice.client.storage.from(notes).upload("draft.txt", text("second"), { upsert: true })).error)
      .toBeNull();
    // A replaced object keeps one file: the old version's bytes are gone from disk.
    expect(existsSync(fileOf(first))).toBe(false);
    expect(existsSync(fileOf(await versionOf()))).toBe(true);
    expect(await (await alice.client.storage.from(notes).download("draft.txt")).data?.text()).toBe("second");
    expect((await alice.client.storage.from(notes).update("draft.txt", text("third"))).error).toBeNull();
    expect(await (await alice.client.storage.from(notes).download("draft.txt")).data?.text()).toBe("third");

    const replaced = await alice.client.storage.from(append).upload("draft.txt", text("second"), { upsert: true });
    expect(replaced.error?.message).toBe("new row violates row-level security policy");
    expect(replaced.error).toMatchObject({ status: 400, statusCode: "403" });
    expect((await alice.client.storage.from(append).update("draft.txt", text("x"))).error?.message).toBe(
      "new row violates row-level security policy",
    );
    expect(await (await alice.client.storage.from(append).download("draft.txt")).data?.text()).toBe("first");
  });
});

describe("bucket limits", () => {
  it("refuse files over the bucket's size and of types it does not allow, with Storage's codes", async () => {
    const id = await bucket("s26-limited", { public: false, fileSizeLimit: "1kb", allowedMimeTypes: ["image/*"] });
    const files = service().from(id);
    const large = await files.upload("big.png", new Blob([new Uint8Array(1001)], { type: "image/png" }));
    expect(large.error?.message).toBe("The object exceeded the maximum allowed size");
    expect(large.error).toMatchObject({ status: 400, statusCode: "413" });
    const binary = await files.upload("big2.png", new Uint8Array(1001), { contentType: "image/png" });
    expect(binary.error?.message).toBe("The object exceeded the maximum allowed size");
    const wrong = await files.upload("note.txt", text("hi"));
    expect(wrong.error?.message).toBe("mime type text/plain is not supported");
    expect(wrong.error).toMatchObject({ status: 400, statusCode: "415" });
    expect((await files.upload("ok.png", new Blob([new Uint8Array(1000)], { type: "image/png" }))).error).toBeNull();
    expect(await db()`select name from storage.objects where bucket_id = ${id}`).toEqual([{ name: "ok.png" }]);
  });
});

describe("listing", () => {
  let id: string;
  beforeAll(async () => {
    id = await bucket("s26-list");
    for (const name of ["top.txt", "Docs/b.txt", "docs/a.txt", "docs/sub/deep.txt", "docs/c.txt", "photos/p.png"]) {
      expect((await service().from(id).upload(name, text(name))).error).toBeNull();
    }
  });

  it("list: one level under a prefix, folders and files, case-insensitive as storage.search is", async () => {
    const top = await service().from(id).list("");
    // "Docs/" and "docs/" are one folder to storage.search, named as the first it meets.
    expect(top.data?.map((o) => [o.name, o.id === null])).toEqual([
      ["docs", true],
      ["photos", true],
      ["top.txt", false],
    ]);
    const docs = await service().from(id).list("docs");
    expect(docs.data?.map((o) => o.name)).toEqual(["a.txt", "b.txt", "c.txt", "sub"]);
    expect(docs.data?.[0]).toMatchObject({ metadata: { mimetype: "text/plain", size: 10 } });
    const searched = await service().from(id).list("docs", { search: "C" });
    expect(searched.data?.map((o) => o.name)).toEqual(["c.txt"]);
    const paged = await service().from(id).list("docs", {
      limit: 1,
      offset: 1,
      sortBy: { column: "name", order: "desc" },
    });
    expect(paged.data?.map((o) => o.name)).toEqual(["c.txt"]);
  });

  it("list-v2: full names, folders apart with a delimiter, and cursors", async () => {
    const flat = await service().from(id).listV2({ prefix: "docs/" });
    expect(flat.data?.objects.map((o) => o.name)).toEqual(["docs/a.txt", "docs/c.txt", "docs/sub/deep.txt"]);
    expect(flat.data?.folders).toEqual([]);
    const delimited = await service().from(id).listV2({ with_delimiter: true });
    expect(delimited.data?.folders.map((f) => [f.key, f.name])).toEqual([
      ["Docs", "Docs/"],
      ["docs", "docs/"],
      ["photos", "photos/"],
    ]);
    expect(delimited.data?.objects.map((o) => o.name)).toEqual(["top.txt"]);

    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await service().from(id).listV2({
          prefix: "docs/",
          limit: 2,
          cursor,
          sortBy: { column: "name", order },
        });
        expect(res.error).toBeNull();
        seen.push(...res.data!.objects.map((o) => o.name));
        cursor = res.data!.nextCursor;
        if (!res.data!.hasNext) break;
      }
      const all = ["docs/a.txt", "docs/c.txt", "docs/sub/deep.txt"];
      expect(seen).toEqual(order === "asc" ? all : all.toReversed());
    }
    const bad = await service().from(id).listV2({ cursor: "!!" });
    expect(bad.error?.message).toBe("Invalid Parameter continuation token");
  });

  it("shows each caller what its policies let it see", async () => {
    const notes = await bucket("s26-notes");
    const [alice, bob] = await Promise.all([user(), user()]);
    await alice.client.storage.from(notes).upload("a.txt", text("a"));
    await bob.client.storage.from(notes).upload("b.txt", text("b"));
    expect((await alice.client.storage.from(notes).list("")).data?.map((o) => o.name)).toEqual(["a.txt"]);
    expect((await bob.client.storage.from(notes).listV2()).data?.objects.map((o) => o.name)).toEqual(["b.txt"]);
    expect((await bob.client.storage.from(notes).remove(["a.txt", "b.txt"])).data?.map((o) => o.name)).toEqual([
      "b.txt",
    ]);
  });
});

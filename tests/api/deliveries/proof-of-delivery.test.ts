// Proof of delivery with the real supabase-js Storage client against the local
// Storage stand-in: the driver of a delivery in progress uploads one photo and
// one signature, may replace them (upsert) and read them back until the delivery
// is completed, the company's managers read them, nobody else does; size and
// type limits; completion requires what the company requires. A failed attempt's photo under the same rules,
// one per attempt, checked when the attempt fails.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, type Member, stack, type TestCompany } from "../../support/api.ts";
import { deliveryIn, moveDelivery } from "../../support/deliveries.ts";

const BUCKET = "delivery-proofs";
// A 1x1 PNG.
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);
const png = () => new Blob([PNG], { type: "image/png" });

async function clientOf(member?: Member): Promise<SupabaseClient> {
  const client = createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  if (member) {
    const { error } = await client.auth.signInWithPassword({ email: member.email, password: member.password });
    expect(error).toBeNull();
  }
  return client;
}

const bytesOf = async (blob: Blob | null) => new Uint8Array(await blob!.arrayBuffer());

describe("the delivery-proofs bucket", () => {
  let a: TestCompany;
  let b: TestCompany;
  let id: string;
  let folder: string;
  let driver: SupabaseClient;
  beforeAll(async () => {
    [a, b] = await Promise.all([createCompany("Proof A"), createCompany("Proof B")]);
    id = await deliveryIn(a, "in_progress");
    folder = `${a.companyId}/${id}`;
    driver = await clientOf(a.driver);
  });

  it("the delivery's driver uploads its photo; its managers read it, download it and sign a URL for it", async () => {
    const { data, error } = await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png());
    expect(error).toBeNull();
    expect(data?.fullPath).toBe(`${BUCKET}/${folder}/photo.png`);

    for (const who of [a.owner, a.admin, a.legacyAdmin]) {
      const manager = await clientOf(who);
      const download = await manager.storage.from(BUCKET).download(`${folder}/photo.png`);
      expect(download.error).toBeNull();
      expect(await bytesOf(download.data)).toEqual(PNG);
      const listed = await manager.storage.from(BUCKET).list(folder);
      expect(listed.data?.map((o) => o.name)).toEqual(["photo.png"]);
    }
    const owner = await clientOf(a.owner);
    const signed = await owner.storage.from(BUCKET).createSignedUrl(`${folder}/photo.png`, 60);
    expect(signed.error).toBeNull();
    const res = await fetch(signed.data!.signedUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG);
    const many = await owner.storage.from(BUCKET).createSignedUrls(
      [`${folder}/photo.png`, `${folder}/signature.png`],
      60,
    );
    expect(many.data?.map((s) => [s.path, !!s.signedUrl])).toEqual([[`${folder}/photo.png`, true], [
      `${folder}/signature.png`,
      false,
    ]]);
    const tampered = signed.data!.signedUrl.replace("photo.png", "signature.png");
    expect((await fetch(tampered)).status).toBe(400);
  });

  it("one of each kind: the driver replaces their own proof with an upsert, never beside it, never removes it", async () => {
    // A plain upload over it is refused as already there (the unique name), not by a policy.
    const again = await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png());
    expect(again.error?.message).toBe("The resource already exists");
    // A retry after a reload, or a better photo: the upsert replaces the bytes the managers read.
    const better = Uint8Array.from([...PNG, 0]);
    const upsert = await driver.storage.from(BUCKET).upload(
      `${folder}/photo.png`,
      new Blob([better], { type: "image/png" }),
      { upsert: true },
    );
    expect(upsert.error).toBeNull();
    const owner = await clientOf(a.owner);
    expect(await bytesOf((await owner.storage.from(BUCKET).download(`${folder}/photo.png`)).data)).toEqual(better);
    // The driver reads back what they wrote while the delivery is in progress (an upsert needs it).
    expect(await bytesOf((await driver.storage.from(BUCKET).download(`${folder}/photo.png`)).data)).toEqual(better);
    expect((await driver.storage.from(BUCKET).list(folder)).data?.map((o) => o.name)).toEqual(["photo.png"]);
    // A second photo under another name is refused, upsert or not.
    for (const upsert of [false, true]) {
      const other = await driver.storage.from(BUCKET).upload(
        `${folder}/photo.jpg`,
        new Blob([PNG], { type: "image/jpeg" }),
        { upsert },
      );
      expect(other.error?.message).toBe("new row violates row-level security policy");
    }
    const moved = await driver.storage.from(BUCKET).move(`${folder}/photo.png`, `${folder}/photo.webp`);
    expect(moved.error).not.toBeNull();
    const removed = await driver.storage.from(BUCKET).remove([`${folder}/photo.png`]);
    expect(removed.data).toEqual([]);
    expect((await owner.storage.from(BUCKET).remove([`${folder}/photo.png`])).data).toEqual([]);
    expect(await bytesOf((await owner.storage.from(BUCKET).download(`${folder}/photo.png`)).data)).toEqual(better);
    expect((await owner.storage.from(BUCKET).list(folder)).data?.map((o) => o.name)).toEqual(["photo.png"]);
    // Back to the first photo, for the tests that follow.
    expect((await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png(), { upsert: true })).error)
      .toBeNull();
  });

  it("is refused to another driver, another company and anon, both ways", async () => {
    const outsiders = [await clientOf(a.driver2), await clientOf(b.owner), await clientOf(b.driver), await clientOf()];
    for (const outsider of outsiders) {
      const read = await outsider.storage.from(BUCKET).download(`${folder}/photo.png`);
      expect(read.error?.message).toBe("Object not found");
      expect((await outsider.storage.from(BUCKET).list(folder)).data).toEqual([]);
      expect((await outsider.storage.from(BUCKET).createSignedUrl(`${folder}/photo.png`, 60)).error).not.toBeNull();
      const write = await outsider.storage.from(BUCKET).upload(`${folder}/signature.png`, png());
      expect(write.error).not.toBeNull();
    }
    // Company B's driver cannot write into its own company's folder for A's delivery.
    const bDriver = await clientOf(b.driver);
    const crossed = await bDriver.storage.from(BUCKET).upload(`${b.companyId}/${id}/signature.png`, png());
    expect(crossed.error?.message).toBe("new row violates row-level security policy");
  });

  it("takes images only, up to 5 MB, and says so", async () => {
    const text = await driver.storage.from(BUCKET).upload(
      `${folder}/signature.txt`,
      new Blob(["hi"], { type: "text/plain" }),
    );
    expect(text.error?.message).toBe("mime type text/plain is not supported");
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(PNG);
    const large = await driver.storage.from(BUCKET).upload(
      `${folder}/signature.png`,
      new Blob([big], { type: "image/png" }),
    );
    expect(large.error?.message).toBe("The object exceeded the maximum allowed size");
    const odd = await driver.storage.from(BUCKET).upload(`${folder}/selfie.png`, png());
    expect(odd.error?.message).toBe("new row violates row-level security policy");
  });
});

describe("completing with proof", () => {
  let a: TestCompany;
  beforeAll(async () => {
    a = await createCompany("Proof Rules");
  });

  it("only owners and admins set the requirements; every member reads them", async () => {
    const none = await api("/api/v1/companies/me/proof-requirements", { token: a.driver.token });
    expect(none.body).toEqual({ photo: false, signature: false, note: false, handover_code: false });
    const refused = await api("/api/v1/companies/me/proof-requirements", {
      method: "PUT",
      token: a.driver.token,
      body: { photo: true, signature: true, note: true },
    });
    expect(refused.status).toBe(403);
    const set = await api("/api/v1/companies/me/proof-requirements", {
      method: "PUT",
      token: a.admin.token,
      body: { photo: true, signature: true, note: true },
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ photo: true, signature: true, note: true, handover_code: false });
  });

  it("completion names what the company requires and is missing, then carries the proof", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    const missing = await moveDelivery(a.driver, id, "complete");
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toBe("proof of delivery required: photo, signature, note missing");

    const driver = await clientOf(a.driver);
    expect((await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png())).error).toBeNull();
    const stillMissing = await moveDelivery(a.driver, id, "complete");
    expect(stillMissing.body.detail).toBe("proof of delivery required: signature, note missing");
    expect((await driver.storage.from(BUCKET).upload(`${folder}/signature.png`, png())).error).toBeNull();

    const done = await moveDelivery(a.driver, id, "complete", { note: "Left with the doorman" });
    expect(done.status).toBe(200);
    expect(done.body.proof).toEqual({
      photo_path: `${folder}/photo.png`,
      signature_path: `${folder}/signature.png`,
      note: "Left with the doorman",
    });
    const seen = await api(`/api/v1/deliveries/${id}`, { token: a.owner.token });
    expect(seen.body.proof).toEqual(done.body.proof);
    // Completed: the driver can no longer add, replace or read anything.
    const late = await driver.storage.from(BUCKET).upload(
      `${folder}/photo.webp`,
      new Blob([PNG], { type: "image/webp" }),
    );
    expect(late.error?.message).toBe("new row violates row-level security policy");
    const replaced = await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png(), { upsert: true });
    expect(replaced.error?.message).toBe("new row violates row-level security policy");
    expect((await driver.storage.from(BUCKET).download(`${folder}/photo.png`)).error?.message).toBe("Object not found");
    expect((await driver.storage.from(BUCKET).list(folder)).data).toEqual([]);
  });

  it("without requirements, a delivery completes with no proof", async () => {
    await api("/api/v1/companies/me/proof-requirements", {
      method: "PUT",
      token: a.owner.token,
      body: { photo: false, signature: false, note: false },
    });
    const id = await deliveryIn(a, "in_progress");
    const done = await moveDelivery(a.driver, id, "complete");
    expect(done.status).toBe(200);
    expect(done.body.proof).toEqual({ photo_path: null, signature_path: null, note: null });
  });
});

describe("an attacker's uploads (names, media types, bytes)", () => {
  let a: TestCompany;
  let driver: SupabaseClient;
  beforeAll(async () => {
    a = await createCompany("Proof Attacker");
    driver = await clientOf(a.driver);
  });

  /** The delivery's id with its hyphens moved (8-8-8-4-4): the same uuid to Postgres, other text. */
  const respelled = (id: string) => {
    const hex = id.replaceAll("-", "");
    return [hex.slice(0, 8), hex.slice(8, 16), hex.slice(16, 24), hex.slice(24, 28), hex.slice(28)].join("-");
  };

  it("cannot write a second photo by spelling the delivery's id another way", async () => {
    const id = await deliveryIn(a, "in_progress");
    expect((await driver.storage.from(BUCKET).upload(`${a.companyId}/${id}/photo.png`, png())).error).toBeNull();
    for (const folder of [`${a.companyId}/${respelled(id)}`, `${a.companyId}/${id.toUpperCase()}`]) {
      const second = await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png());
      expect(second.error?.message, folder).toBe("new row violates row-level security policy");
    }
    // Even as the first upload: only the canonical spelling is a proof.
    const other = await deliveryIn(a, "in_progress");
    const first = await driver.storage.from(BUCKET).upload(`${a.companyId}/${respelled(other)}/photo.png`, png());
    expect(first.error?.message).toBe("new row violates row-level security policy");
  });

  it("cannot name an upload for another type than it declares", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    for (
      const [name, type] of [["photo.jpg", "image/png"], ["photo.png", "image/webp"], ["photo", "image/png"]]
    ) {
      const refused = await driver.storage.from(BUCKET).upload(`${folder}/${name}`, new Blob([PNG], { type }));
      expect(refused.error?.message, `${name} as ${type}`).toBe("new row violates row-level security policy");
    }
  });

  it("completion refuses an upload that is not the image its name says, and removes it for a real one", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    // HTML declared as a PNG: Storage cannot see it before the bytes arrive, so it is stored.
    const html = new Blob(["<html><script>alert(1)</script></html>"], { type: "image/png" });
    expect((await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, html)).error).toBeNull();
    const owner = await clientOf(a.owner);
    const served = await fetch(
      (await owner.storage.from(BUCKET).createSignedUrl(`${folder}/photo.png`, 60)).data!
        .signedUrl,
    );
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    await served.body?.cancel();

    const refused = await moveDelivery(a.driver, id, "complete");
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toBe(
      "Proof of delivery refused: the photo is not a PNG image as its name says. It was removed: upload it again",
    );
    expect((await owner.storage.from(BUCKET).list(folder)).data).toEqual([]);
    // The real photo goes in its place, and the delivery completes with it.
    expect((await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, png())).error).toBeNull();
    const done = await moveDelivery(a.driver, id, "complete");
    expect(done.status).toBe(200);
    expect(done.body.proof).toMatchObject({ photo_path: `${folder}/photo.png` });
  });
});

describe("a failed attempt's photo", () => {
  let a: TestCompany;
  let b: TestCompany;
  let driver: SupabaseClient;
  let owner: SupabaseClient;
  beforeAll(async () => {
    [a, b] = await Promise.all([createCompany("Failure Photo A"), createCompany("Failure Photo B")]);
    [driver, owner] = await Promise.all([clientOf(a.driver), clientOf(a.owner)]);
  });

  /** The delivery as its owner reads it. */
  const seen = async (id: string) => (await api(`/api/v1/deliveries/${id}`, { token: a.owner.token })).body;
  const listed = async (who: SupabaseClient, folder: string) =>
    ((await who.storage.from(BUCKET).list(folder)).data ?? []).map((o) => o.name);

  it("goes with the failure; the company's managers read it through a signed URL, nobody else does", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    expect((await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, png())).error).toBeNull();

    const failed = await moveDelivery(a.driver, id, "fail", { reason: "recipient_absent", note: "Portão fechado" });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body).toMatchObject({
      status: "failed",
      failure_reason: "recipient_absent",
      failure_note: "Portão fechado",
      failure_photo_path: `${folder}/failed-1.png`,
    });
    expect((await seen(id)).failure_photo_path).toBe(`${folder}/failed-1.png`);

    for (const who of [a.owner, a.admin, a.legacyAdmin]) {
      const manager = await clientOf(who);
      const signed = await manager.storage.from(BUCKET).createSignedUrl(failed.body.failure_photo_path, 60);
      expect(signed.error).toBeNull();
      const res = await fetch(signed.data!.signedUrl);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG);
    }
    const outsiders = [await clientOf(a.driver2), await clientOf(b.owner), await clientOf(b.driver), await clientOf()];
    for (const outsider of [driver, ...outsiders]) {
      expect((await outsider.storage.from(BUCKET).download(`${folder}/failed-1.png`)).error?.message)
        .toBe("Object not found");
      expect(await listed(outsider, folder)).toEqual([]);
    }
    // Failed: the driver no longer replaces it.
    const late = await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, png(), { upsert: true });
    expect(late.error?.message).toBe("new row violates row-level security policy");
  });

  it("is refused with 422 when it is not the image its name says: removed, nothing recorded; the real one then goes", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    const html = new Blob(["<html><script>alert(1)</script></html>"], { type: "image/png" });
    expect((await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, html)).error).toBeNull();
    // The proof of delivery is completion's to check, not the failure's: it is left as it is.
    expect((await driver.storage.from(BUCKET).upload(`${folder}/photo.png`, html)).error).toBeNull();

    const refused = await moveDelivery(a.driver, id, "fail", { reason: "refused", note: "Recusou" });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toBe(
      "Photo of the failed attempt refused: it is not a PNG image as its name says. It was removed: upload it again",
    );
    expect(await seen(id)).toMatchObject({
      status: "in_progress",
      failed_at: null,
      failure_reason: null,
      failure_note: null,
      failure_photo_path: null,
    });
    expect(await listed(owner, folder)).toEqual(["photo.png"]);

    expect((await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, png())).error).toBeNull();
    const failed = await moveDelivery(a.driver, id, "fail", { reason: "refused", note: "Recusou" });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: "failed", failure_photo_path: `${folder}/failed-1.png` });
  });

  it("is optional: a failure without one records none", async () => {
    const id = await deliveryIn(a, "in_progress");
    const failed = await moveDelivery(a.driver, id, "fail", { reason: "address_not_found" });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      status: "failed",
      failure_reason: "address_not_found",
      failure_photo_path: null,
    });
  });

  it("is each attempt's own: the second beside the first, which stays as it was", async () => {
    const id = await deliveryIn(a, "in_progress");
    const folder = `${a.companyId}/${id}`;
    const first = png();
    const second = new Blob([Uint8Array.from([...PNG, 1])], { type: "image/png" });
    expect((await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, first)).error).toBeNull();
    expect((await moveDelivery(a.driver, id, "fail", { reason: "recipient_absent" })).status).toBe(200);
    const reopened = await moveDelivery(a.owner, id, "reopen");
    expect(reopened.body).toMatchObject({ attempts: 2, failure_photo_path: `${folder}/failed-1.png` });

    // The same driver carries the second attempt: the first's photo is not theirs to write any more.
    for (const action of ["accept", "start"]) expect((await moveDelivery(a.driver, id, action)).status).toBe(200);
    const over = await driver.storage.from(BUCKET).upload(`${folder}/failed-1.png`, second, { upsert: true });
    expect(over.error?.message).toBe("new row violates row-level security policy");
    const ahead = await driver.storage.from(BUCKET).upload(`${folder}/failed-3.png`, second);
    expect(ahead.error?.message).toBe("new row violates row-level security policy");
    expect((await driver.storage.from(BUCKET).upload(`${folder}/failed-2.png`, second)).error).toBeNull();
    const failed = await moveDelivery(a.driver, id, "fail", { reason: "damaged" });
    expect(failed.body).toMatchObject({
      attempts: 2,
      failure_reason: "damaged",
      failure_photo_path: `${folder}/failed-2.png`,
    });

    expect(await listed(owner, folder)).toEqual(["failed-1.png", "failed-2.png"]);
    expect(await bytesOf((await owner.storage.from(BUCKET).download(`${folder}/failed-1.png`)).data)).toEqual(PNG);
    expect(await bytesOf((await owner.storage.from(BUCKET).download(`${folder}/failed-2.png`)).data))
      .toEqual(Uint8Array.from([...PNG, 1]));

    // A third attempt that fails without a photo records none, not the second's.
    expect((await moveDelivery(a.owner, id, "reopen")).status).toBe(200);
    for (const action of ["accept", "start"]) expect((await moveDelivery(a.driver2, id, action)).status).toBe(200);
    const third = await moveDelivery(a.driver2, id, "fail", { reason: "other" });
    expect(third.body).toMatchObject({ attempts: 3, failure_reason: "other", failure_photo_path: null });
  });
});

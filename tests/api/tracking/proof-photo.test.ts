// The recipient's tracking view once delivered: the proof photo as a signed URL of Storage, made for the holder of
// the tracking token in the answer to GET /api/v1/track/{token} only (never broadcast, never to another token,
// never before the delivery is delivered), short-lived (it stops answering), and bound to its one object.
import { createHash, randomBytes } from "node:crypto";
import { createClient } from "@supabase/supabase-js";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { api, apiFrom, createCompany, type Member, stack, type TestCompany } from "../../support/api.ts";
import { deliveryIn, moveDelivery } from "../../support/deliveries.ts";
import { listen, until } from "../../support/realtime.ts";
import { supabaseClient } from "../../support/supabase.ts";

const BUCKET = "delivery-proofs";
// A 1x1 PNG.
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
/** What the edge promises: the URL answers for 300 s, no more. */
const LIFETIME_S = 300;

const track = (token: string) =>
  apiFrom(`127.${randomBytes(3).join(".")}`, `/api/v1/track/${encodeURIComponent(token)}`);
const topicOf = (token: string) => `track:${createHash("sha256").update(token).digest("hex")}`;
const tokenOf = async (company: TestCompany, id: string) =>
  (await api(`/api/v1/deliveries/${id}`, { token: company.owner.token })).body.tracking_token as string;

async function uploadPhoto(company: TestCompany, id: string, driver: Member = company.driver) {
  const client = createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const signedIn = await client.auth.signInWithPassword({ email: driver.email, password: driver.password });
  expect(signedIn.error).toBeNull();
  const { error } = await client.storage.from(BUCKET).upload(
    `${company.companyId}/${id}/photo.png`,
    new Blob([PNG], { type: "image/png" }),
  );
  expect(error).toBeNull();
}

describe("the proof photo on the tracking link", () => {
  let a: TestCompany;
  let id: string;
  let token: string;
  let other: string;
  let otherToken: string;
  let view: Record<string, unknown>;
  beforeAll(async () => {
    a = await createCompany("Track Proof");
    [id, other] = await Promise.all([deliveryIn(a, "in_progress"), deliveryIn(a, "in_progress", a.driver2)]);
    [token, otherToken] = await Promise.all([tokenOf(a, id), tokenOf(a, other)]);
  });

  it("is null until the delivery is delivered, and is never broadcast on the link's topic", async () => {
    await uploadPhoto(a, id);
    const before = await track(token);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ status: "in_progress", proof_photo_url: null, proof_photo_expires_at: null });

    const recipient = await listen(topicOf(token), stack().anonKey, { client: supabaseClient() });
    expect(recipient.status).toBe("SUBSCRIBED");
    expect((await moveDelivery(a.driver, id, "complete")).status).toBe(200);
    await until(() => recipient.inbox.some((m) => m.payload.status === "completed"));
    const done = recipient.inbox.find((m) => m.payload.status === "completed");
    expect(done).toBeDefined();
    expect(JSON.stringify(done!.payload)).not.toMatch(/proof|photo|sign/);
  });

  it("the token's holder gets a signed URL that reads the photo, for at most 300 s", async () => {
    const started = Math.floor(Date.now() / 1000);
    const res = await track(token);
    expect(res.status).toBe(200);
    view = res.body;
    expect(view.status).toBe("completed");
    expect(Object.keys(view)).not.toContain("proof_photo_path");
    const url = new URL(view.proof_photo_url as string);
    expect(url.pathname).toBe(`/storage/v1/object/sign/${BUCKET}/${a.companyId}/${id}/photo.png`);
    const photo = await fetch(url);
    expect(photo.status).toBe(200);
    expect(new Uint8Array(await photo.arrayBuffer())).toEqual(PNG);

    // The token Storage signed says when it stops: within the lifetime, and no later than the answer says.
    const exp = decodeJwt(url.searchParams.get("token")!).exp!;
    expect(exp).toBeGreaterThan(started);
    expect(exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + LIFETIME_S);
    const expiresAt = Date.parse(view.proof_photo_expires_at as string) / 1000;
    expect(expiresAt).toBeLessThanOrEqual(exp);
    expect(expiresAt).toBeGreaterThan(exp - 5);
  });

  it("the URL opens that photo only: another object under its token is refused", async () => {
    await uploadPhoto(a, other, a.driver2);
    const url = (view.proof_photo_url as string).replace(id, other);
    expect((await fetch(url)).status).toBe(400);
    // The other delivery, in progress, gives its own token's holder no photo yet.
    expect((await track(otherToken)).body.proof_photo_url).toBeNull();
  });

  it("nobody else gets one: a wrong token is 404 and names no photo", async () => {
    const wrong = await track(`${token.slice(0, -2)}xx`);
    expect(wrong.status).toBe(404);
    expect(JSON.stringify(wrong.body)).not.toMatch(/photo|storage/);
    // The managers' view of the delivery names the object, never a URL that opens it without their credentials.
    const managed = await api(`/api/v1/deliveries/${id}`, { token: a.owner.token });
    expect(JSON.stringify(managed.body)).not.toMatch(/object\/sign|token=/);
  });

  it("a URL past its lifetime is refused", async () => {
    // The same kind of URL as the answer's, signed for one second (as the edge signs, as the service role).
    const service = createClient(stack().apiUrl, stack().serviceRoleKey, { auth: { persistSession: false } });
    const { data, error } = await service.storage.from(BUCKET).createSignedUrl(`${a.companyId}/${id}/photo.png`, 1);
    expect(error).toBeNull();
    expect((await fetch(data!.signedUrl)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await fetch(data!.signedUrl)).status).toBe(400);
  });
});

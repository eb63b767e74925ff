// Proof of delivery's images are images: checked when the delivery is completed, and a failed attempt's photo when
// the attempt fails. Storage takes an upload on what it declares (the bucket's allowed types, and the policy of
// supabase/schemas/09_proof.sql ties the name's extension to the declared type), but it decides before the bytes
// arrive and never looks at them: a page of HTML sent as `image/png` is stored. So the move reads the first bytes of
// each file the driver uploaded for it (Storage, as the service role, one range request each) and refuses one that
// is not the image its name says: 422 before anything is written, the object removed so that the driver can upload
// the real one (each kind is written once).
import { asService } from "../_shared/db.ts";
import { env } from "../_shared/env.ts";
import { HttpError } from "../_shared/errors.ts";
import { timeoutSignal } from "../_shared/timeout.ts";

const BUCKET = "delivery-proofs";
const HEAD_BYTES = 16;

const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) => prefix.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Each image type by the bytes it starts with (its signature, as the formats define them). */
const SIGNATURES: Record<string, (head: Uint8Array) => boolean> = {
  "image/png": (head) => startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  "image/jpeg": (head) => startsWith(head, [0xff, 0xd8, 0xff]),
  "image/webp": (head) => startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8),
};

/** Whether `head`, an object's first bytes, starts an image of `type`. */
export function isImageOf(type: string, head: Uint8Array): boolean {
  return SIGNATURES[type]?.(head) ?? false;
}

const storage = (path: string) =>
  `${env().SUPABASE_URL.replace(/\/$/, "")}/storage/v1/object/${BUCKET}/${
    path.split("/").map(encodeURIComponent).join("/")
  }`;

function serviceHeaders(): Record<string, string> {
  const key = env().SUPABASE_SERVICE_ROLE_KEY;
  return { apikey: key, authorization: `Bearer ${key}` };
}

const unavailable = () => new HttpError(502, "Storage is unavailable: the proof of delivery cannot be checked");

/** An object's first bytes; empty for an empty object, null when it is gone. */
async function headOf(name: string): Promise<Uint8Array | null> {
  const timeout = timeoutSignal(5_000);
  try {
    const res = await fetch(storage(name), {
      headers: { ...serviceHeaders(), range: `bytes=0-${HEAD_BYTES - 1}` },
      signal: timeout.signal,
    });
    if (!res.ok) {
      // Storage answers its errors with the status they mean in the body's statusCode (HTTP 400 or the status).
      const error = await res.json().catch(() => ({})) as { statusCode?: string };
      const status = Number(error.statusCode ?? res.status);
      if (status === 404) return null;
      // A range that an empty object cannot satisfy.
      if (status === 416 || status === 400) return new Uint8Array(0);
      throw unavailable();
    }
    if (!res.body) return new Uint8Array(0);
    const reader = res.body.getReader();
    const head = new Uint8Array(HEAD_BYTES);
    let length = 0;
    while (length < HEAD_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.subarray(0, HEAD_BYTES - length);
      head.set(take, length);
      length += take.length;
    }
    await reader.cancel().catch(() => {});
    return head.subarray(0, length);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw unavailable();
  } finally {
    timeout.clear();
  }
}

async function remove(name: string): Promise<void> {
  const timeout = timeoutSignal(5_000);
  try {
    const res = await fetch(storage(name), { method: "DELETE", headers: serviceHeaders(), signal: timeout.signal });
    await res.body?.cancel();
    if (!res.ok && res.status !== 404) throw unavailable();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw unavailable();
  } finally {
    timeout.clear();
  }
}

/** What each move attaches, so checks first: completion the photo and the signature; a failure its attempt's photo. */
const CHECKED = {
  complete: {
    refused: (what: string[]) => `Proof of delivery refused: ${what.join("; ")}`,
    what: (kind: string) => `the ${kind}`,
  },
  fail: {
    refused: (what: string[]) => `Photo of the failed attempt refused: ${what.join("; ")}`,
    what: () => "it",
  },
} as const;

/**
 * Checks the files `userId` (a driver) uploaded for `move` of its delivery `deliveryId` in progress: nothing to check
 * for anyone else's delivery (the move is refused anyway). 422 naming each upload that is not the image its name
 * says, after removing it; 502 when Storage cannot be asked.
 */
export async function checkProofImages(userId: string, deliveryId: string, move: keyof typeof CHECKED): Promise<void> {
  const checked = CHECKED[move];
  const proofs = await asService((tx) =>
    tx<{ name: string; kind: string; type: string }[]>`
      select o.name, private.proof_kind(o.name) as kind, private.proof_media_type(o.name) as type
      from public.deliveries d
      join public.drivers dr on dr.id = d.driver_id and dr.user_id = ${userId}
      join storage.objects o on o.bucket_id = ${BUCKET} and o.name like d.company_id || '/' || d.id || '/%'
      where d.id = ${deliveryId} and d.status = 'in_progress'
        and case ${move}::text when 'fail' then private.proof_kind(o.name) = private.failure_photo_kind(d.attempts)
          else private.proof_kind(o.name) in ('photo', 'signature') end`
  );
  const refused: string[] = [];
  for (const proof of proofs) {
    const head = await headOf(proof.name);
    if (head === null || isImageOf(proof.type, head)) continue;
    await remove(proof.name);
    refused.push(
      `${checked.what(proof.kind)} is not a ${proof.type.slice("image/".length).toUpperCase()} image as its name says`,
    );
  }
  if (refused.length > 0) {
    throw new HttpError(422, `${checked.refused(refused)}. It was removed: upload it again`);
  }
}

/**
 * A URL at which `name`, a proof object, can be read without credentials until `seconds` from now (Storage's signed
 * URL, asked as the service role), and when it stops; null when Storage cannot sign it now (the caller shows no
 * photo rather than failing).
 */
export async function signedProofUrl(
  name: string,
  seconds: number,
): Promise<{ url: string; expires_at: string } | null> {
  const timeout = timeoutSignal(5_000);
  const sign = storage(name).replace("/storage/v1/object/", "/storage/v1/object/sign/");
  // Storage counts from when it signs, in whole seconds: this is no later than that.
  const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + seconds * 1000).toISOString();
  try {
    const res = await fetch(sign, {
      method: "POST",
      headers: { ...serviceHeaders(), "content-type": "application/json" },
      body: JSON.stringify({ expiresIn: seconds }),
      signal: timeout.signal,
    });
    const answer = await res.json().catch(() => ({})) as { signedURL?: unknown };
    if (!res.ok || typeof answer.signedURL !== "string") return null;
    return { url: `${env().SUPABASE_URL.replace(/\/$/, "")}/storage/v1${answer.signedURL}`, expires_at: expiresAt };
  } catch {
    return null;
  } finally {
    timeout.clear();
  }
}

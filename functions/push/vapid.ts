// VAPID (RFC 8292): the platform identifies itself to push services with a
// JWT signed by its P-256 key, `Authorization: vapid t=<jwt>, k=<public key>`,
// whose audience is the push service's origin. @block65/webcrypto-web-push
// signs the same JWT but refuses any endpoint that is not https, which the
// local stack's push service simulator (plain http on loopback, a host
// WEBHOOK_ALLOWED_HOSTS lists) is; so the JWT is signed here with jose, one
// path for every endpoint, and the library encrypts (send.ts).
import { importJWK, type JWK, SignJWT } from "jose";

export interface VapidKeys {
  /** The 65-byte uncompressed point, base64url (the browsers' applicationServerKey). */
  publicKey: string;
  /** The 32-byte private scalar, base64url. */
  privateKey: string;
  /** mailto: or https: contact. */
  subject: string;
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromBase64url = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

/** The key as a JWK (x and y from the uncompressed point). */
export function vapidJwk(keys: VapidKeys): JWK {
  const point = fromBase64url(keys.publicKey);
  if (point.length !== 65 || point[0] !== 4) throw new Error("VAPID_PUBLIC_KEY is not an uncompressed P-256 point");
  return {
    kty: "EC",
    crv: "P-256",
    x: base64url(point.slice(1, 33)),
    y: base64url(point.slice(33, 65)),
    d: keys.privateKey,
  };
}

/** JWTs per audience, reused for an hour of their 12 (a push service may cache the verification). */
const cache = new Map<string, { header: string; until: number }>();

/** The Authorization header for a push to `endpoint`. */
export async function vapidAuthorization(endpoint: string, keys: VapidKeys, now = Date.now()): Promise<string> {
  const audience = new URL(endpoint).origin;
  const cacheKey = `${keys.publicKey} ${audience}`;
  const cached = cache.get(cacheKey);
  if (cached && cached.until > now) return cached.header;
  const key = await importJWK(vapidJwk(keys), "ES256");
  const seconds = Math.floor(now / 1000);
  const jwt = await new SignJWT({})
    .setProtectedHeader({ typ: "JWT", alg: "ES256" })
    .setAudience(audience)
    .setExpirationTime(seconds + 12 * 3600)
    .setSubject(keys.subject)
    .sign(key);
  const header = `vapid t=${jwt}, k=${keys.publicKey}`;
  cache.set(cacheKey, { header, until: now + 3600_000 });
  return header;
}

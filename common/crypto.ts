// Neutral code (common/): the cryptography the Edge Functions and the local
// stand-ins both use: the one constant-time compare of the tree, webhook
// signatures (lowercase hex HMAC-SHA256 over the raw body), and the shape of
// an AES-256 key. node:crypto only.
import { createHash, createHmac, timingSafeEqual as equalBytes } from "node:crypto";

/**
 * Lowercase hex HMAC-SHA256 of `body` under `secret`, synchronously (node:crypto):
 * WebCrypto would import the key and sign in asynchronous ops, costlier than
 * the hashing of a webhook's body.
 */
export function hmacHex(secret: string, body: Uint8Array<ArrayBuffer>): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/**
 * Whether two secrets are equal, in time that reveals neither them nor how much
 * of them matched, nor their lengths: node:crypto's timingSafeEqual over their
 * SHA-256 digests, which are always the same length.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  return equalBytes(sha256(a), sha256(b));
}

/** What isAes256Key asks of a key, as a configuration error says it. */
export const AES_256_KEY_RULE = "must be 32 random bytes, base64-encoded";

/** Whether `key` is an AES-256 key as SECRETS_ENCRYPTION_KEY holds one: 32 bytes, base64-encoded. */
export function isAes256Key(key: string): boolean {
  try {
    return atob(key).length === 32;
  } catch {
    return false;
  }
}

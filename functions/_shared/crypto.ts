// Pure cryptography: secrets at rest (AES-256-GCM under SECRETS_ENCRYPTION_KEY,
// WebCrypto) and webhook signatures. The HMAC and the constant-time compare are
// common/crypto.ts's, which the local stand-ins use too.
import { hmacHex, timingSafeEqual } from "../../common/crypto.ts";

export { hmacHex, timingSafeEqual };

const encoder = new TextEncoder();

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function aesKey(base64Key: string): Promise<CryptoKey> {
  let key = keyCache.get(base64Key);
  if (!key) {
    key = crypto.subtle.importKey("raw", fromBase64(base64Key), "AES-GCM", false, ["encrypt", "decrypt"]);
    keyCache.set(base64Key, key);
  }
  return key;
}

/** `v1.<base64 iv>.<base64 ciphertext+tag>`; a fresh 96-bit IV each time. */
export async function encryptSecret(plaintext: string, base64Key: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await aesKey(base64Key),
    encoder.encode(plaintext),
  );
  return `v1.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

export async function decryptSecret(sealed: string, base64Key: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("unknown secret format");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv) },
    await aesKey(base64Key),
    fromBase64(data),
  );
  return new TextDecoder().decode(plain);
}

/** True when `signature` is the HMAC of exactly these body bytes. */
export function verifySignature(secret: string, body: Uint8Array<ArrayBuffer>, signature: string): boolean {
  return timingSafeEqual(hmacHex(secret, body), signature.trim().toLowerCase());
}

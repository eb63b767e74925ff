// The local stack's VAPID key pair (docs/push.md), like its other keys
// (local/keys.ts): generated once per data directory and kept there, unless
// VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are given. Both as Web Push takes
// them: the 65-byte uncompressed P-256 point and the 32-byte scalar, base64url.
import { Buffer } from "node:buffer";
import { exportJWK, generateKeyPair } from "jose";

export interface VapidPair {
  publicKey: string;
  privateKey: string;
}

export async function generateVapidKeys(): Promise<VapidPair> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")]);
  return { publicKey: point.toString("base64url"), privateKey: jwk.d! };
}

/** The pair kept in `dataDir/vapid-keys.json`, made the first time. */
export async function loadVapidKeys(dataDir: string): Promise<VapidPair> {
  const file = `${dataDir}/vapid-keys.json`;
  try {
    const stored = JSON.parse(await Deno.readTextFile(file)) as VapidPair;
    if (stored.publicKey && stored.privateKey) return stored;
  } catch { /* none yet, or unreadable: make a new pair */ }
  const pair = await generateVapidKeys();
  await Deno.writeTextFile(file, JSON.stringify(pair), { mode: 0o600 });
  return pair;
}

// Key material of the local stack, like `supabase start` makes it: the legacy
// JWT secret and the anon / service_role API keys signed with it, plus an
// asymmetric (ES256) key that the local identity provider signs user sessions
// with and publishes at /auth/v1/.well-known/jwks.json. The ES256 key and the
// secrets encryption key are generated once per data directory and kept there.
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";

export const DEFAULT_JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";

export interface LocalKeys {
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
  signingKid: string;
  signingKey: CryptoKey;
  jwks: { keys: JWK[] };
  secretsEncryptionKey: string;
}

/** The legacy API key for a role, the same token `supabase start` prints for that secret. */
export function apiKey(jwtSecret: string, role: "anon" | "service_role"): Promise<string> {
  return new SignJWT({ iss: "supabase-demo", role, exp: 1983812996 })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(jwtSecret));
}

interface StoredKeys {
  signing: { kid: string; private: JWK; public: JWK };
  secretsEncryptionKey: string;
}

async function createStoredKeys(): Promise<StoredKeys> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return {
    signing: {
      kid,
      private: { ...(await exportJWK(privateKey)), kid, alg: "ES256" },
      public: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig", key_ops: ["verify"] },
    },
    secretsEncryptionKey: btoa(String.fromCharCode(...bytes)),
  };
}

export async function loadKeys(dataDir: string, jwtSecret: string): Promise<LocalKeys> {
  const path = `${dataDir}/keys.json`;
  let stored: StoredKeys;
  try {
    stored = JSON.parse(await Deno.readTextFile(path));
  } catch {
    stored = await createStoredKeys();
    await Deno.mkdir(dataDir, { recursive: true });
    await Deno.writeTextFile(path, JSON.stringify(stored), { mode: 0o600 });
  }
  return {
    jwtSecret,
    anonKey: await apiKey(jwtSecret, "anon"),
    serviceRoleKey: await apiKey(jwtSecret, "service_role"),
    signingKid: stored.signing.kid,
    signingKey: (await importJWK(stored.signing.private, "ES256")) as CryptoKey,
    jwks: { keys: [stored.signing.public] },
    secretsEncryptionKey: stored.secretsEncryptionKey,
  };
}

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
  /** The algorithm of the signing key (ES256 for the stack's own; the project's first key's otherwise). */
  signingAlg: string;
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

/** The public half of a private JWK: what a JWKS may publish. */
function publicJwk(key: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, k: _k, oth: _oth, key_ops: _ops, ext: _ext, ...rest } = key;
  return { ...rest, use: "sig", key_ops: ["verify"] };
}

/**
 * The project's own asymmetric keys, as `[auth] signing_keys_path` in config.toml names them (a JSON array of
 * private JWKs, as `supabase gen signing-key` writes it): the first signs sessions, every one verifies, and all are
 * published in the JWKS, as GoTrue does with the keys the CLI hands it. Symmetric (oct) keys are never published.
 */
export async function projectSigningKeys(
  keys: JWK[],
): Promise<Pick<LocalKeys, "signingKid" | "signingAlg" | "signingKey"> & { published: JWK[] }> {
  const asymmetric = keys.filter((key) => key.kty === "EC" || key.kty === "RSA" || key.kty === "OKP");
  const signing = asymmetric.find((key) => key.d);
  if (!signing?.kid || !signing.alg) {
    throw new Error("signing keys: no private EC, RSA or OKP key with a kid and an alg");
  }
  return {
    signingKid: signing.kid,
    signingAlg: signing.alg,
    // WebCrypto refuses a private key whose usages include verify, which the CLI's key_ops list: imported for signing.
    signingKey: (await importJWK({ ...signing, key_ops: ["sign"] }, signing.alg)) as CryptoKey,
    published: asymmetric.map(publicJwk),
  };
}

export async function loadKeys(dataDir: string, jwtSecret: string, signingKeys?: JWK[]): Promise<LocalKeys> {
  const path = `${dataDir}/keys.json`;
  let stored: StoredKeys;
  try {
    stored = JSON.parse(await Deno.readTextFile(path));
  } catch {
    stored = await createStoredKeys();
    await Deno.mkdir(dataDir, { recursive: true });
    await Deno.writeTextFile(path, JSON.stringify(stored), { mode: 0o600 });
  }
  const own = {
    signingKid: stored.signing.kid,
    signingAlg: "ES256",
    signingKey: (await importJWK(stored.signing.private, "ES256")) as CryptoKey,
  };
  const project = signingKeys?.length ? await projectSigningKeys(signingKeys) : null;
  return {
    jwtSecret,
    anonKey: await apiKey(jwtSecret, "anon"),
    serviceRoleKey: await apiKey(jwtSecret, "service_role"),
    ...(project ?? own),
    // The project's keys sign and are published; the stack's own key keeps verifying sessions it signed before.
    jwks: { keys: project ? [...project.published, stored.signing.public] : [stored.signing.public] },
    secretsEncryptionKey: stored.secretsEncryptionKey,
  };
}

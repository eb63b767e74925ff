// Configuration of the Edge Functions (docs/contract.md, Configuration), validated with zod the
// first time it is read; a missing or malformed setting names itself.
import { z } from "zod";

const url = z.string().url();

/** The AES-256 key for secrets at rest; the local stack checks it with this too, before it starts anything. */
export const EncryptionKey = z.string().refine((key) => {
  try {
    return atob(key).length === 32;
  } catch {
    return false;
  }
}, "must be 32 random bytes, base64-encoded");
const Schema = z.object({
  SUPABASE_URL: url,
  SUPABASE_DB_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL"),
  SUPABASE_ANON_KEY: z.string().min(1),
  SUPABASE_SERVICE_ROLE_KEY: z.string().min(1),
  SUPABASE_JWT_SECRET: z.string().min(32).optional(),
  SUPABASE_JWKS: z.string().optional().transform((text, ctx) => {
    if (!text) return undefined;
    try {
      const jwks = JSON.parse(text);
      if (Array.isArray(jwks?.keys)) return jwks as { keys: Record<string, unknown>[] };
    } catch { /* reported below */ }
    ctx.addIssue({ code: "custom", message: 'must be a JSON Web Key Set ({"keys": [...]})' });
    return z.NEVER;
  }),
  GATEWAY_SANDBOX_URL: url,
  GATEWAY_PRODUCTION_URL: url,
  GATEWAY_PLATFORM_WEBHOOK_SECRET: z.string().min(1).optional(),
  GATEWAY_WEBHOOK_REQUIRE_SIGNATURE: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  ROUTING_URL: url,
  CEP_URL: url,
  GEOCODING_URL: url,
  SECRETS_ENCRYPTION_KEY: EncryptionKey,
});

export type Env = z.infer<typeof Schema>;

let cached: Env | undefined;

export class ConfigurationError extends Error {}

/** The validated configuration; throws ConfigurationError naming every bad setting. */
export function env(): Env {
  if (cached) return cached;
  const parsed = Schema.safeParse(Deno.env.toObject());
  if (!parsed.success) {
    const names = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigurationError(`invalid configuration: ${names.join("; ")}`);
  }
  cached = parsed.data;
  return cached;
}

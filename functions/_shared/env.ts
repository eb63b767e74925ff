// Configuration of the Edge Functions (docs/contract.md, Configuration), validated with zod the
// first time it is read; a missing or malformed setting names itself.
import { z } from "zod";
import { AES_256_KEY_RULE, isAes256Key } from "../../common/crypto.ts";

const url = z.string().url();

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
  /** A VROOM server's HTTP API (vroom-express): route plans ask it first; unset, the built-in planner plans. */
  OPTIMIZATION_URL: url.optional(),
  CEP_URL: url,
  GEOCODING_URL: url,
  /** The AES-256 key for secrets at rest (the local stack checks it with the same rule before it starts anything). */
  SECRETS_ENCRYPTION_KEY: z.string().refine(isAes256Key, AES_256_KEY_RULE),
  /** The web app's public origin: recipients' tracking links are `{WEB_APP_URL}/track/{token}`. */
  WEB_APP_URL: url.transform((value) => value.replace(/\/+$/, "")),
  /** WhatsApp Cloud API: `{WHATSAPP_URL}/{WHATSAPP_PHONE_ID}/messages` with `Authorization: Bearer {WHATSAPP_TOKEN}`. */
  WHATSAPP_URL: url.transform((value) => value.replace(/\/+$/, "")),
  WHATSAPP_TOKEN: z.string().min(1),
  WHATSAPP_PHONE_ID: z.string().regex(/^\d{1,30}$/, "must be the numeric id of the WhatsApp business phone number"),
  /** `smtp://user:pass@host:port` (STARTTLS when the server offers it) or `smtps://...` (TLS from the start). */
  SMTP_URL: z.string().refine((value) => {
    try {
      const parsed = new URL(value);
      return ["smtp:", "smtps:"].includes(parsed.protocol) && parsed.hostname !== "";
    } catch {
      return false;
    }
  }, "must be an smtp:// or smtps:// URL with a host"),
  /** The address e-mails to recipients come from; the company's name is the sender's name. */
  SMTP_FROM: z.email(),
  /**
   * Hosts webhooks may reach although they are (or resolve to) private or loopback addresses, over plain http too:
   * comma-separated (docs/integrations.md). Empty: none.
   */
  WEBHOOK_ALLOWED_HOSTS: z.string().max(2000).default("").refine(
    (value) => value.split(",").every((host) => /^[A-Za-z0-9.:\[\]-]*$/.test(host.trim())),
    "must be comma-separated host names or IP addresses",
  ),
  /**
   * Web Push (docs/push.md): the platform's VAPID key pair (RFC 8292), P-256, base64url: the public key as the
   * 65-byte uncompressed point browsers take as `applicationServerKey`, the private key as its 32-byte scalar; and
   * the contact push services may write to (`mailto:` or `https:`). All three or none: without them no push is sent.
   */
  VAPID_PUBLIC_KEY: z.string().regex(/^[A-Za-z0-9_-]{87}$/, "must be a P-256 public key: 65 bytes, base64url")
    .optional(),
  VAPID_PRIVATE_KEY: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be a P-256 private key: 32 bytes, base64url")
    .optional(),
  VAPID_SUBJECT: z.string().regex(/^(mailto:\S+@\S+|https:\/\/\S+)$/, "must be a mailto: or https: URL").optional(),
}).superRefine((value, ctx) => {
  const set = [value.VAPID_PUBLIC_KEY, value.VAPID_PRIVATE_KEY, value.VAPID_SUBJECT].filter(Boolean).length;
  if (set !== 0 && set !== 3) {
    ctx.addIssue({
      code: "custom",
      path: ["VAPID_PUBLIC_KEY"],
      message: "VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT are set together or not at all",
    });
  }
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

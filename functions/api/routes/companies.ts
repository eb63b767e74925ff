// Registration, the company profile and the gateway configuration.
import { z } from "zod";
import { withNewAuthUser } from "../auth-admin.ts";
import { Cnpj } from "../brazil.ts";
import { encryptSecret } from "../../_shared/crypto.ts";
import { asService, rpc } from "../../_shared/db.ts";
import { env } from "../../_shared/env.ts";
import { defineRoute } from "../../_shared/route.ts";
import { Email, HeaderSafe, Name, Password, Timestamp } from "../schemas.ts";

export const GatewayEnvironment = z.enum(["sandbox", "production"]);

/** A gateway key is a sandbox key when it carries the sandbox marker. */
export function environmentOf(apiKey: string): z.infer<typeof GatewayEnvironment> {
  return apiKey.includes("_hmlg_") ? "sandbox" : "production";
}

const Company = z.object({
  id: z.uuid(),
  name: z.string(),
  gateway: z.object({ configured: z.boolean(), environment: GatewayEnvironment.nullable() }),
  created_at: Timestamp,
  document: z.string().nullable().describe(
    "The company's CNPJ (numeric, or alphanumeric since July 2026), upper case without punctuation; null when " +
      "not given at registration.",
  ),
}).meta({ id: "Company" });

export const register = defineRoute({
  method: "post",
  path: "/api/v1/companies/register",
  tag: "companies",
  summary: "Register a company and its owner",
  description: "Creates the owner's login (e-mail and password) and the company, on the free plan with default " +
    "prices (base_fee 5.00, per_km 1.50, minimum_fee 8.00, driver_share 0.80). All or nothing: when the company " +
    "cannot be created, the login is removed again. Then sign in at /auth/v1/token.",
  auth: "none",
  body: z.object({ company_name: Name, owner_name: Name, email: Email, password: Password, document: Cnpj.nullish() }),
  responses: {
    201: { description: "Registered", schema: z.object({ company_id: z.uuid(), user_id: z.uuid() }) },
    409: { description: "The e-mail address is taken" },
  },
  async handler({ body }) {
    const created = await withNewAuthUser(
      { email: body.email, password: body.password, user_metadata: { name: body.owner_name } },
      (userId) =>
        asService((tx) =>
          rpc(tx, "register_company", {
            owner_user_id: userId,
            company_name: body.company_name,
            owner_name: body.owner_name,
            document: body.document ?? undefined,
          })
        ),
    );
    return { status: 201, body: created };
  },
});

export const me = defineRoute({
  method: "get",
  path: "/api/v1/companies/me",
  tag: "companies",
  summary: "The caller's company",
  auth: "bearer",
  roles: "members",
  responses: { 200: { description: "The company; never a secret", schema: Company } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_my_company")) }),
});

const WEBHOOK_SECRET_MIN_LENGTH = 16;

export const gatewayConfig = defineRoute({
  method: "post",
  path: "/api/v1/companies/me/gateway-config",
  tag: "companies",
  summary: "Store the company's payment gateway key and webhook secret",
  description: "Both are stored encrypted (AES-256-GCM) and are never returned or logged. The environment is " +
    "detected from the key: a key with the sandbox marker `_hmlg_` is a sandbox key. From now on (within 5 s on " +
    "every instance), webhooks to /api/v1/webhooks/gateway/{company_id} must be signed with this webhook_secret.",
  auth: "bearer",
  roles: "owners",
  body: z.object({
    api_key: HeaderSafe(z.string().trim().min(1).max(500)),
    // A short secret can be guessed, and a guessed secret signs payments and transfers for the company.
    webhook_secret: HeaderSafe(
      z.string().min(WEBHOOK_SECRET_MIN_LENGTH, `must have at least ${WEBHOOK_SECRET_MIN_LENGTH} characters`).max(500),
    ).describe(`At least ${WEBHOOK_SECRET_MIN_LENGTH} characters; use 32 or more random ones.`),
  }),
  responses: {
    200: {
      description: "Stored",
      schema: z.object({ configured: z.literal(true), environment: GatewayEnvironment }),
    },
  },
  async handler({ body, authorize }) {
    const companyId = await authorize();
    const key = env().SECRETS_ENCRYPTION_KEY;
    const args = {
      company_id: companyId,
      api_key_ciphertext: await encryptSecret(body.api_key, key),
      webhook_secret_ciphertext: await encryptSecret(body.webhook_secret, key),
      environment: environmentOf(body.api_key),
    };
    // Every request reads the settings it needs (gateway.ts): the new ones apply at once, on every instance.
    return { body: await asService((tx) => rpc(tx, "save_gateway_config", args)) };
  },
});

export default [register, me, gatewayConfig];

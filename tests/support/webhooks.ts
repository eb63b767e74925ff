// The gateway's webhooks as the gateway sends them: signed over the raw bytes.
import { createHmac } from "node:crypto";
import { api, type TestCompany } from "./api.ts";

/** The platform account's webhook path. */
export const PLATFORM_WEBHOOK = "/api/v1/webhooks/gateway";

/** One company's webhook path (a company, or any id in its place). */
export const companyWebhook = (company: TestCompany | string) =>
  `${PLATFORM_WEBHOOK}/${typeof company === "string" ? company : company.companyId}`;

export function sign(secret: string, body: string | Uint8Array): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/** POSTs `body` (serialised once) to a webhook path, signed with `secret` unless it is null. */
export function webhook(path: string, body: unknown, secret: string | null, headers: Record<string, string> = {}) {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  return api(path, {
    method: "POST",
    rawBody: raw,
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { "gateway-signature": sign(secret, raw) }),
      ...headers,
    },
  });
}

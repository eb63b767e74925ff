// The payment gateway client (docs/contract.md, External services). A 4xx with `{"errors": [...]}` is
// the caller's problem (422 with the gateway's description); a 5xx, a timeout
// (10 s) or a refused connection is 502.
import { decryptSecret } from "./crypto.ts";
import { db } from "./db.ts";
import { env } from "./env.ts";
import { HttpError } from "./errors.ts";
import { inlined } from "./sql-text.ts";
import { isTimeout, timeoutSignal } from "./timeout.ts";

const TIMEOUT_MS = 10_000;

export interface GatewayObject {
  id: string;
  status: string;
  value?: number;
  externalReference?: string | null;
  [key: string]: unknown;
}

export interface PixQrCode {
  encodedImage: string;
  payload: string;
  expirationDate: string;
}

/** A gateway refusal (4xx) carrying its description. */
export class GatewayRejected extends HttpError {
  constructor(description: string) {
    super(422, `Payment gateway refused the request: ${description}`);
  }
}

/** The gateway failed or could not be reached. */
export class GatewayUnavailable extends HttpError {
  constructor(reason: string) {
    super(502, `Payment gateway unavailable: ${reason}`);
  }
}

export class GatewayClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T> {
    // One deadline for the whole exchange, the answer's body included.
    const timeout = timeoutSignal(TIMEOUT_MS);
    let res: Response;
    let payload: unknown;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          access_token: this.apiKey,
          "content-type": "application/json",
          "user-agent": "delivery-platform",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: timeout.signal,
      });
      payload = await res.json().catch((error) => {
        if (isTimeout(error)) throw error;
        return null;
      });
    } catch (error) {
      throw new GatewayUnavailable(
        isTimeout(error) ? "timed out" : "unreachable",
      );
    } finally {
      timeout.clear();
    }
    if (res.ok && payload) return payload as T;
    if (res.status >= 400 && res.status < 500) {
      const errors = (payload as { errors?: { description?: string }[] } | null)
        ?.errors;
      throw new GatewayRejected(
        errors?.map((e) => e.description).filter(Boolean).join("; ") ||
          `HTTP ${res.status}`,
      );
    }
    throw new GatewayUnavailable(`HTTP ${res.status}`);
  }

  createCustomer(
    input: { name: string; cpfCnpj: string; email?: string },
  ): Promise<GatewayObject> {
    return this.request("POST", "/v3/customers", input);
  }

  createPixCharge(input: {
    customer: string;
    value: number;
    dueDate: string;
    description: string;
    externalReference: string;
  }): Promise<GatewayObject> {
    return this.request("POST", "/v3/payments", {
      ...input,
      billingType: "PIX",
    });
  }

  pixQrCode(paymentId: string): Promise<PixQrCode> {
    return this.request(
      "GET",
      `/v3/payments/${encodeURIComponent(paymentId)}/pixQrCode`,
    );
  }

  createPixTransfer(input: {
    value: number;
    pixAddressKey: string;
    pixAddressKeyType: "CPF" | "CNPJ" | "EMAIL" | "PHONE" | "EVP";
    description: string;
    externalReference: string;
  }): Promise<GatewayObject> {
    return this.request("POST", "/v3/transfers", input);
  }

  /** Removes an unpaid charge, so that it can no longer be paid. */
  deletePayment(id: string): Promise<{ deleted: boolean; id: string }> {
    return this.request("DELETE", `/v3/payments/${encodeURIComponent(id)}`);
  }

  /**
   * Refunds a received payment in full (the gateway's `POST /v3/payments/{id}/refund`, every field optional):
   * answered with the payment, `status` `REFUNDED` when done at once, else a refund in progress
   * (`REFUND_REQUESTED`, `REFUND_IN_PROGRESS`), settled later by the PAYMENT_REFUNDED event.
   */
  refundPayment(id: string, description?: string): Promise<GatewayObject> {
    return this.request(
      "POST",
      `/v3/payments/${encodeURIComponent(id)}/refund`,
      description ? { description } : {},
    );
  }

  getPayment(id: string): Promise<GatewayObject> {
    return this.request("GET", `/v3/payments/${encodeURIComponent(id)}`);
  }

  getTransfer(id: string): Promise<GatewayObject> {
    return this.request("GET", `/v3/transfers/${encodeURIComponent(id)}`);
  }

  /** One page of the account's transfers created on or after a day (YYYY-MM-DD), oldest first. */
  listTransfers(
    createdFrom: string,
    offset: number,
    limit = 100,
  ): Promise<GatewayList> {
    const query = new URLSearchParams({
      "dateCreated[ge]": createdFrom,
      offset: String(offset),
      limit: String(limit),
    });
    return this.request("GET", `/v3/transfers?${query}`);
  }
}

export interface GatewayList {
  data: GatewayObject[];
  hasMore: boolean;
}

export interface CompanyGateway {
  client: GatewayClient;
  environment: "sandbox" | "production";
}

/** A company's row as stored: the secrets still encrypted. */
export interface StoredConfig {
  api_key_ciphertext: string;
  webhook_secret_ciphertext: string;
  environment: "sandbox" | "production";
}

/** The stored row, or null from a read that found none (a left join's nulls). */
export function storedConfig(
  row: Partial<Record<keyof StoredConfig, string | null>>,
): StoredConfig | null {
  return row.api_key_ciphertext && row.webhook_secret_ciphertext &&
      row.environment
    ? {
      api_key_ciphertext: row.api_key_ciphertext,
      webhook_secret_ciphertext: row.webhook_secret_ciphertext,
      environment: row.environment as StoredConfig["environment"],
    }
    : null;
}

// A company's settings are read from the database by every request that needs them, so a change (a new webhook
// secret, a production key) applies at once on every instance. Only the decryption is remembered, keyed by the
// ciphertext itself: a changed setting is another ciphertext, never a stale hit.
const MAX_SECRETS = 2_000;
const decryptedSecrets = new Map<string, Promise<string>>();

function decrypted(ciphertext: string): Promise<string> {
  const known = decryptedSecrets.get(ciphertext);
  if (known) return known;
  const plain = decryptSecret(ciphertext, env().SECRETS_ENCRYPTION_KEY);
  if (decryptedSecrets.size >= MAX_SECRETS) {
    decryptedSecrets.delete(decryptedSecrets.keys().next().value!);
  }
  decryptedSecrets.set(ciphertext, plain);
  // A failure is not kept: the next request tries again.
  plain.catch(() => decryptedSecrets.delete(ciphertext));
  return plain;
}

/**
 * The statement that reads whether a company exists and its stored gateway configuration, its value inline
 * (sql-text.ts): one round trip. The webhook bench sends it too.
 */
export function settingsStatement(companyId: string): [string, unknown[]] {
  return inlined([
    `select g.api_key_ciphertext, g.webhook_secret_ciphertext, g.environment
     from public.companies c left join private.gateway_configs g on g.company_id = c.id
     where c.id = $1`,
    [companyId],
  ]);
}

/** Whether the company exists, and its stored gateway configuration: one statement. */
async function readSettings(
  companyId: string,
): Promise<{ known: boolean; config: StoredConfig | null }> {
  // deno-lint-ignore no-explicit-any
  const [text, values] = settingsStatement(companyId) as [string, any[]];
  const [row] = await db().unsafe<
    Partial<Record<keyof StoredConfig, string | null>>[]
  >(text, values);
  return { known: row !== undefined, config: row ? storedConfig(row) : null };
}

/** The gateway of a company whose configuration was just read. */
export async function gatewayOf(config: StoredConfig): Promise<CompanyGateway> {
  const settings = env();
  const apiKey = await decrypted(config.api_key_ciphertext);
  const baseUrl = config.environment === "sandbox" ? settings.GATEWAY_SANDBOX_URL : settings.GATEWAY_PRODUCTION_URL;
  return {
    client: new GatewayClient(baseUrl.replace(/\/$/, ""), apiKey),
    environment: config.environment,
  };
}

/** The company's gateway (its API key decrypted), or null when it has not configured one. */
export async function companyGateway(
  companyId: string,
): Promise<CompanyGateway | null> {
  const { config } = await readSettings(companyId);
  return config ? await gatewayOf(config) : null;
}

/**
 * For the company webhook endpoint: whether the company exists, its stored configuration, and its webhook secret
 * decrypted (null when it has not configured the gateway).
 */
export async function companyWebhookSecret(
  companyId: string,
): Promise<
  { known: boolean; config: StoredConfig | null; secret: string | null }
> {
  const { known, config } = await readSettings(companyId);
  return {
    known,
    config,
    secret: config ? await decrypted(config.webhook_secret_ciphertext) : null,
  };
}

// The payment gateway client (docs/contract.md, External services). A 4xx with `{"errors": [...]}` is
// the caller's problem (422 with the gateway's description); a 5xx, a timeout
// (10 s) or a refused connection is 502.
import { decryptSecret } from "./crypto.ts";
import { asService } from "./db.ts";
import { env } from "./env.ts";
import { HttpError } from "./errors.ts";

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
  constructor(private readonly baseUrl: string, private readonly apiKey: string) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { access_token: this.apiKey, "content-type": "application/json", "user-agent": "delivery-platform" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new GatewayUnavailable((error as Error).name === "TimeoutError" ? "timed out" : "unreachable");
    }
    const payload = await res.json().catch(() => null);
    if (res.ok && payload) return payload as T;
    if (res.status >= 400 && res.status < 500) {
      const errors = (payload as { errors?: { description?: string }[] } | null)?.errors;
      throw new GatewayRejected(errors?.map((e) => e.description).filter(Boolean).join("; ") || `HTTP ${res.status}`);
    }
    throw new GatewayUnavailable(`HTTP ${res.status}`);
  }

  createCustomer(input: { name: string; cpfCnpj: string; email?: string }): Promise<GatewayObject> {
    return this.request("POST", "/v3/customers", input);
  }

  createPixCharge(input: {
    customer: string;
    value: number;
    dueDate: string;
    description: string;
    externalReference: string;
  }): Promise<GatewayObject> {
    return this.request("POST", "/v3/payments", { ...input, billingType: "PIX" });
  }

  pixQrCode(paymentId: string): Promise<PixQrCode> {
    return this.request("GET", `/v3/payments/${encodeURIComponent(paymentId)}/pixQrCode`);
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

  getPayment(id: string): Promise<GatewayObject> {
    return this.request("GET", `/v3/payments/${encodeURIComponent(id)}`);
  }

  getTransfer(id: string): Promise<GatewayObject> {
    return this.request("GET", `/v3/transfers/${encodeURIComponent(id)}`);
  }

  /** One page of the account's transfers created on or after a day (YYYY-MM-DD), oldest first. */
  listTransfers(createdFrom: string, offset: number, limit = 100): Promise<GatewayList> {
    const query = new URLSearchParams({ "dateCreated[ge]": createdFrom, offset: String(offset), limit: String(limit) });
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

interface StoredConfig {
  api_key_ciphertext: string;
  webhook_secret_ciphertext: string;
  environment: "sandbox" | "production";
}

async function storedConfig(companyId: string): Promise<StoredConfig | null> {
  const [row] = await asService((tx) =>
    tx<StoredConfig[]>`select api_key_ciphertext, webhook_secret_ciphertext, environment
                       from private.gateway_configs where company_id = ${companyId}`
  );
  return row ?? null;
}

/** The company's gateway (its API key decrypted), or null when it has not configured one. */
export async function companyGateway(companyId: string): Promise<CompanyGateway | null> {
  const row = await storedConfig(companyId);
  if (!row) return null;
  const config = env();
  const apiKey = await decryptSecret(row.api_key_ciphertext, config.SECRETS_ENCRYPTION_KEY);
  const baseUrl = row.environment === "sandbox" ? config.GATEWAY_SANDBOX_URL : config.GATEWAY_PRODUCTION_URL;
  return { client: new GatewayClient(baseUrl.replace(/\/$/, ""), apiKey), environment: row.environment };
}

/** The company's webhook secret, decrypted, or null when it has not configured the gateway. */
export async function companyWebhookSecret(companyId: string): Promise<string | null> {
  const row = await storedConfig(companyId);
  return row ? await decryptSecret(row.webhook_secret_ciphertext, env().SECRETS_ENCRYPTION_KEY) : null;
}

// The payment gateway client (docs/contract.md, External services). A 4xx with `{"errors": [...]}` is
// the caller's problem (422 with the gateway's description); a 5xx, a timeout
// (10 s) or a refused connection is 502.
import { decryptSecret } from "./crypto.ts";
import { db } from "./db.ts";
import { env } from "./env.ts";
import { HttpError } from "./errors.ts";
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
  constructor(private readonly baseUrl: string, private readonly apiKey: string) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    // One deadline for the whole exchange, the answer's body included.
    const timeout = timeoutSignal(TIMEOUT_MS);
    let res: Response;
    let payload: unknown;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { access_token: this.apiKey, "content-type": "application/json", "user-agent": "delivery-platform" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: timeout.signal,
      });
      payload = await res.json().catch((error) => {
        if (isTimeout(error)) throw error;
        return null;
      });
    } catch (error) {
      throw new GatewayUnavailable(isTimeout(error) ? "timed out" : "unreachable");
    } finally {
      timeout.clear();
    }
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

/** A company's row as stored: the secrets still encrypted. */
export interface StoredConfig {
  api_key_ciphertext: string;
  webhook_secret_ciphertext: string;
  environment: "sandbox" | "production";
}

/**
 * How long a company's gateway settings are reused before they are read again:
 * a configuration change applies within this time on every instance (at once on
 * the one that stored it). docs/contract.md, Configuration.
 */
export const SETTINGS_TTL_MS = 5_000;
const MAX_COMPANIES = 1_000;

interface Settings {
  /** Whether the company exists at all (the company webhook endpoint answers 404 otherwise). */
  known: boolean;
  row: StoredConfig | null;
  readAt: number;
  /** Each secret is decrypted only when a request needs it, then kept with the entry. */
  apiKey?: Promise<string>;
  webhookSecret?: Promise<string>;
}

const settings = new Map<string, Settings>();

/**
 * Remembers a company's settings read elsewhere (the webhook's own read joins
 * them), replacing what was known if they differ.
 */
export function rememberGatewayConfig(companyId: string, row: StoredConfig | null): void {
  const known = settings.get(companyId);
  if (
    known && known.row?.api_key_ciphertext === row?.api_key_ciphertext &&
    known.row?.webhook_secret_ciphertext === row?.webhook_secret_ciphertext &&
    known.row?.environment === row?.environment
  ) {
    known.readAt = Date.now();
    return;
  }
  put(companyId, { known: true, row, readAt: Date.now() });
}

/** Forgets a company's settings (after this instance stored new ones). */
export function forgetGatewayConfig(companyId: string): void {
  settings.delete(companyId);
}

function put(companyId: string, entry: Settings): Settings {
  settings.delete(companyId);
  if (settings.size >= MAX_COMPANIES) settings.delete(settings.keys().next().value!);
  settings.set(companyId, entry);
  return entry;
}

const isFresh = (entry: Settings | undefined): entry is Settings =>
  entry !== undefined && Date.now() - entry.readAt < SETTINGS_TTL_MS;

/** Whether this instance read the company's settings less than SETTINGS_TTL_MS ago. */
export function settingsAreFresh(companyId: string): boolean {
  return isFresh(settings.get(companyId));
}

async function settingsOf(companyId: string): Promise<Settings> {
  const hit = settings.get(companyId);
  if (isFresh(hit)) return hit;
  // One statement, no transaction: a read by trusted code of the company and its row.
  const [row] = await db()<(StoredConfig & { found: boolean })[]>`
    select true as found, g.api_key_ciphertext, g.webhook_secret_ciphertext, g.environment
    from public.companies c left join private.gateway_configs g on g.company_id = c.id
    where c.id = ${companyId}`;
  return put(companyId, {
    known: row !== undefined,
    row: row?.api_key_ciphertext
      ? {
        api_key_ciphertext: row.api_key_ciphertext,
        webhook_secret_ciphertext: row.webhook_secret_ciphertext,
        environment: row.environment,
      }
      : null,
    readAt: Date.now(),
  });
}

function decrypted(entry: Settings, field: "apiKey" | "webhookSecret"): Promise<string> {
  const sealed = field === "apiKey" ? entry.row!.api_key_ciphertext : entry.row!.webhook_secret_ciphertext;
  const plain = entry[field] ??= decryptSecret(sealed, env().SECRETS_ENCRYPTION_KEY);
  plain.catch(() => {
    // A failure is not kept: the next request tries again.
    if (entry[field] === plain) delete entry[field];
  });
  return plain;
}

/** The company's gateway (its API key decrypted), or null when it has not configured one. */
export async function companyGateway(companyId: string): Promise<CompanyGateway | null> {
  const entry = await settingsOf(companyId);
  if (!entry.row) return null;
  const config = env();
  const apiKey = await decrypted(entry, "apiKey");
  const baseUrl = entry.row.environment === "sandbox" ? config.GATEWAY_SANDBOX_URL : config.GATEWAY_PRODUCTION_URL;
  return { client: new GatewayClient(baseUrl.replace(/\/$/, ""), apiKey), environment: entry.row.environment };
}

/**
 * For the company webhook endpoint: whether the company exists, and its webhook
 * secret, decrypted (null when it has not configured the gateway).
 */
export async function companyWebhookSecret(companyId: string): Promise<{ known: boolean; secret: string | null }> {
  const entry = await settingsOf(companyId);
  return { known: entry.known, secret: entry.row ? await decrypted(entry, "webhookSecret") : null };
}

// The /api/v1 client, typed from the OpenAPI document the service serves
// (schema.d.ts: `npm run web:types` regenerates it from a running stack).
import createClient, { type Middleware } from "openapi-fetch";
import { config } from "../config.ts";
import { reportAnswer } from "../lib/online.ts";
import { supabase } from "../lib/supabase.ts";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Delivery = Schemas["Delivery"];
export type Driver = Schemas["Driver"];
export type Withdrawal = Schemas["Withdrawal"];
export type WebhookEvent = Schemas["WebhookEvent"];
export type Wallet = Schemas["Wallet"];
export type WalletEntry = Schemas["WalletEntry"];
export type DriverLocation = Schemas["DriverLocation"];
export type DriverLocationItem = Schemas["DriverLocationItem"];
export type RouteQuote = Schemas["RouteQuote"];
export type Place = Schemas["Place"];
export type Postcode = Schemas["Postcode"];
export type Prices = Schemas["Prices"];
export type Company = Schemas["Company"];
export type Subscription = Schemas["Subscription"];
export type DeliveryStatus = Delivery["status"];
export type PaymentStatus = Delivery["payment_status"];
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** An answer other than 2xx, or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter: number | null = null,
    /** The kept answer of an earlier request with the same Idempotency-Key: trying again answers it again. */
    readonly replayed = false,
  ) {
    super(`HTTP ${status}`);
  }
}

const auth: Middleware = {
  async onRequest({ request }) {
    const { data } = await supabase.auth.getSession();
    if (data.session) request.headers.set("authorization", `Bearer ${data.session.access_token}`);
    return request;
  },
};

/**
 * An Idempotency-Key on every POST: the API keeps the first answer of a key and answers it again to a retry, so a
 * retry after a lost answer does nothing twice. One key per request the user means: every try of the same request
 * (same address and body) carries the same key until one gets an answer worth keeping, and the next request, even
 * an identical one, gets a new key. A request that brings its own key (the driver's outbox, which keeps it across
 * reloads) keeps it.
 */
const keyByRequest = new Map<string, string>();
const requestByKey = new Map<string, string>();
/** No answer (a lost connection leaves the key waiting), the first try still running, a busy or failing server. */
const triedAgainLater = (status: number) => status === 409 || status === 429 || status >= 500;

const idempotency: Middleware = {
  async onRequest({ request }) {
    if (request.method !== "POST" || request.headers.has("idempotency-key")) return request;
    const identity = `${request.url}\n${await request.clone().text()}`;
    let key = keyByRequest.get(identity);
    if (!key) {
      key = crypto.randomUUID();
      keyByRequest.set(identity, key);
      requestByKey.set(key, identity);
    }
    request.headers.set("idempotency-key", key);
    return request;
  },
  onResponse({ request, response }) {
    const key = request.headers.get("idempotency-key");
    const identity = key && requestByKey.get(key);
    if (!identity || triedAgainLater(response.status)) return;
    keyByRequest.delete(identity);
    requestByKey.delete(key);
  },
};

export const api = createClient<paths>({ baseUrl: config.apiUrl });
api.use(auth, idempotency);

/** The data of an openapi-fetch answer, or an ApiError. */
export async function call<T>(
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result;
  try {
    result = await request;
  } catch {
    reportAnswer(false);
    throw new ApiError(0, null);
  }
  reportAnswer(true);
  if (result.response.ok) return result.data as T;
  const retry = Number(result.response.headers.get("retry-after"));
  throw new ApiError(
    result.response.status,
    result.error ?? null,
    Number.isFinite(retry) && retry > 0 ? retry : null,
    result.response.headers.get("idempotent-replayed") === "true",
  );
}

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

export const api = createClient<paths>({ baseUrl: config.apiUrl });
api.use(auth);

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
  throw new ApiError(result.response.status, result.error ?? null, Number.isFinite(retry) && retry > 0 ? retry : null);
}

// Prices, the subscription and the webhook audit log.
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { Money, pageOf, PageQuery, Timestamp } from "../schemas.ts";

const Prices = z.object({
  base_fee: Money,
  per_km: Money,
  minimum_fee: Money,
  driver_share: z.number().min(0).max(1).refine(
    (value) => Math.abs(Math.round(value * 10_000) - value * 10_000) < 1e-6,
    "must have at most 4 decimal places",
  ),
});

export const getPrices = defineRoute({
  method: "get",
  path: "/api/v1/prices",
  tag: "prices",
  summary: "The company's price table",
  description: "A delivery costs max(minimum_fee, base_fee + per_km * km), rounded to cents; the driver is " +
    "credited price * driver_share when it completes the delivery.",
  auth: "bearer",
  roles: "members",
  responses: {
    200: { description: "The prices", schema: Prices.extend({ updated_at: Timestamp }).meta({ id: "Prices" }) },
  },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_prices")) }),
});

export const putPrices = defineRoute({
  method: "put",
  path: "/api/v1/prices",
  tag: "prices",
  summary: "Replace the company's price table",
  auth: "bearer",
  roles: "delivery_managers",
  body: Prices,
  responses: { 200: { description: "The prices", schema: Prices.extend({ updated_at: Timestamp }) } },
  handler: async ({ body, asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "set_prices", body)) }),
});

const Subscription = z.object({
  plan: z.enum(["free", "pro", "enterprise"]),
  status: z.enum(["active", "past_due", "cancelled"]),
  current_period_end: Timestamp.nullable(),
}).meta({ id: "Subscription" });

export const getSubscription = defineRoute({
  method: "get",
  path: "/api/v1/billing/subscription",
  tag: "billing",
  summary: "The company's subscription",
  auth: "bearer",
  roles: "owners",
  responses: { 200: { description: "The subscription", schema: Subscription } },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "get_subscription")) }),
});

export const putSubscription = defineRoute({
  method: "put",
  path: "/api/v1/billing/subscription",
  tag: "billing",
  summary: "Change the company's plan",
  description: "A new company starts on `free`. Paid plans run in 30-day periods from the change.",
  auth: "bearer",
  roles: "owners",
  body: z.object({ plan: z.enum(["free", "pro", "enterprise"]) }),
  responses: { 200: { description: "The subscription", schema: Subscription } },
  handler: async ({ body, asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "set_subscription", body)) }),
});

const WebhookEvent = z.object({
  id: z.uuid(),
  received_at: Timestamp,
  event: z.string().nullable(),
  result: z.enum(["processed", "duplicate", "ignored", "rejected", "error"]),
  object_id: z.string().nullable(),
  detail: z.string().nullable(),
}).meta({ id: "WebhookEvent" });

export const listWebhookEvents = defineRoute({
  method: "get",
  path: "/api/v1/webhook-events",
  tag: "webhooks",
  summary: "The company's webhook audit log, newest first",
  auth: "bearer",
  roles: "company_managers",
  query: PageQuery,
  responses: { 200: { description: "One page", schema: pageOf(WebhookEvent) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "list_webhook_events", { page_limit: query.limit, cursor: query.cursor })),
  }),
});

export default [getPrices, putPrices, getSubscription, putSubscription, listWebhookEvents];

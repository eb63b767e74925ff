// The gateway-webhook function, deployed with verify_jwt = false: the gateway
// signs its requests instead. It settles with the payment gateway: its webhooks
// (/api/v1/webhooks/gateway[/{company_id}] on the public host, and its own
// /functions/v1/gateway-webhook[/{company_id}]) and the reconciliation job
// (POST /functions/v1/gateway-webhook/reconcile, service role only).
import { createApp } from "../_shared/app.ts";
import { env } from "../_shared/env.ts";
import { mount } from "../_shared/route.ts";
import { requireServiceRole } from "../_shared/service-role.ts";
import { companyWebhook, platformWebhook } from "../_shared/webhook-contract.ts";
import { reconcile } from "./reconcile.ts";
import { receiveWebhook } from "./webhook.ts";

env(); // fail at start-up, naming the setting, rather than on the first event

const app = createApp();

mount(app, [
  { ...companyWebhook, handler: ({ params, req }) => receiveWebhook(req, params.company_id) },
  { ...platformWebhook, handler: ({ req }) => receiveWebhook(req) },
]);
app.post("/gateway-webhook/reconcile", requireServiceRole, async (c) => c.json(await reconcile()));
app.post("/gateway-webhook", (c) => receiveWebhook(c.req.raw));
app.post("/gateway-webhook/:company_id", (c) => receiveWebhook(c.req.raw, c.req.param("company_id")));

export default { fetch: app.fetch };

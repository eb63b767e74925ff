// Payment gateway webhooks (SPEC.md §4.3, §4.4, §6), deployed with
// verify_jwt = false: the gateway signs its requests instead. The public paths
// /api/v1/webhooks/gateway[/{company_id}] reach this function unchanged;
// through /functions/v1/gateway-webhook[/{company_id}] it sees its own name first.
import { createApp } from "../_shared/app.ts";
import { env } from "../_shared/env.ts";
import { mount } from "../_shared/route.ts";
import { receiveWebhook, webhookRoutes } from "../_shared/webhooks.ts";

env(); // fail at start-up, naming the setting, rather than on the first event

const app = createApp();

mount(app, webhookRoutes);
app.post("/gateway-webhook", (c) => receiveWebhook(c.req.raw));
app.post("/gateway-webhook/:company_id", (c) => receiveWebhook(c.req.raw, c.req.param("company_id")));

export default { fetch: app.fetch };

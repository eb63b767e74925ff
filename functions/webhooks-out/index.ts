// The webhooks-out function, deployed with verify_jwt = false: it checks the
// service role key itself, as the notifications function does. Woken by the
// database (supabase/schemas/18_integrations.sql: pg_net after events are
// queued, and pg_cron every minute while any send is due) at
// POST /functions/v1/webhooks-out/send, it signs and sends what is due
// (docs/integrations.md).
import { createApp } from "../_shared/app.ts";
import { env } from "../_shared/env.ts";
import { requireServiceRole } from "../_shared/service-role.ts";
import { sendDue } from "./send.ts";

env(); // fail at start-up, naming the setting, rather than on the first event

const app = createApp();

app.post("/webhooks-out/send", requireServiceRole, async (c) => c.json(await sendDue()));

export default { fetch: app.fetch };

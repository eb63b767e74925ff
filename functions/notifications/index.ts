// The notifications function, deployed with verify_jwt = false: it checks the
// service role key itself, as the reconciliation job's function does. Woken
// by the database (supabase/schemas/13_notifications.sql: pg_net after a
// message is queued, and pg_cron every minute while any is due) at
// POST /functions/v1/notifications/send, it sends what is due
// (docs/notifications.md).
import { createApp } from "../_shared/app.ts";
import { env } from "../_shared/env.ts";
import { requireServiceRole } from "../_shared/service-role.ts";
import { sendDue } from "./send.ts";

env(); // fail at start-up, naming the setting, rather than on the first message

const app = createApp();

app.post("/notifications/send", requireServiceRole, async (c) => c.json(await sendDue()));

export default { fetch: app.fetch };

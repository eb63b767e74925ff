// The dispatch function, deployed with verify_jwt = false: it checks the service role key itself, as the
// notifications function does. Woken by the database (supabase/schemas/14_dispatch.sql: pg_net after a
// delivery enters dispatch or its next round is queued, and pg_cron every 2 seconds while a round is due)
// at POST /functions/v1/dispatch/run, it runs the rounds that are due (docs/dispatch.md).
import { createApp } from "../_shared/app.ts";
import { env } from "../_shared/env.ts";
import { requireServiceRole } from "../_shared/service-role.ts";
import { dispatchDue } from "./run.ts";

env(); // fail at start-up, naming the setting, rather than on the first round

const app = createApp();

app.post("/dispatch/run", requireServiceRole, async (c) => c.json(await dispatchDue()));

export default { fetch: app.fetch };

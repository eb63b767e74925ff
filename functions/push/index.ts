// The push function, deployed with verify_jwt = false: it checks the service
// role key itself, as the webhooks-out function does. Woken by the database
// (supabase/schemas/19_push.sql: pg_net after messages are queued, and pg_cron
// every minute while any is due) at POST /functions/v1/push/send, it encrypts
// and sends the due Web Push messages (docs/push.md).
import { createApp } from "../_shared/app.ts";
import { timingSafeEqual } from "../_shared/crypto.ts";
import { env } from "../_shared/env.ts";
import { notAuthenticated } from "../_shared/errors.ts";
import { bearerToken } from "../_shared/jwt.ts";
import { sendDue } from "./send.ts";

env(); // fail at start-up, naming the setting, rather than on the first message

const app = createApp();

app.post("/push/send", async (c) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token || !timingSafeEqual(token, env().SUPABASE_SERVICE_ROLE_KEY)) {
    throw notAuthenticated("the service role key is required");
  }
  return c.json(await sendDue());
});

export default { fetch: app.fetch };

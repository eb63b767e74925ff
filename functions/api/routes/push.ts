// Web Push (docs/push.md): a driver's browsers register their push
// subscription here (PushSubscription.toJSON() as the browser gives it), and
// the web app reads the platform's VAPID public key to subscribe with. The
// endpoint is the driver's input that the push function will POST to: it is
// checked as a webhook URL is (a public https URL, or a host
// WEBHOOK_ALLOWED_HOSTS lists). The database keeps them under RLS and queues
// the pushes (supabase/schemas/19_push.sql); the push function sends them.
import { z } from "zod";
import { rpc } from "../../_shared/db.ts";
import { env } from "../../_shared/env.ts";
import { HttpError } from "../../_shared/errors.ts";
import { defineRoute } from "../../_shared/route.ts";
import { allowedHosts, checkWebhookUrl, WebhookUrlError } from "../../_shared/webhook-url.ts";
import { IdParams, Timestamp } from "../schemas.ts";

const PushSubscription = z.object({
  id: z.uuid(),
  endpoint: z.string().describe("The push service's URL for this browser"),
  user_agent: z.string().nullable(),
  created_at: Timestamp,
  last_sent_at: Timestamp.nullable().describe("When a push last reached the push service for it"),
}).meta({ id: "PushSubscription" });

const base64url = (bytes: number) =>
  z.string().regex(new RegExp(`^[A-Za-z0-9_-]{${Math.ceil((bytes * 4) / 3)}}={0,2}$`), `${bytes} bytes, base64url`);

export const pushKey = defineRoute({
  method: "get",
  path: "/api/v1/push/key",
  tag: "push",
  summary: "The platform's VAPID public key",
  description: "What a browser subscribes with: `pushManager.subscribe({userVisibleOnly: true, " +
    "applicationServerKey: public_key})`. 404 when the platform has no VAPID keys configured (no pushes are sent).",
  auth: "bearer",
  roles: "drivers",
  responses: {
    200: { description: "The key", schema: z.object({ public_key: z.string() }) },
    404: { description: "Web Push is not configured" },
  },
  async handler({ authorize }) {
    await authorize();
    const key = env().VAPID_PUBLIC_KEY;
    if (!key) throw new HttpError(404, "Web Push is not configured on this platform");
    return { body: { public_key: key } };
  },
});

export const registerPushSubscription = defineRoute({
  method: "post",
  path: "/api/v1/push-subscriptions",
  tag: "push",
  summary: "Register this browser for Web Push",
  description: "The body is `PushSubscription.toJSON()`. A new offer (`delivery_offered`) and a route published " +
    "for the driver (`route_published`) are then pushed to it, encrypted for its keys (RFC 8291). The same " +
    "endpoint registered again (new keys, or another driver signed in on the same browser) replaces the earlier " +
    "registration. A driver keeps at most 10 (the oldest go). A subscription the push service says is gone " +
    "(404/410) is removed.",
  auth: "bearer",
  roles: "drivers",
  body: z.object({
    endpoint: z.string().max(2000),
    expirationTime: z.number().nullish(),
    keys: z.object({ p256dh: base64url(65), auth: base64url(16) }),
  }),
  responses: {
    201: { description: "Registered", schema: PushSubscription },
    400: { description: "Not a subscription, or an endpoint pushes may not go to" },
  },
  async handler({ body, asCaller, req, authorize }) {
    await authorize(); // a manager is refused (403) before the endpoint is looked up
    try {
      await checkWebhookUrl(body.endpoint, allowedHosts(env().WEBHOOK_ALLOWED_HOSTS));
    } catch (error) {
      if (!(error instanceof WebhookUrlError)) throw error;
      throw new HttpError(400, [{
        type: "value_error",
        loc: ["body", "endpoint"],
        msg: error.message.replace(/^url/, "endpoint"),
        input: body.endpoint,
      }]);
    }
    return {
      status: 201,
      body: await asCaller((tx) =>
        rpc(tx, "register_push_subscription", {
          endpoint: body.endpoint,
          p256dh: body.keys.p256dh,
          auth: body.keys.auth,
          user_agent: req.headers.get("user-agent")?.slice(0, 300),
        })
      ),
    };
  },
});

export const listPushSubscriptions = defineRoute({
  method: "get",
  path: "/api/v1/push-subscriptions",
  tag: "push",
  summary: "The driver's push subscriptions",
  auth: "bearer",
  roles: "drivers",
  responses: {
    200: { description: "Newest first", schema: z.object({ items: z.array(PushSubscription) }) },
  },
  handler: async ({ asCaller }) => ({ body: await asCaller((tx) => rpc(tx, "list_push_subscriptions", {})) }),
});

export const deletePushSubscription = defineRoute({
  method: "delete",
  path: "/api/v1/push-subscriptions/{id}",
  tag: "push",
  summary: "Stop pushes to one of the driver's browsers",
  auth: "bearer",
  roles: "drivers",
  params: IdParams,
  responses: {
    204: { description: "Removed" },
    404: { description: "The driver has no subscription with this id" },
  },
  async handler({ params, asCaller }) {
    await asCaller((tx) => rpc(tx, "delete_push_subscription", { subscription_id: params.id }));
    return new Response(null, { status: 204 });
  },
});

export default [pushKey, registerPushSubscription, listPushSubscriptions, deletePushSubscription];

// The recipient's tracking link (docs/contract.md, Tracking): a public lookup by
// the delivery's tracking token, rate-limited per client address in Postgres.
import { clientAddress } from "../../_shared/client-address.ts";
import { z } from "zod";
import { asService, rpc } from "../../_shared/db.ts";
import { ErrorBody, HttpError } from "../../_shared/errors.ts";
import { defineRoute, rateLimited } from "../../_shared/route.ts";
import { DeliveryStatus } from "./deliveries.ts";
import { signedProofUrl } from "../proof-images.ts";
import { Timestamp } from "../schemas.ts";

/** How long the proof photo's signed URL lets its holder read the photo: a page's visit, not a link to keep. */
export const PROOF_URL_SECONDS = 300;

export const Tracking = z.object({
  status: DeliveryStatus,
  driver: z.object({
    first_name: z.string(),
    vehicle: z.object({
      type: z.enum(["bike", "moto", "car", "van"]),
      plate: z.string().nullable(),
    }).describe("The vehicle to look out for at the door."),
  }).nullable().describe("Once a driver has the delivery."),
  destination: z.object({ lat: z.number(), lng: z.number() }).describe("The drop-off, for the page's pin."),
  position: z.object({
    lat: z.number(),
    lng: z.number(),
    heading: z.number().nullable(),
    updated_at: Timestamp,
  }).nullable().describe(
    "The driver's last position, only while the delivery is in progress and only one sent since the pick-up.",
  ),
  eta_at: Timestamp.nullable().describe(
    "Expected arrival, while in progress, once the routing service has measured it; while the delivery is in a " +
      "published or in-progress route, its drop-off's arrival as the route times it.",
  ),
  stops_before: z.number().int().nullable().describe(
    "While the delivery is in a published or in-progress route: how many drop-offs still pending come before this " +
      "one; null otherwise.",
  ),
  remaining_m: z.number().int().nullable().describe("Metres by road still to go, while in progress."),
  eta_refreshed_at: Timestamp.nullable().describe("When the ETA was last measured."),
  created_at: Timestamp,
  accepted_at: Timestamp.nullable(),
  started_at: Timestamp.nullable(),
  completed_at: Timestamp.nullable(),
  cancelled_at: Timestamp.nullable(),
  handover_code: z.string().nullable().describe(
    "The 4 digits the recipient gives the driver at the door, when the company requires a handover code, until the " +
      "delivery is delivered; null otherwise. Never shown to the driver.",
  ),
  proof_photo_url: z.string().nullable().describe(
    "Once the delivery is completed with a proof photo: a signed URL of the photo, readable without credentials " +
      `for ${PROOF_URL_SECONDS} s (\`proof_photo_expires_at\`), made for this answer only (never broadcast); null ` +
      "otherwise, or when Storage cannot sign it now. Ask again for a new one.",
  ),
  proof_photo_expires_at: Timestamp.nullable().describe("When `proof_photo_url` stops answering."),
  realtime_topic: z.string().describe(
    "The private Realtime topic of this link, `track:{hex SHA-256 of the token}` (in this answer only, not in the " +
      "`tracking_updated` broadcasts).",
  ),
}).meta({ id: "Tracking" });

/** `track:` and the hex SHA-256 of the token: the topic the database broadcasts on and lets a token holder join. */
export async function trackingTopic(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return `track:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const NOT_FOUND = "tracking link not found";

export const trackDelivery = defineRoute({
  method: "get",
  path: "/api/v1/track/{token}",
  tag: "tracking",
  summary: "A delivery as its recipient sees it",
  description: "Public: the tracking token is the credential (every delivery has one, shown to its company's " +
    "managers as `tracking_token` and `tracking_url`). Answers only the status, the driver's first name and vehicle, " +
    "the drop-off's position, the driver's last position while the delivery is in progress, the ETA and remaining " +
    "distance while in progress, the drop-offs before this one in the driver's route, the handover code where the " +
    "company requires one, the timeline, and once delivered a short-lived signed URL of the proof photo. " +
    "A wrong token is 404, after the same single lookup (of the token's SHA-256) as a right one. " +
    "At most 60 lookups a minute per client address (the last hop of X-Forwarded-For, which the platform's proxy " +
    "appends; the hops a client writes before it count for nothing), enforced in the database; past that, 429 " +
    "with `Retry-After`. " +
    "Live updates: join the private Realtime channel `track:{hex SHA-256 of the token}` with the anon key; it can be " +
    "joined while a driver has the delivery (accepted or in progress) and carries `driver_location` " +
    "(`{lat, lng, heading, updated_at}` and the message's `id`, only while in progress) and `tracking_updated` " +
    "(this object, on every " +
    "status change and ETA refresh). The ETA is refreshed from the routing service as the driver moves: at most " +
    "once per 30 s per delivery, and only after the driver moved more than 100 m; when the routing service fails, " +
    "the last ETA stays.",
  auth: "none",
  params: z.object({ token: z.string().min(1).max(200) }),
  responses: {
    200: { description: "The delivery's tracking view", schema: Tracking },
    404: { description: "No delivery has this token", schema: ErrorBody },
    429: rateLimited("Too many lookups from this client in the last minute", 60),
  },
  async handler({ params, req }) {
    // Before the lookup, so that a miss does this work too.
    const topic = await trackingTopic(params.token);
    // Past the limit the function raises PT429 with the wait, which errors.ts answers as 429 with Retry-After.
    // Without an address from the platform, each link is counted on its own rather than every caller as one.
    const view = await asService((tx) =>
      rpc(tx, "track_delivery", { token: params.token, client: clientAddress(req) ?? topic })
    );
    const headers = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" };
    if (view === null) throw new HttpError(404, NOT_FOUND, headers);
    const { proof_photo_path: photo, ...rest } = view as Record<string, unknown>;
    const signed = typeof photo === "string" ? await signedProofUrl(photo, PROOF_URL_SECONDS) : null;
    const proof = { proof_photo_url: signed?.url ?? null, proof_photo_expires_at: signed?.expires_at ?? null };
    return { body: { ...rest, ...proof, realtime_topic: topic }, headers };
  },
});

export default [trackDelivery];

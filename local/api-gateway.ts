// The API gateway in front of Auth and PostgREST (Kong in `supabase start`,
// Supabase's gateway on a hosted project): a request must carry the project's
// anon or service_role key in the `apikey` header (or query parameter), else
// the gateway answers 401 before the service sees it. One check for both
// stand-ins, comparing in constant time (common/crypto.ts); Realtime
// checks its key with isApiKey, answering in its own words.
import { timingSafeEqual } from "../common/crypto.ts";

/** The gateway's 401 for a missing or wrong key, in its body. */
export function gatewayError(kind: "missing_api_key" | "invalid_api_key"): Response {
  const body = kind === "missing_api_key"
    ? { message: "No API key found in request", hint: "No `apikey` request header or url param was found." }
    : { message: "Invalid API key", hint: "Double check your Supabase `anon` or `service_role` API key." };
  return Response.json(body, { status: 401 });
}

/** The gateway's refusal of `req`, or null when it carries one of `apiKeys`. */
export function checkApiKey(req: Request, apiKeys: string[]): Response | null {
  const presented = req.headers.get("apikey") ?? new URL(req.url).searchParams.get("apikey");
  if (!presented) return gatewayError("missing_api_key");
  return isApiKey(presented, apiKeys) ? null : gatewayError("invalid_api_key");
}

/** Whether `presented` is one of `apiKeys`: each compared in constant time, all of them, so the time says not which. */
export function isApiKey(presented: string, apiKeys: string[]): boolean {
  return apiKeys.map((key) => timingSafeEqual(presented, key)).includes(true);
}

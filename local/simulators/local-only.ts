// The local-only endpoints (the simulators at /_sim and the mailbox at /_mail)
// answer the machine's own programs and the stack's own pages, never another
// web page open in the developer's browser: such a page could otherwise post
// gateway events (a "simple" cross-origin POST needs no preflight), or, by
// pointing a name of its own at 127.0.0.1 (DNS rebinding), read the mailbox's
// codes. So a request must name a loopback host, a browser's request must
// come from that same origin, and a body must be JSON, which no page of
// another origin can send without a CORS preflight these endpoints never
// grant. Programs (the functions, the tests, curl) send no Origin and pass; the
// web app's simulators page, served by the stack (or by Vite's proxy, which
// keeps the page's host), passes as same-origin.
import type { Context, Next } from "hono";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|[^.]+\.localhost|::1)$/i;

const refuse = (c: Context, status: 403 | 415, detail: string) => c.json({ detail }, status);

export async function localOnly(c: Context, next: Next): Promise<Response | void> {
  const host = c.req.header("host") ?? "";
  const hostname = host.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  if (!LOOPBACK.test(hostname)) {
    return refuse(c, 403, "The local stack's simulators and mailbox answer only on a loopback address");
  }
  const origin = c.req.header("origin");
  if (origin !== undefined) {
    let sameOrigin = false;
    try {
      sameOrigin = new URL(origin).host === host;
    } catch { /* "null" or malformed: not the stack's own page */ }
    if (!sameOrigin) {
      return refuse(c, 403, "The local stack's simulators and mailbox refuse requests from other origins");
    }
  }
  // A Web Push message (the push service simulator) is an encrypted body: `Content-Encoding: aes128gcm` is no header a
  // page of another origin may send without the preflight these endpoints never grant, so it passes as JSON does.
  const pushed = (c.req.header("content-encoding") ?? "").toLowerCase() === "aes128gcm";
  if (c.req.raw.body !== null && !pushed && !/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    return refuse(c, 415, "The local stack's simulators take JSON bodies only (content-type: application/json)");
  }
  await next();
}

// Who a request comes from when it carries no token: its client address as the platform saw it.

/**
 * The caller's address as the platform saw it: the last hop of X-Forwarded-For, the one the platform's proxy
 * appends (Supabase's, or the local stack's, local/server.ts). Any hop before it is what the client wrote, which
 * rotating would escape a limit and someone else's address would lock them out. Null without one.
 */
export function clientAddress(req: Request): string | null {
  const hops = (req.headers.get("x-forwarded-for") ?? "").split(",").map((hop) => hop.trim()).filter(Boolean);
  return hops.at(-1) ?? null;
}

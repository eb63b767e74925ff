// Checking a channel's access token the way Realtime's confirm_token/1 does,
// and the exact texts Realtime answers for each kind of bad token: one for a
// refused join (phx_reply reason) and one for a channel it shuts down later
// (the `system` message after an access_token refresh or at expiry).
import { decodeJwt } from "jose";
import type { Claims } from "../../common/jwt.ts";

export type ChannelClaims = Claims & { role: string; exp: number };

export type TokenProblem =
  | { kind: "malformed" }
  | { kind: "expired"; secondsAgo: number }
  | { kind: "missing_claims" }
  | { kind: "signature" }
  | { kind: "signer" };

export type TokenCheck = { ok: true; claims: ChannelClaims } | { ok: false; problem: TokenProblem };

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Verifies the token; Realtime also insists on `role` and `exp`, which drive RLS and the expiry timer. */
export async function confirmToken(verify: (token: string) => Promise<Claims>, token: string): Promise<TokenCheck> {
  let unverified: Claims;
  try {
    unverified = decodeJwt(token);
  } catch {
    return { ok: false, problem: { kind: "malformed" } };
  }
  let claims: Claims;
  try {
    claims = await verify(token);
  } catch (error) {
    return { ok: false, problem: classify(error, unverified) };
  }
  if (typeof claims.role !== "string" || typeof claims.exp !== "number") {
    return { ok: false, problem: { kind: "missing_claims" } };
  }
  return { ok: true, claims: claims as ChannelClaims };
}

/**
 * The verifier (common/jwt.ts) checks the signature before the
 * claims, so "expired" only ever describes a genuine token, as with Realtime.
 */
function classify(error: unknown, unverified: Claims): TokenProblem {
  const message = error instanceof Error ? error.message : "";
  if (/expired/.test(message)) return { kind: "expired", secondsAgo: nowSeconds() - (unverified.exp ?? nowSeconds()) };
  if (/signing method/.test(message)) return { kind: "signer" };
  if (/malformed/.test(message)) return { kind: "malformed" };
  return { kind: "signature" };
}

/** The `reason` of a refused phx_join (RealtimeChannel.join/3). */
export function joinRefusal(problem: TokenProblem): string {
  switch (problem.kind) {
    case "malformed":
      return "MalformedJWT: The token provided is not a valid JWT";
    case "expired":
      return `InvalidJWTToken: Token has expired ${problem.secondsAgo} seconds ago`;
    case "missing_claims":
      return "InvalidJWTToken: Fields `role` and `exp` are required in JWT";
    case "signature":
      return "JwtSignatureError: Failed to validate JWT signature";
    case "signer":
      return "JwtSignerError: Failed to generate JWT signer, check your JWT secret or JWKS configuration";
  }
}

/**
 * The `message` of the system push that closes a joined channel. Realtime
 * formats the errors without a text of their own with Elixir's inspect/1,
 * hence the atoms.
 */
export function shutdownMessage(problem: TokenProblem): string {
  switch (problem.kind) {
    case "malformed":
      return "The token provided is not a valid JWT";
    case "expired":
      return `Token has expired ${problem.secondsAgo} seconds ago`;
    case "missing_claims":
      return "Fields `role` and `exp` are required in JWT";
    case "signature":
      return ":signature_error";
    case "signer":
      return ":error_generating_signer";
  }
}

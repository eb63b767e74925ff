// Requests that are safe to retry (docs/contract.md, Idempotency-Key), with
// Stripe's rules: the first request with a key, per caller (a public
// operation's: per client address, anonymousScope), runs and its answer
// (status and body) is kept at least 24 h; the same key with the same request
// answers that answer again with `Idempotent-Replayed: true` and does nothing
// else; with another request (method, path or body) it is 422; while the first
// is still running, 409. What is kept is any answer the operation gave, except
// a 429 or a 5xx of a request that changed no data, which may simply be tried
// again (its key is released). A request cut off before its answer was stored
// (its function or the database gone) is run again by a retry only when none of
// its transactions wrote anything; otherwise the retry is told, 422, and
// nothing runs twice. The keys live in Postgres
// (supabase/schemas/15_idempotency.sql), so every edge instance sees them.
import { createHmac } from "node:crypto";
import { asServiceAtOnce } from "./db.ts";
import { env } from "./env.ts";
import { HttpError } from "./errors.ts";
import { REQUEST_BUDGET_MS, underIdempotencyKey } from "./request-scope.ts";
import { inlined } from "./sql-text.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY = /^[\x20-\x7e]{1,255}$/;

/** How long a claimed key counts as running: the request's budget, and time for its answer to be stored. */
const LEASE_MS = REQUEST_BUDGET_MS + 5_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key a request carries, or undefined without the header; 400 when it is not 1..255 printable ASCII. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return undefined;
  if (!KEY.test(key)) {
    throw new HttpError(400, [{
      type: "value_error",
      loc: ["header", IDEMPOTENCY_HEADER],
      msg: "must be 1 to 255 printable ASCII characters",
      input: key.length > 255 ? `${key.slice(0, 255)}...` : key,
    }]);
  }
  return key;
}

/**
 * What identifies the request behind a key: a keyed hash (HMAC-SHA256 under a key derived from
 * SECRETS_ENCRYPTION_KEY) of its method, path and body bytes, so a body (a password, say) is never stored.
 */
export function fingerprint(method: string, path: string, body: Uint8Array): string {
  return createHmac("sha256", `idempotency:${env().SECRETS_ENCRYPTION_KEY}`)
    .update(`${method.toUpperCase()} ${path}\n`)
    .update(body)
    .digest("hex");
}

/**
 * The key space of a caller without a token (a registration): one per client address as the platform saw it, so
 * that one client's key neither replays its answer to another nor tells another that it was used. A uuid derived
 * from the address by a keyed hash (the address is never stored), from a space no user's id comes from. Without an
 * address there is no one to scope keys to: 400.
 */
export function anonymousScope(client: string | null): string {
  if (!client) {
    throw new HttpError(400, [{
      type: "value_error",
      loc: ["header", IDEMPOTENCY_HEADER],
      msg: "cannot be used without a caller: sign in, or send the request without it",
      input: null,
    }]);
  }
  const hex = createHmac("sha256", `idempotency-client:${env().SECRETS_ENCRYPTION_KEY}`).update(client).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface KeyedRequest {
  /** The caller (the token's subject), or null for a public operation. */
  caller: string | null;
  /** Where a public operation comes from (clientAddress): its keys are that address's own. */
  client: string | null;
  key: string;
  method: string;
  /** The path as the caller sent it, without a trailing slash. */
  path: string;
  body: Uint8Array;
}

interface Claimed {
  outcome: "started" | "replay" | "mismatch" | "running" | "interrupted";
  id: string;
  status: number | null;
  body: string | null;
}

function replayed(status: number, body: string | null): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "application/json", [REPLAYED_HEADER]: "true" },
  });
}

/**
 * Runs `operation` once per caller and key (see above): its answer, or the stored answer of the first request
 * with this key. `operation` runs with the key in scope, so every transaction of it notes whether it wrote.
 */
export async function once(request: KeyedRequest, operation: () => Promise<Response>): Promise<Response> {
  const caller = request.caller !== null && UUID.test(request.caller) ? request.caller : anonymousScope(request.client);
  const [[claimed]] = await asServiceAtOnce([inlined([
    "select outcome, id, status, body from private.begin_idempotent_request($1, $2, $3, $4)",
    [caller, request.key, fingerprint(request.method, request.path, request.body), LEASE_MS],
  ])]) as unknown as Claimed[][];
  switch (claimed.outcome) {
    case "replay":
      return replayed(claimed.status!, claimed.body);
    case "mismatch":
      throw new HttpError(
        422,
        `This ${IDEMPOTENCY_HEADER} was used with another request (method, path or body); use a new key for a new request`,
      );
    case "running":
      throw new HttpError(
        409,
        `A request with this ${IDEMPOTENCY_HEADER} is still running; retry once it has answered`,
      );
    case "interrupted":
      throw new HttpError(
        422,
        `The first request with this ${IDEMPOTENCY_HEADER} was cut off after it changed data, before its answer ` +
          "was stored: it is not run again. Read the resource to see what it did (e.g. GET /api/v1/withdrawals), " +
          "and send any new request with a new key",
      );
  }
  const answer = await underIdempotencyKey(claimed.id, operation);
  try {
    await asServiceAtOnce([inlined([
      "select private.finish_idempotent_request($1, $2, $3)",
      [claimed.id, answer.status, await answer.clone().text()],
    ])]);
  } catch (error) {
    // The answer still goes out; the key stays running until its lease ends (then: interrupted, or run again).
    console.error(JSON.stringify({
      event: "idempotent_answer_not_stored",
      request_id: claimed.id,
      status: answer.status,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }));
  }
  return answer;
}

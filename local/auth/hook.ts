// The custom access token hook, called as GoTrue calls a `pg-functions://`
// hook: `select schema.name(event)` inside the token's transaction, with a
// 2 s statement timeout, and its output checked before it is signed.
import type postgres from "postgres";
import { jsonb } from "./db.ts";
import { AuthError, errors } from "./errors.ts";
import { log } from "./log.ts";

type Json = Record<string, unknown>;

interface AccessTokenHookEvent {
  user_id: string;
  claims: Json;
  authentication_method: string;
}

/** Runs the hook and answers the claims it returned, or throws the AuthError GoTrue would answer. */
export async function runAccessTokenHook(
  tx: postgres.TransactionSql,
  hook: { schema: string; name: string },
  event: AccessTokenHookEvent,
): Promise<Json> {
  const uri = `pg-functions://postgres/${hook.schema}/${hook.name}`;
  const input = {
    metadata: { uuid: crypto.randomUUID(), time: new Date().toISOString(), name: "customize-access-token" },
    ...event,
  };
  let output: unknown;
  try {
    await tx`set local statement_timeout = '2s'`;
    [{ output }] = await tx`select ${tx(hook.schema)}.${tx(hook.name)}(${jsonb(tx, input)}) as output`;
    await tx`set local statement_timeout to default`;
  } catch (error) {
    log("hook_failed", { hook: uri, user_id: event.user_id, error: (error as Error).message });
    throw errors.hook(500, `Error running hook URI: ${uri}`);
  }
  const claims = claimsFromOutput(output);
  if (claims instanceof AuthError) {
    log("hook_rejected", { hook: uri, user_id: event.user_id, error: claims.message });
    throw claims;
  }
  return claims;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The claims the hook returned, or the error GoTrue answers for its output. */
function claimsFromOutput(output: unknown): Json | AuthError {
  // A hook reports failure as {"error": {"http_code": 4xx/5xx, "message": "..."}}.
  if (isObject(output) && isObject(output.error) && typeof output.error.message === "string" && output.error.message) {
    const status = typeof output.error.http_code === "number" && output.error.http_code ? output.error.http_code : 500;
    return errors.hook(status, output.error.message);
  }
  if (!isObject(output) || !("claims" in output)) return errors.hook(500, "output claims field is missing");
  if (!isObject(output.claims)) return errors.hook(500, "Error unmarshaling JSON output.");
  const problems = claimProblems(output.claims);
  if (problems.length) {
    return errors.hook(
      500,
      `output claims do not conform to the expected schema: \n${problems.map((p) => `- ${p}\n`).join("")}`,
    );
  }
  return output.claims;
}

/** GoTrue's MinimumViableTokenSchema: the required claims and the JSON type of each known claim. */
const REQUIRED_CLAIMS = ["aud", "exp", "iat", "sub", "email", "phone", "role", "aal", "session_id", "is_anonymous"];
const CLAIM_TYPES: Record<string, string[]> = {
  aud: ["string", "array"],
  exp: ["integer"],
  jti: ["string"],
  iat: ["integer"],
  iss: ["string"],
  nbf: ["integer"],
  sub: ["string"],
  email: ["string"],
  phone: ["string"],
  app_metadata: ["object"],
  user_metadata: ["object"],
  role: ["string"],
  aal: ["string"],
  amr: ["array"],
  session_id: ["string"],
  client_id: ["string"],
};

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** The schema violations, worded like gojsonschema's. */
function claimProblems(claims: Json): string[] {
  const problems = REQUIRED_CLAIMS.filter((name) => !(name in claims)).map((name) => `(root): ${name} is required`);
  for (const [name, types] of Object.entries(CLAIM_TYPES)) {
    if (!(name in claims)) continue;
    const given = jsonType(claims[name]);
    if (!types.includes(given)) problems.push(`${name}: Invalid type. Expected: ${types.join("/")}, given: ${given}`);
  }
  if (Array.isArray(claims.amr)) {
    claims.amr.forEach((entry, i) => {
      if (!["string", "object"].includes(jsonType(entry))) {
        problems.push(`amr.${i}: Must validate at least one schema (anyOf)`);
      }
    });
  }
  return problems;
}

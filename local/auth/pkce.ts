// PKCE (GoTrue's pkce.go, models/flow_state.go, the pkce grant in token.go):
// a flow that starts with a code challenge stores it in auth.flow_state and
// marks the mailed token `pkce_`; following the link then redirects to the app
// with `?code=<auth code>`, which the app exchanges, with the code verifier it
// kept, at POST /token?grant_type=pkce for a session.
import { createHash } from "node:crypto";
import { timingSafeEqual } from "../../common/crypto.ts";
import type postgres from "postgres";
import { z } from "zod";
import type { RequestContext } from "./context.ts";
import { authTransaction } from "./db.ts";
import { errors } from "./errors.ts";
import { issueSession, sessionResponse } from "./grants.ts";
import { log } from "./log.ts";
import { readJson } from "./request.ts";
import type { AuthenticationMethod } from "./tokens.ts";
import { findUserById } from "./users.ts";

/** GoTrue's default flow state lifetime (GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION). */
const FLOW_STATE_EXPIRY_MS = 300_000;

export interface CodeChallenge {
  challenge: string;
  /** "s256" or "plain". */
  method: string;
}

/** GoTrue's validatePKCEParams: both or neither, 43..128 characters of the URL-safe alphabet. */
export function codeChallengeOf(params: {
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}): CodeChallenge | null {
  const challenge = params.code_challenge ?? "";
  const method = params.code_challenge_method ?? "";
  if ((challenge === "") !== (method === "")) throw errors.pkceParams();
  if (challenge === "") return null;
  if (challenge.length < 43 || challenge.length > 128) throw errors.codeChallengeLength();
  if (!/^[a-zA-Z._~0-9-]+$/.test(challenge)) throw errors.codeChallengeCharacters();
  const normalized = method.toLowerCase();
  if (normalized !== "s256" && normalized !== "plain") throw errors.codeChallengeMethod(method);
  return { challenge, method: normalized };
}

/** Stores a flow state for the user (GoTrue's generateFlowState), with a fresh auth code. */
export async function startFlow(
  tx: postgres.TransactionSql,
  userId: string,
  challenge: CodeChallenge,
  method: AuthenticationMethod,
): Promise<void> {
  await tx`
    insert into auth.flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type,
                                 created_at, updated_at, authentication_method)
    values (${crypto.randomUUID()}, ${userId}, ${crypto.randomUUID()}, ${challenge.method}, ${challenge.challenge},
            ${method}, now(), now(), ${method})`;
}

/** GoTrue's issueAuthCode: the auth code of the user's newest flow state for `method`, marked as handed out. */
export async function issueAuthCode(
  tx: postgres.TransactionSql,
  userId: string,
  method: AuthenticationMethod,
): Promise<string> {
  const [flow] = await tx<{ id: string; auth_code: string | null }[]>`
    select id, auth_code from auth.flow_state
    where user_id = ${userId} and authentication_method = ${method}
    order by created_at desc, id desc limit 1`;
  if (!flow?.auth_code) throw errors.noFlowStateForUser();
  await tx`update auth.flow_state set auth_code_issued_at = now(), updated_at = now() where id = ${flow.id}`;
  return flow.auth_code;
}

const PkceGrantBody = z.looseObject({ auth_code: z.string().nullish(), code_verifier: z.string().nullish() });

function verifierMatches(flow: { code_challenge: string; code_challenge_method: string }, verifier: string): boolean {
  const expected = flow.code_challenge_method === "s256"
    ? createHash("sha256").update(verifier).digest("base64url")
    : verifier;
  return timingSafeEqual(flow.code_challenge, expected);
}

interface FlowRow {
  id: string;
  user_id: string | null;
  code_challenge: string;
  code_challenge_method: string;
  authentication_method: AuthenticationMethod;
  created_at: Date;
  auth_code_issued_at: Date | null;
}

/** POST /token?grant_type=pkce: the auth code and its verifier for a session; the flow state is used up. */
export async function exchangeCodeForSession({ req, options }: RequestContext): Promise<Response> {
  const body = await readJson(req, PkceGrantBody);
  if (!body.auth_code || !body.code_verifier) throw errors.pkceGrantParams();
  const { authCode, verifier } = { authCode: body.auth_code, verifier: body.code_verifier };
  const issued = await authTransaction(options.sql, async (tx) => {
    const [flow] = await tx<FlowRow[]>`select * from auth.flow_state where auth_code = ${authCode} for update`;
    if (!flow?.user_id) throw errors.flowStateNotFound();
    // A magic link's flow counts from when its code was handed out, any other from its start (FlowState.IsExpired).
    const from = flow.auth_code_issued_at && flow.authentication_method === "magiclink"
      ? flow.auth_code_issued_at
      : flow.created_at;
    if (Date.now() > from.getTime() + FLOW_STATE_EXPIRY_MS) throw errors.flowStateExpired();
    if (!(await findUserById(tx, flow.user_id))) throw errors.flowStateNotFound();
    if (!verifierMatches(flow, verifier)) throw errors.badCodeVerifier();
    const session = await issueSession(tx, options, req, flow.user_id, flow.authentication_method);
    await tx`delete from auth.flow_state where id = ${flow.id}`;
    return session;
  });
  log("sign_in", { grant: "pkce", result: "ok", user_id: issued.user.id, session_id: issued.sessionId });
  return sessionResponse(issued.accessToken, issued.refreshToken, issued.user);
}

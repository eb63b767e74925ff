// What every handler of the local identity provider gets.
import type postgres from "postgres";
import type { LocalKeys } from "../keys.ts";
import type { LimitedGroup, Limiters } from "./limits.ts";
import type { Mailbox } from "./mailbox.ts";
import type { AuthProject } from "./project.ts";
import type { TokenVerifier } from "./tokens.ts";

export interface AuthOptions {
  /** A pool connected as the `postgres` superuser; writes run as `supabase_auth_admin`, as GoTrue's do. */
  sql: postgres.Sql;
  keys: LocalKeys;
  /** The `iss` claim, e.g. "http://127.0.0.1:54321/auth/v1". */
  issuer: string;
  /** Access token lifetime in seconds. */
  jwtExpiry: number;
  /** Revoke the whole session when a refresh token is reused after the reuse interval. */
  refreshTokenRotation: boolean;
  /** Seconds during which a rotated refresh token may still be exchanged. */
  refreshTokenReuseInterval: number;
  /** The custom access token hook, a SQL function `schema.name(event jsonb) returns jsonb`. */
  hook: { schema: string; name: string } | null;
  /** The stack's mailbox, which its SMTP listener delivers to as well; a new one when not given. */
  mailbox?: Mailbox;
  /** supabase/config.toml's sign-up, e-mail and rate-limit settings (local/auth/project.ts). */
  project: AuthProject;
}

export interface RequestContext {
  req: Request;
  url: URL;
  /** The path parameters the route captured, by name. */
  params: Record<string, string>;
  options: AuthOptions;
  verifyToken: TokenVerifier;
  /** supabase/config.toml's sign-up and e-mail settings. */
  project: AuthProject;
  /** Where e-mail goes locally (Mailpit's API at /_mail). */
  mailbox: Mailbox;
  limiters: Limiters;
  /** Takes one request of `group` from this client; throws GoTrue's 429 when over the limit. */
  limit(group: LimitedGroup): void;
}

export type Handler = (ctx: RequestContext) => Promise<Response>;

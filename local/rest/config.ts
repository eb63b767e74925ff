// The local PostgREST's configuration, read as PostgREST reads it
// (src/PostgREST/Config.hs, Config/Database.hs): first what `supabase start`
// passes it (supabase/config.toml's [api]: schemas, extra_search_path,
// max_rows; the anon role), then the in-database settings, which win:
// `alter role authenticator set pgrst.db_schemas = '...'` and the other
// `pgrst.*` names below, read again on `NOTIFY pgrst, 'reload config'`.
// Settings PostgREST has and the stand-in does not act on are listed in
// IGNORED: accepted, logged once, without effect.
import type postgres from "postgres";
import { parse as parseToml } from "smol-toml";

export type TxEnd = "commit" | "commit-allow-override" | "rollback" | "rollback-allow-override";
export type OpenApiMode = "follow-privileges" | "ignore-privileges" | "disabled";

export interface RestConfig {
  /** Exposed schemas; the first is the default (db-schemas). */
  schemas: string[];
  /** Schemas appended to each request's search_path (db-extra-search-path). */
  extraSearchPath: string[];
  /** Upper bound of rows a read returns (db-max-rows); null: none. */
  maxRows: number | null;
  /** The role of requests without a token role (db-anon-role). */
  anonRole: string;
  /** How a request's transaction ends, and whether `Prefer: tx=` may change it (db-tx-end). */
  txEnd: TxEnd;
  /** A function called at the start of each request's transaction (db-pre-request). */
  preRequest: string | null;
  openApiMode: OpenApiMode;
  /** Whether `select` may use avg(), count(), max(), min() and sum() (db-aggregates-enabled); off unless set. */
  aggregatesEnabled: boolean;
  /** Whether `Accept: application/vnd.pgrst.plan` answers the EXPLAIN of the request (db-plan-enabled); off unless set. */
  planEnabled: boolean;
}

/** The in-database settings PostgREST reads (Config/Database.hs, dbSettingsNames), without the `pgrst.` prefix. */
const KNOWN = [
  "db_aggregates_enabled",
  "db_anon_role",
  "db_pre_config",
  "db_extra_search_path",
  "db_max_rows",
  "db_plan_enabled",
  "db_pre_request",
  "db_prepared_statements",
  "db_root_spec",
  "db_schemas",
  "db_tx_end",
  "db_hoisted_tx_settings",
  "jwt_aud",
  "jwt_role_claim_key",
  "jwt_secret",
  "jwt_secret_is_base64",
  "jwt_cache_max_lifetime",
  "openapi_mode",
  "openapi_security_active",
  "openapi_server_proxy_uri",
  "server_cors_allowed_origins",
  "server_trace_header",
  "server_timing_enabled",
];

/**
 * Known settings the stand-in does not act on. The JWT ones are Supabase's to
 * manage (the project's keys sign and verify every token).
 */
const IGNORED = new Set(KNOWN.filter((name) =>
  ![
    "db_anon_role",
    "db_extra_search_path",
    "db_max_rows",
    "db_pre_request",
    "db_schemas",
    "db_tx_end",
    "openapi_mode",
    "db_prepared_statements",
    "db_aggregates_enabled",
    "db_plan_enabled",
  ].includes(name)
));

/** What `supabase start` passes PostgREST: supabase/config.toml's [api], anon as the anon role. */
export async function readFileConfig(url: URL): Promise<RestConfig> {
  // deno-lint-ignore no-explicit-any
  const api = (parseToml(await Deno.readTextFile(url)) as any).api ?? {};
  return {
    schemas: Array.isArray(api.schemas) && api.schemas.length ? api.schemas : ["public"],
    extraSearchPath: Array.isArray(api.extra_search_path) ? api.extra_search_path : ["public", "extensions"],
    maxRows: typeof api.max_rows === "number" && api.max_rows > 0 ? api.max_rows : null,
    anonRole: "anon",
    txEnd: "commit",
    preRequest: null,
    openApiMode: "follow-privileges",
    // PostgREST's defaults, which Supabase keeps: a project enables them with `alter role authenticator set ...`.
    aggregatesEnabled: false,
    planEnabled: false,
  };
}

/**
 * A boolean setting as PostgREST coerces one (Config.hs, coerceBool): its letters read as true or false in any
 * case, else a whole number (true when positive); anything else leaves the default (false).
 */
function bool(value: string): boolean {
  const letters = value.replace(/[^\p{L}]/gu, "").toLowerCase();
  if (letters === "true" || letters === "false") return letters === "true";
  return /^[+-]?\d+$/.test(value.trim()) && Number(value) > 0;
}

/** A comma-separated list, as PostgREST splits db-schemas and db-extra-search-path. */
const list = (value: string) => value.split(",").map((s) => s.trim()).filter(Boolean);

/**
 * The in-database settings of the role the pool logs in as (authenticator),
 * database-specific ones first, as PostgREST's queryDbSettings reads them.
 */
export async function readDbSettings(pool: postgres.Sql): Promise<Map<string, string>> {
  const rows = await pool<{ key: string; value: string }[]>`
    with settings as (
      select s.setdatabase as database, unnest(s.setconfig) as setting
        from pg_catalog.pg_db_role_setting s
       where s.setrole = quote_ident(current_user)::regrole::oid
         and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_catalog))
    )
    select distinct on (key) key, value
      from (select database, substr(setting, 7, strpos(setting, '=') - 7) as key,
                   substr(setting, strpos(setting, '=') + 1) as value
              from settings where setting like 'pgrst.%') s
     order by key, database desc`;
  return new Map(rows.filter((r) => KNOWN.includes(r.key)).map((r) => [r.key, r.value]));
}

export class ConfigError extends Error {}

/** The file configuration with the in-database settings applied; throws ConfigError on a malformed value. */
export function applyDbSettings(base: RestConfig, settings: Map<string, string>, warn: (line: string) => void) {
  const config = { ...base };
  for (const [key, value] of settings) {
    switch (key) {
      case "db_schemas":
        if (list(value).length === 0) throw new ConfigError(`pgrst.db_schemas is empty`);
        config.schemas = list(value);
        break;
      case "db_extra_search_path":
        config.extraSearchPath = list(value);
        break;
      case "db_max_rows": {
        if (!/^\d+$/.test(value.trim())) throw new ConfigError(`pgrst.db_max_rows is not a number: ${value}`);
        config.maxRows = Number(value) > 0 ? Number(value) : null;
        break;
      }
      case "db_anon_role":
        config.anonRole = value.trim();
        break;
      case "db_tx_end":
        if (!["commit", "commit-allow-override", "rollback", "rollback-allow-override"].includes(value.trim())) {
          throw new ConfigError(`pgrst.db_tx_end is not one of commit, commit-allow-override, rollback, ...: ${value}`);
        }
        config.txEnd = value.trim() as TxEnd;
        break;
      case "db_pre_request":
        config.preRequest = value.trim() || null;
        break;
      case "openapi_mode":
        if (!["follow-privileges", "ignore-privileges", "disabled"].includes(value.trim())) {
          throw new ConfigError(`pgrst.openapi_mode is not one of follow-privileges, ignore-privileges, disabled`);
        }
        config.openApiMode = value.trim() as OpenApiMode;
        break;
      case "db_aggregates_enabled":
        config.aggregatesEnabled = bool(value);
        break;
      case "db_plan_enabled":
        config.planEnabled = bool(value);
        break;
      default:
        if (IGNORED.has(key)) warn(`pgrst.${key} is not emulated by the local PostgREST; it has no effect`);
    }
  }
  return config;
}

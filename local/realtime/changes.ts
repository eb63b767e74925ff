// Realtime's postgres_changes, locally, as Realtime's postgres_cdc_rls
// extension does it: each binding of a join becomes a row of
// realtime.subscription (its event, table, filters and the subscriber's
// claims), refused with Realtime's own messages when its parameters are
// malformed or name no table of the supabase_realtime publication; while any
// subscription exists, a temporary logical replication slot is polled (every
// 100 ms, as Realtime polls) and each change is run through
// realtime.local_apply_rls (sql/local/20_realtime.sql), which applies every
// subscriber's filters and, as the subscriber's role and claims, RLS; the
// result goes to the subscribers' channels as Realtime's `postgres_changes`
// message: `{ids, data: {schema, table, commit_timestamp, type, columns,
// record, old_record, errors}}`. Realtime decodes the slot with wal2json;
// here it is pgoutput, which Postgres has built in (local/realtime/pgoutput.ts).
import postgres from "postgres";
import type { Claims } from "../../common/jwt.ts";
import { log } from "./log.ts";
import { decodeMessage, type DecodeState, type RowChange } from "./pgoutput.ts";
import { isPayload, type Payload } from "./protocol.ts";

const PUBLICATION = "supabase_realtime";
// Realtime's defaults: poll_interval_ms, poll_max_changes, poll_max_record_bytes.
const POLL_INTERVAL_MS = 100;
const POLL_MAX_CHANGES = 100;
const MAX_RECORD_BYTES = 1024 * 1024;
// After a failure (the database went away and took the slot with it), try again this often.
const RETRY_MS = 1_000;
// The slot stays this long after the last subscriber leaves, so that a page reload does not recreate it.
const LINGER_MS = 5_000;

const FILTER_TYPES = [
  "eq",
  "neq",
  "lt",
  "lte",
  "gt",
  "gte",
  "in",
  "like",
  "ilike",
  "is",
  "match",
  "imatch",
  "isdistinct",
];

export interface Filter {
  column: string;
  op: string;
  value: string;
  negate: boolean;
}

export interface SubscriptionParams {
  action: string;
  schema: string;
  table: string;
  filters: Filter[];
  select: string[] | null;
}

/** Elixir's inspect/1 of what Realtime puts in its messages: strings, lists, tuples, booleans, nil. */
function inspect(value: unknown): string {
  if (value === null || value === undefined) return "nil";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(inspect).join(", ")}]`;
  if (isPayload(value)) {
    return `%{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)} => ${inspect(v)}`).join(", ")}}`;
  }
  return String(value);
}

const inspectFilters = (filters: Filter[]) =>
  `[${filters.map((f) => `{${[f.column, f.op, f.value].map(inspect).join(", ")}, ${f.negate}}`).join(", ")}]`;

/** Realtime's split_top_level: commas split filters, except inside parentheses or quotes. */
function splitTopLevel(filter: string): string[] {
  const parts: string[] = [];
  let current = "";
  let depth = 0;
  let quoted = false;
  let previous = "";
  for (let i = 0; i < filter.length; i++) {
    const char = filter[i];
    if (quoted) {
      if (char === "\\" && i + 1 < filter.length) {
        current += char + filter[++i];
        previous = filter[i];
      } else {
        if (char === '"') quoted = false;
        current += char;
        previous = char;
      }
      continue;
    }
    if (char === '"' && [".", "(", ","].includes(previous)) quoted = true;
    else if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (char === "," && depth === 0) {
      parts.push(current);
      current = "";
      previous = "";
      continue;
    }
    current += char;
    previous = char;
  }
  parts.push(current);
  return parts;
}

/** A PostgREST-quoted value ("a,b" with \" escapes) unquoted; anything else as it is. */
function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  let out = "";
  for (let i = 1; i < value.length; i++) {
    const char = value[i];
    if (char === "\\" && i + 1 < value.length) out += value[++i];
    else if (char === '"') return i === value.length - 1 ? out : value;
    else out += char;
  }
  return value;
}

function parseFilters(filter: string): Filter[] | string {
  const trimmed = filter.trim();
  if (trimmed === "") return [];
  const filters: Filter[] = [];
  for (const raw of splitTopLevel(trimmed)) {
    const segment = raw.trim();
    if (segment === "") return "filter must not contain empty segments (check for extra commas)";
    const equals = segment.indexOf("=");
    if (equals < 0) return inspect([segment]);
    const column = segment.slice(0, equals);
    let rest = segment.slice(equals + 1);
    const negate = rest.startsWith("not.");
    if (negate) rest = rest.slice(4);
    const dot = rest.indexOf(".");
    if (dot < 0) return inspect([rest]);
    const [op, value] = [rest.slice(0, dot), rest.slice(dot + 1)];
    if (!FILTER_TYPES.includes(op)) return inspect([op, value]);
    if (op === "in") {
      if (!(value.length >= 2 && value.startsWith("(") && value.endsWith(")"))) {
        return "`in` filter value must be wrapped by parentheses";
      }
      filters.push({ column, op, value: `{${value.slice(1, -1)}}`, negate });
    } else filters.push({ column, op, value: unquote(value), negate });
  }
  return filters;
}

/** Realtime's parse_subscription_params: the binding's parameters, or why they cannot be used. */
export function parseSubscriptionParams(params: Payload): SubscriptionParams | { error: string } {
  const event = typeof params.event === "string" ? params.event.toUpperCase() : "*";
  const action = ["INSERT", "UPDATE", "DELETE"].includes(event) ? event : "*";
  let select: string[] | null = null;
  if (typeof params.select === "string") {
    return {
      error: 'Error parsing `select` params: expected a list of column name strings, e.g. select: ["col1", "col2"]',
    };
  }
  if (Array.isArray(params.select)) {
    const columns = params.select.filter((c): c is string => typeof c === "string");
    select = columns.length > 0 ? columns : null;
  }
  const has = (key: string) => key in params;
  const text = (key: string) => typeof params[key] === "string";
  let parsed: SubscriptionParams;
  if (text("schema") && text("table") && text("filter")) {
    const filters = parseFilters(params.filter as string);
    if (typeof filters === "string") return { error: `Error parsing \`filter\` params: ${filters}` };
    parsed = { action, schema: params.schema as string, table: params.table as string, filters, select };
  } else if (text("schema") && text("table") && !has("filter")) {
    parsed = { action, schema: params.schema as string, table: params.table as string, filters: [], select };
  } else if (text("schema") && !has("table") && !has("filter")) {
    parsed = { action, schema: params.schema as string, table: "*", filters: [], select };
  } else if (text("table") && !has("schema") && !has("filter")) {
    parsed = { action, schema: "public", table: params.table as string, filters: [], select };
  } else {
    const shown = has("user_token") || has("auth_token") ? "<redacted>" : inspect(params);
    return {
      error:
        `No subscription params provided. Please provide at least a \`schema\` or \`table\` to subscribe to: ${shown}`,
    };
  }
  if (select && (parsed.schema === "*" || parsed.table === "*")) {
    return {
      error: "Column selection is not supported for wildcard subscriptions. Provide an explicit schema and table name.",
    };
  }
  return parsed;
}

function describeParams(p: SubscriptionParams): string {
  return `event: ${p.action}, schema: ${p.schema}, table: ${p.table}, filters: ${inspectFilters(p.filters)}, select: ${
    p.select ? inspect(p.select) : "nil"
  }`;
}

// The condition names Postgrex prints for the errors a subscription's checks raise.
const CONDITION_NAMES: Record<string, string> = {
  P0001: "raise_exception",
  "42704": "undefined_object",
  "22P02": "invalid_text_representation",
  "22007": "invalid_datetime_format",
  "22008": "datetime_field_overflow",
  "22003": "numeric_value_out_of_range",
  "2201B": "invalid_regular_expression",
  "42883": "undefined_function",
};

/** A subscription's binding id, as Realtime gives it (:erlang.phash2 of the params): same params, same id. */
export function bindingId(params: Payload): number {
  const canonical = JSON.stringify(params, Object.keys(params).sort());
  let hash = 0x811c9dc5;
  for (let i = 0; i < canonical.length; i++) hash = Math.imul(hash ^ canonical.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % 2 ** 27;
}

/** The message a channel receives for one change. */
export interface ChangeMessage {
  ids: number[];
  data: Payload;
}

/** A joined channel with postgres_changes bindings. */
export interface ChangeSubscriber {
  deliverChange(message: ChangeMessage): void;
}

interface ApplyRow {
  payload: Payload;
  subscription_ids: string[];
  errors: string[];
}

/** Realtime's change record (NewRecord, UpdatedRecord, DeletedRecord) from apply_rls's output. */
function changeRecord(row: ApplyRow): Payload {
  const { payload } = row;
  const data: Payload = {
    schema: payload.schema,
    table: payload.table,
    commit_timestamp: payload.commit_timestamp ?? null,
    type: payload.type,
    columns: payload.columns ?? [],
    errors: row.errors.length > 0 ? row.errors : null,
  };
  if (payload.type !== "DELETE") data.record = payload.record ?? {};
  if (payload.type !== "INSERT") data.old_record = payload.old_record ?? {};
  return data;
}

/** The temporary logical replication slot and the loop that polls it. */
class ChangeStream {
  readonly #slot = `supabase_realtime_local_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  #conn: postgres.Sql | null = null;
  #slotReady = false;
  #running = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #polling: Promise<void> = Promise.resolve();
  #decode: DecodeState = { relations: new Map(), commitTimestamp: new Date(0).toISOString() };

  constructor(readonly databaseUrl: string, readonly dispatch: (rows: ApplyRow[]) => void) {}

  #connection(): postgres.Sql {
    // One session of its own: a temporary slot belongs to the session that made it.
    this.#conn ??= postgres(this.databaseUrl, {
      max: 1,
      idle_timeout: 0,
      max_lifetime: 0,
      connect_timeout: 3,
      fetch_types: false,
      onnotice: () => {},
      // Creating a slot waits for the transactions running then; a join waits no longer than realtime-js would.
      connection: { application_name: "realtime_rls", statement_timeout: 8_000 },
      onclose: () => (this.#slotReady = false),
    });
    return this.#conn;
  }

  async #ensureSlot(): Promise<void> {
    if (this.#slotReady) return;
    const conn = this.#connection();
    const [existing] = await conn`select 1 from pg_replication_slots where slot_name = ${this.#slot}`;
    if (!existing) await conn`select pg_create_logical_replication_slot(${this.#slot}, 'pgoutput', true)`;
    this.#slotReady = true;
    // A new decoding session describes each relation again before its first change.
    this.#decode.relations.clear();
  }

  /** Creates the slot (so that every change from now on is read) and starts polling; throws when it cannot. */
  async start(): Promise<void> {
    await this.#polling;
    await this.#ensureSlot();
    if (this.#running) return;
    this.#running = true;
    log("postgres_changes_started", { slot: this.#slot });
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    clearTimeout(this.#timer);
    if (!this.#running) return;
    this.#timer = setTimeout(() => {
      this.#polling = this.#poll();
    }, ms);
  }

  async #poll(): Promise<void> {
    let next = POLL_INTERVAL_MS;
    try {
      await this.#ensureSlot();
      const conn = this.#connection();
      const messages = await conn<{ data: Uint8Array }[]>`
        select data from pg_logical_slot_get_binary_changes(${this.#slot}, null, ${POLL_MAX_CHANGES},
          'proto_version', '1', 'publication_names', ${PUBLICATION})`;
      const changes: RowChange[] = [];
      for (const { data } of messages) {
        const change = decodeMessage(data, this.#decode);
        if (change) changes.push(change);
      }
      if (changes.length > 0) {
        const rows = await conn.begin((tx) =>
          tx<ApplyRow[]>`
            select r.payload, to_jsonb(r.subscription_ids) as subscription_ids, to_jsonb(r.errors) as errors
            from jsonb_array_elements(${
            tx.json(changes as unknown as postgres.JSONValue)
          }) with ordinality c(change, n),
                 lateral realtime.local_apply_rls(c.change, ${MAX_RECORD_BYTES}) r
            order by c.n`
        );
        this.dispatch(rows as unknown as ApplyRow[]);
      }
      if (messages.length > 0) next = 0;
    } catch (error) {
      // The database went away (and the temporary slot with its session): a new slot once it is back.
      this.#slotReady = false;
      log("postgres_changes_poll_failed", { error: String(error) });
      next = RETRY_MS;
    }
    this.#schedule(next);
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    await this.#polling;
    const conn = this.#conn;
    this.#conn = null;
    this.#slotReady = false;
    if (!conn) return;
    // Dropping the session drops its temporary slot, and the WAL it held.
    await conn.end({ timeout: 1 }).catch(() => {});
    log("postgres_changes_stopped", { slot: this.#slot });
  }
}

export class PostgresChanges {
  /** Each subscription (one binding of one channel): whose, and which binding id it answers to. */
  readonly #subscriptions = new Map<string, { subscriber: ChangeSubscriber; bindingId: number }>();
  readonly #bySubscriber = new Map<ChangeSubscriber, string[]>();
  readonly #stream: ChangeStream;
  #linger: ReturnType<typeof setTimeout> | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(readonly sql: postgres.Sql, databaseUrl: string) {
    this.#stream = new ChangeStream(databaseUrl, (rows) => this.#dispatch(rows));
  }

  /** As Realtime's subscription manager on start: subscriptions of an earlier run are gone with their sockets. */
  async reset(): Promise<void> {
    await this.sql`delete from realtime.subscription`.catch((error) =>
      log("subscription_cleanup_failed", { error: String(error) })
    );
  }

  /** One at a time: a subscription never races the slot being dropped. */
  #serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => {});
    return result;
  }

  /**
   * Subscribes a channel's bindings; resolves with an error message (Realtime's)
   * when they cannot be, in which case none is.
   */
  subscribe(
    subscriber: ChangeSubscriber,
    bindings: Payload[],
    claims: Claims & { role: string },
  ): Promise<{ ok: true } | { ok: false; message: string }> {
    return this.#serially(async () => {
      const parsed: { id: string; bindingId: number; params: SubscriptionParams }[] = [];
      for (const params of bindings) {
        const result = parseSubscriptionParams(params);
        if ("error" in result) return { ok: false as const, message: result.error };
        parsed.push({ id: crypto.randomUUID(), bindingId: bindingId(params), params: result });
      }
      clearTimeout(this.#linger);
      try {
        await this.#stream.start();
      } catch (error) {
        log("postgres_changes_unavailable", { error: String(error) });
        this.#stopIfUnused();
        return { ok: false as const, message: `PoolingReplicationPreparationError: ${(error as Error).message}` };
      }
      const failure = await this.#insert(parsed, claims);
      if (failure) {
        this.#stopIfUnused();
        return { ok: false as const, message: failure };
      }
      for (const { id, bindingId } of parsed) this.#subscriptions.set(id, { subscriber, bindingId });
      this.#bySubscriber.set(subscriber, [...(this.#bySubscriber.get(subscriber) ?? []), ...parsed.map((p) => p.id)]);
      return { ok: true as const };
    });
  }

  /** Realtime's Subscriptions.create: every binding in one transaction, or none. */
  async #insert(
    parsed: { id: string; params: SubscriptionParams }[],
    claims: Claims & { role: string },
  ): Promise<string | null> {
    let current: SubscriptionParams | undefined;
    try {
      await this.sql.begin(async (tx) => {
        for (const { id, params } of parsed) {
          current = params;
          const rows = await tx`
            with sub_tables as (
              select format('%I.%I', pub.schemaname, pub.tablename)::regclass as entity
              from pg_publication_tables pub
              where pub.pubname = ${PUBLICATION}
                and pub.schemaname like (case ${params.schema}::text when '*' then '%' else ${params.schema}::text end) escape ''
                and pub.tablename like (case ${params.table}::text when '*' then '%' else ${params.table}::text end) escape ''
            )
            insert into realtime.subscription (subscription_id, entity, filters, claims, action_filter, selected_columns)
            select ${id}::uuid, sub_tables.entity,
              (select coalesce(array_agg(row(f.c, f.o::realtime.equality_op, f.v, f.n::boolean)::realtime.user_defined_filter), '{}')
               from unnest(${params.filters.map((f) => f.column)}::text[], ${params.filters.map((f) => f.op)}::text[],
                           ${params.filters.map((f) => f.value)}::text[], ${
            params.filters.map((f) => String(f.negate))
          }::text[])
                    as f(c, o, v, n)),
              ${tx.json(claims as postgres.JSONValue)}, ${params.action}, ${params.select}::text[]
            from sub_tables
            on conflict (subscription_id, entity, filters, action_filter, coalesce(selected_columns, '{}'))
              do update set claims = excluded.claims, created_at = now()
            returning id`;
          if (rows.length === 0) throw new NoTables(params);
        }
      });
      return null;
    } catch (error) {
      if (error instanceof NoTables) {
        return `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [${
          describeParams(error.params)
        }]`;
      }
      const detail = error instanceof postgres.PostgresError
        ? `ERROR ${error.code} (${CONDITION_NAMES[error.code] ?? "unknown"}) ${error.message}`
        : String(error);
      return `Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: [${
        current ? describeParams(current) : ""
      }]. Exception: ${detail}`;
    }
  }

  /** The channel's token changed: its subscriptions act with the new claims. */
  updateClaims(subscriber: ChangeSubscriber, claims: Claims & { role: string }): Promise<void> {
    const ids = this.#bySubscriber.get(subscriber);
    if (!ids) return Promise.resolve();
    return this.#serially(async () => {
      await this.sql`update realtime.subscription set claims = ${this.sql.json(claims as postgres.JSONValue)}
                     where subscription_id = any(${ids}::uuid[])`.catch((error) =>
        log("subscription_update_failed", { error: String(error) })
      );
    });
  }

  unsubscribe(subscriber: ChangeSubscriber): Promise<void> {
    const ids = this.#bySubscriber.get(subscriber);
    if (!ids) return Promise.resolve();
    this.#bySubscriber.delete(subscriber);
    for (const id of ids) this.#subscriptions.delete(id);
    return this.#serially(async () => {
      await this.sql`delete from realtime.subscription where subscription_id = any(${ids}::uuid[])`.catch((error) =>
        log("subscription_deletion_failed", { error: String(error) })
      );
      this.#stopIfUnused();
    });
  }

  #stopIfUnused(): void {
    if (this.#subscriptions.size > 0) return;
    clearTimeout(this.#linger);
    this.#linger = setTimeout(() => {
      void this.#serially(async () => {
        if (this.#subscriptions.size === 0) await this.#stream.stop();
      });
    }, LINGER_MS);
  }

  #dispatch(rows: ApplyRow[]): void {
    for (const row of rows) {
      const data = changeRecord(row);
      const bySubscriber = new Map<ChangeSubscriber, Set<number>>();
      for (const id of row.subscription_ids) {
        const subscription = this.#subscriptions.get(id);
        if (!subscription) continue;
        const ids = bySubscriber.get(subscription.subscriber) ?? new Set<number>();
        bySubscriber.set(subscription.subscriber, ids.add(subscription.bindingId));
      }
      for (const [subscriber, ids] of bySubscriber) subscriber.deliverChange({ ids: [...ids], data });
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#linger);
    await this.#queue;
    await this.#stream.stop();
  }
}

class NoTables extends Error {
  constructor(readonly params: SubscriptionParams) {
    super("no table of the publication matches");
  }
}

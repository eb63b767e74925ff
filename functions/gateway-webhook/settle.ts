// Settling with the gateway: whatever an event claims, the state applied is the
// one the gateway's own record shows (docs/contract.md, Webhooks). An event names
// an object; we find our withdrawal or delivery behind it (by the gateway's id,
// our externalReference, or the description we gave it), fetch the object from
// the gateway with the owning company's key, check that it is ours, and apply
// its status in one transaction together with the audit row. The reconciliation
// job settles withdrawals the same way.
import { asService, asServiceAtOnce, db, type Sql, type Tx } from "../_shared/db.ts";
import { HttpError, retryLater } from "../_shared/errors.ts";
import {
  type GatewayClient,
  type GatewayObject,
  gatewayOf,
  GatewayRejected,
  type StoredConfig,
  storedConfig,
} from "../_shared/gateway.ts";
import { inlined } from "../_shared/sql-text.ts";
import { describedId, eventForStatus, type Kind } from "./events.ts";

export type Result = "processed" | "duplicate" | "ignored" | "rejected" | "error";

/** What one webhook request is about, as far as it is known; becomes its audit row. */
export interface Audit {
  companyId: string | null;
  event: string | null;
  objectId: string | null;
}

export interface Outcome {
  result: Exclude<Result, "rejected" | "error">;
  detail: string;
  /** True when the audit row was written in the transaction that applied the event. */
  logged: boolean;
}

/** What a claim says about the object it speaks of. */
export interface Claim {
  kind: Kind;
  objectId: string | null;
  externalReference: string | null;
  describedId: string | null;
}

export interface Ours {
  id: string;
  company_id: string;
  gateway_id: string | null;
}

/** Ours, and its company's gateway configuration when the statement that found it read it. */
type Found = Ours & { config?: StoredConfig | null };

const noun = (kind: Kind) => kind === "transfer" ? "withdrawal" : "delivery";
export const ignored = (detail: string): Outcome => ({ result: "ignored", detail, logged: false });

/**
 * The statement that finds our withdrawal or delivery a claim names, within
 * `companyId` (null: any company), and, `withSettings`, its company's gateway
 * settings; its values inline (sql-text.ts): one round trip, not a description
 * of the parameters first. The webhook bench sends it too.
 */
export function findStatement(claim: Claim, companyId: string | null, withSettings: boolean): [string, unknown[]] {
  const reference = claim.externalReference ?? claim.describedId;
  const settings = withSettings
    ? "g.api_key_ciphertext, g.webhook_secret_ciphertext, g.environment"
    : "null as api_key_ciphertext, null as webhook_secret_ciphertext, null as environment";
  const join = (owner: string) =>
    withSettings ? `left join private.gateway_configs g on g.company_id = ${owner}.company_id` : "";
  return inlined(
    claim.kind === "transfer"
      ? [
        `select w.id, w.company_id, w.gateway_transfer_id as gateway_id, ${settings}
         from public.withdrawals w ${join("w")}
         where w.id = private.withdrawal_for_event($1, $2, $3)`,
        [companyId, claim.objectId, reference],
      ]
      : [
        `select d.id, d.company_id, d.gateway_payment_id as gateway_id, ${settings}
         from public.deliveries d ${join("d")}
         where d.id = private.delivery_for_payment($1, $2)
           and ($3::uuid is null or d.company_id = $3)`,
        [claim.objectId, reference, companyId],
      ],
  );
}

/**
 * Our withdrawal or delivery a claim names, within `companyId` (null: any
 * company): one statement, no transaction (a read by trusted code). Unless the
 * request read the company's gateway settings already (the company endpoint
 * has, for its signature), the statement reads them too.
 */
async function findOurs(claim: Claim, companyId: string | null, withSettings: boolean): Promise<Found | null> {
  // deno-lint-ignore no-explicit-any
  const [text, values] = findStatement(claim, companyId, withSettings) as [string, any[]];
  const [row] = await db().unsafe<(Ours & Partial<Record<keyof StoredConfig, string | null>>)[]>(text, values);
  if (!row) return null;
  return {
    id: row.id,
    company_id: row.company_id,
    gateway_id: row.gateway_id,
    ...(withSettings ? { config: storedConfig(row) } : {}),
  };
}

/** Whether the gateway's object is the one behind our record. */
function isOurs(object: GatewayObject, ours: Ours): boolean {
  if (ours.gateway_id !== null) return object.id === ours.gateway_id;
  return object.externalReference === ours.id || describedId(object.description) === ours.id;
}

/**
 * The gateway's record of an object. Its 404 means the claim names nothing
 * real (null); any other refusal or failure is ours to retry: 503.
 */
export async function fetchObject(client: GatewayClient, kind: Kind, id: string): Promise<GatewayObject | null> {
  try {
    return kind === "transfer" ? await client.getTransfer(id) : await client.getPayment(id);
  } catch (error) {
    if (error instanceof GatewayRejected && / HTTP 404$|not found/i.test(error.message)) return null;
    const reason = error instanceof HttpError ? String(error.detail) : "unreachable";
    throw retryLater(503, `could not check the ${kind} with the gateway: ${reason}`, 60);
  }
}

async function clientOf(config: StoredConfig | null | undefined): Promise<GatewayClient> {
  if (!config) throw retryLater(503, "the company has no gateway configuration to check the event with", 300);
  return (await gatewayOf(config)).client;
}

export interface SettleOptions {
  /** Unsigned requests may make us ask the gateway about an object at most once a minute. */
  unsigned: boolean;
  /** Prepended to the audit detail. */
  detailPrefix?: string;
  /** The scope company's gateway configuration, as this request read it already (the company endpoint). */
  config?: StoredConfig | null;
}

/** At most one gateway look-up per object per minute for unsigned requests (the limit lives in Postgres). */
async function admitLookup(kind: Kind, id: string): Promise<boolean> {
  const [row] = await asService((tx) =>
    tx<{ admitted: boolean }[]>`select private.admit_gateway_lookup(${`${kind}:${id}`}) as admitted`
  );
  return row.admitted;
}

/** Finds, checks with the gateway and applies what a claim speaks of, within `scope` (a company, or null). */
export async function settle(
  audit: Audit,
  scope: string | null,
  claim: Claim,
  options: SettleOptions,
): Promise<Outcome> {
  const prefix = options.detailPrefix ?? "";
  // The scope company's settings, read by this request already, or read with our object.
  const known = scope !== null && options.config !== undefined;
  let ours = await findOurs(claim, scope, !known);
  let object: GatewayObject | null = null;
  if (!ours && scope && claim.objectId) {
    // An id we do not know (our process may have died before storing it): ask the gateway whose it is.
    if (options.unsigned && !(await admitLookup(claim.kind, claim.objectId))) return tooSoon();
    object = await fetchObject(await clientOf(options.config), claim.kind, claim.objectId);
    if (!object) return ignored(`${prefix}the gateway has no ${claim.kind} ${claim.objectId}`);
    ours = await findOurs(
      {
        kind: claim.kind,
        objectId: null,
        externalReference: typeof object.externalReference === "string" ? object.externalReference : null,
        describedId: describedId(object.description),
      },
      scope,
      !known,
    );
    if (ours && ours.gateway_id !== null && ours.gateway_id !== object.id) ours = null;
  }
  if (!ours) return ignored(`${prefix}no such ${noun(claim.kind)}`);
  audit.companyId = ours.company_id;

  if (!object) {
    const gatewayId = ours.gateway_id ?? claim.objectId;
    // The gateway always names its object; a claim that names none has nothing to check.
    if (!gatewayId) return ignored(`${prefix}the ${claim.kind} has no gateway id to check`);
    if (options.unsigned && !(await admitLookup(claim.kind, gatewayId))) return tooSoon();
    object = await fetchObject(await clientOf(known ? options.config : ours.config), claim.kind, gatewayId);
    if (!object) return ignored(`${prefix}the gateway has no ${claim.kind} ${gatewayId}`);
  }
  if (!isOurs(object, ours)) return ignored(`${prefix}the gateway's ${claim.kind} is not this ${noun(claim.kind)}'s`);
  return await applyStatus(audit, ours, claim.kind, object, prefix);
}

function tooSoon(): never {
  throw retryLater(429, "this object was checked with the gateway less than a minute ago", 60);
}

/** What applies a gateway status: a function call returning `{result, detail}`, or nothing to call. */
function applyCall(ours: Ours, kind: Kind, object: GatewayObject, event: string | null): [string, unknown[]] | null {
  if (!event && kind === "transfer" && ours.gateway_id === null) {
    // Still pending at the gateway, but now we know the transfer: no longer in doubt; its events settle it.
    return [
      `select to_jsonb(public.attach_transfer(withdrawal_id => $1, gateway_transfer_id => $2)) as attached,
              jsonb_build_object('result', 'processed',
                'detail', 'the transfer exists and is pending: attached to the withdrawal') as r`,
      [ours.id, object.id],
    ];
  }
  if (!event) return null;
  const fn = kind === "transfer" ? "apply_transfer_event" : "apply_payment_event";
  const idArg = kind === "transfer" ? "transfer_id" : "payment_id";
  return [
    `select public.${fn}(company_id => $1, event => $2, ${idArg} => $3, external_reference => $4) as r`,
    [ours.company_id, event, object.id, ours.id],
  ];
}

/**
 * The statement that applies the status of the gateway's object to ours, its
 * values inline (sql-text.ts), answering one row of `result` and `detail`;
 * with `audit`, the same statement writes the audit row from the outcome.
 * `checked` is what the audit detail says first. The webhook bench sends it too.
 */
export function applyStatement(
  audit: Audit | null,
  ours: Ours,
  kind: Kind,
  object: GatewayObject,
  prefix = "",
): { statement: [string, unknown[]]; checked: string } {
  const event = eventForStatus(kind, object.status);
  const checked = `${prefix}checked with the gateway (${object.status}${event ? ` = ${event}` : ""}): `;
  // With nothing to call, the outcome is known: only the audit row remains.
  const [call, args] = applyCall(ours, kind, object, event) ??
    [`select jsonb_build_object('result', $1::text, 'detail', $2::text) as r`, [
      "ignored",
      `the ${kind} is not settled yet`,
    ]];
  const n = args.length;
  if (!audit) {
    return {
      statement: inlined([
        `select applied.r ->> 'result' as result, applied.r ->> 'detail' as detail from (${call}) applied`,
        args,
      ]),
      checked,
    };
  }
  return {
    statement: inlined([
      `with applied as (${call})
       insert into public.webhook_events (company_id, event, object_id, result, detail)
       select $${n + 1}::uuid, $${n + 2}::text, $${n + 3}::text, applied.r ->> 'result', $${
        n + 4
      }::text || (applied.r ->> 'detail')
       from applied
       returning result, detail`,
      [...args, audit.companyId, audit.event, audit.objectId, checked],
    ]),
    checked,
  };
}

/**
 * Applies the status of the gateway's object to ours, writing the audit row in
 * the same transaction and the same statement: begin, the role and statement
 * timeout, the statement and the commit are queued at once, one round trip
 * (functions/_shared/db.ts asUserAtOnce).
 */
export async function applyStatus(
  audit: Audit | null,
  ours: Ours,
  kind: Kind,
  object: GatewayObject,
  prefix = "",
): Promise<Outcome> {
  const { statement, checked } = applyStatement(audit, ours, kind, object, prefix);
  const [rows] = await asServiceAtOnce([statement]);
  const applied = rows[0] as unknown as { result: Outcome["result"]; detail: string };
  const detail = audit ? applied.detail : checked + applied.detail;
  return { result: applied.result, detail, logged: audit !== null };
}

/** The request's audit row: in the transaction given, or on its own (one statement). */
export async function insertAudit(sql: Tx | Sql, audit: Audit, result: Result, detail: string): Promise<void> {
  await sql`insert into public.webhook_events (company_id, event, object_id, result, detail)
            values (${audit.companyId}, ${audit.event}, ${audit.objectId}, ${result}, ${detail})`;
}

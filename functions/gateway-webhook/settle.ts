// Settling with the gateway: whatever an event claims, the state applied is the
// one the gateway's own record shows (docs/contract.md, Webhooks). An event names
// an object; we find our withdrawal or delivery behind it (by the gateway's id,
// our externalReference, or the description we gave it), fetch the object from
// the gateway with the owning company's key, check that it is ours, and apply
// its status in one transaction together with the audit row. The reconciliation
// job settles withdrawals the same way.
import { asService, rpc, type Tx } from "../_shared/db.ts";
import { HttpError } from "../_shared/errors.ts";
import { companyGateway, type GatewayClient, type GatewayObject, GatewayRejected } from "../_shared/gateway.ts";
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

interface Ours {
  id: string;
  company_id: string;
  gateway_id: string | null;
}

const noun = (kind: Kind) => kind === "transfer" ? "withdrawal" : "delivery";
const ignored = (detail: string): Outcome => ({ result: "ignored", detail, logged: false });

/** Our withdrawal or delivery a claim names, within `companyId` (null: any company). */
async function findOurs(claim: Claim, companyId: string | null): Promise<Ours | null> {
  const reference = claim.externalReference ?? claim.describedId;
  const [row] = await asService((tx) =>
    claim.kind === "transfer"
      ? tx<Ours[]>`select id, company_id, gateway_transfer_id as gateway_id from public.withdrawals
                   where id = private.withdrawal_for_event(${companyId}, ${claim.objectId}, ${reference})`
      : tx<Ours[]>`select id, company_id, gateway_payment_id as gateway_id from public.deliveries
                   where id = private.delivery_for_payment(${claim.objectId}, ${reference})
                     and (${companyId}::uuid is null or company_id = ${companyId})`
  );
  return row ?? null;
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
    throw new HttpError(503, `could not check the ${kind} with the gateway: ${reason}`, { "Retry-After": "60" });
  }
}

async function gatewayOf(companyId: string): Promise<GatewayClient> {
  const gateway = await companyGateway(companyId);
  if (!gateway) {
    throw new HttpError(503, "the company has no gateway configuration to check the event with", {
      "Retry-After": "300",
    });
  }
  return gateway.client;
}

export interface SettleOptions {
  /** Unsigned requests may make us ask the gateway about an object at most once a minute. */
  unsigned: boolean;
  /** Prepended to the audit detail. */
  detailPrefix?: string;
}

/** At most one gateway look-up per object per minute for unsigned requests (the limit lives in Postgres). */
async function admitLookup(kind: Kind, id: string): Promise<boolean> {
  const [row] = await asService((tx) =>
    tx<{ admitted: boolean }[]>`select private.admit_gateway_lookup(${`${kind}:${id}`}) as admitted`
  );
  return row.admitted;
}

/** Finds, checks with the gateway and applies what a claim speaks of, within `scope` (a company, or null). */
export async function settle(audit: Audit, scope: string | null, claim: Claim, options: SettleOptions): Promise<Outcome> {
  const prefix = options.detailPrefix ?? "";
  let ours = await findOurs(claim, scope);
  let object: GatewayObject | null = null;
  if (!ours && scope && claim.objectId) {
    // An id we do not know (our process may have died before storing it): ask the gateway whose it is.
    if (options.unsigned && !(await admitLookup(claim.kind, claim.objectId))) return tooSoon();
    object = await fetchObject(await gatewayOf(scope), claim.kind, claim.objectId);
    if (!object) return ignored(`${prefix}the gateway has no ${claim.kind} ${claim.objectId}`);
    ours = await findOurs({
      kind: claim.kind,
      objectId: null,
      externalReference: typeof object.externalReference === "string" ? object.externalReference : null,
      describedId: describedId(object.description),
    }, scope);
    if (ours && ours.gateway_id !== null && ours.gateway_id !== object.id) ours = null;
  }
  if (!ours) return ignored(`${prefix}no such ${noun(claim.kind)}`);
  audit.companyId = ours.company_id;

  if (!object) {
    const gatewayId = ours.gateway_id ?? claim.objectId;
    // The gateway always names its object; a claim that names none has nothing to check.
    if (!gatewayId) return ignored(`${prefix}the ${claim.kind} has no gateway id to check`);
    if (options.unsigned && !(await admitLookup(claim.kind, gatewayId))) return tooSoon();
    object = await fetchObject(await gatewayOf(ours.company_id), claim.kind, gatewayId);
    if (!object) return ignored(`${prefix}the gateway has no ${claim.kind} ${gatewayId}`);
  }
  if (!isOurs(object, ours)) return ignored(`${prefix}the gateway's ${claim.kind} is not this ${noun(claim.kind)}'s`);
  return await applyStatus(audit, ours, claim.kind, object, prefix);
}

function tooSoon(): never {
  throw new HttpError(429, "this object was checked with the gateway less than a minute ago", { "Retry-After": "60" });
}

/** Applies the status of the gateway's object to ours, writing the audit row in the same transaction. */
export async function applyStatus(
  audit: Audit | null,
  ours: Ours,
  kind: Kind,
  object: GatewayObject,
  prefix = "",
): Promise<Outcome> {
  const event = eventForStatus(kind, object.status);
  const checked = `${prefix}checked with the gateway (${object.status}${event ? ` = ${event}` : ""}): `;
  return await asService(async (tx) => {
    let applied: { result: Outcome["result"]; detail: string };
    if (!event && kind === "transfer" && ours.gateway_id === null) {
      // Still pending at the gateway, but now we know the transfer: no longer in doubt; its events settle it.
      await rpc(tx, "attach_transfer", { withdrawal_id: ours.id, gateway_transfer_id: object.id });
      applied = { result: "processed", detail: "the transfer exists and is pending: attached to the withdrawal" };
    } else if (!event) {
      applied = { result: "ignored", detail: `the ${kind} is not settled yet` };
    } else if (kind === "transfer") {
      applied = await rpc(tx, "apply_transfer_event", {
        company_id: ours.company_id,
        event,
        transfer_id: object.id,
        external_reference: ours.id,
      });
    } else {
      applied = await rpc(tx, "apply_payment_event", {
        company_id: ours.company_id,
        event,
        payment_id: object.id,
        external_reference: ours.id,
      });
    }
    const detail = checked + applied.detail;
    if (audit) await insertAudit(tx, audit, applied.result, detail);
    return { result: applied.result, detail, logged: audit !== null };
  });
}

/** The request's audit row, in the transaction given: the one that applied the event, or one of its own. */
export async function insertAudit(tx: Tx, audit: Audit, result: Result, detail: string): Promise<void> {
  await tx`insert into public.webhook_events (company_id, event, object_id, result, detail)
           values (${audit.companyId}, ${audit.event}, ${audit.objectId}, ${result}, ${detail})`;
}

// What a gateway webhook request says: the event name and the ids its transfer
// or payment object carries (docs/spec.md §6), parsed only after the raw body
// was verified.
import { HttpError, type ValidationItem } from "../_shared/errors.ts";
import { UUID_PATTERN } from "../_shared/schemas.ts";

export const TRANSFER_EVENTS = new Set(["TRANSFER_DONE", "TRANSFER_APPROVED", "TRANSFER_FAILED", "TRANSFER_CANCELLED"]);
export const PAYMENT_EVENTS = new Set(["PAYMENT_RECEIVED", "PAYMENT_CONFIRMED", "PAYMENT_REFUNDED", "PAYMENT_OVERDUE"]);

/** A request refused before anything is applied: 400, 401, 404 or 413, logged `rejected`. */
export class Rejected extends HttpError {}

export type Kind = "transfer" | "payment";

export interface GatewayEvent {
  event: string;
  kind: Kind | null;
  objectId: string | null;
  externalReference: string | null;
  /** Our id as the object's description names it ("Withdrawal <id>", "Delivery <id>"). */
  describedId: string | null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The first UUID in a description such as "Withdrawal 0b6c...": the description we gave the object. */
export function describedId(description: unknown): string | null {
  if (typeof description !== "string") return null;
  const match = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(description);
  return match && UUID_PATTERN.test(match[0]) ? match[0].toLowerCase() : null;
}

function invalid(item: ValidationItem): Rejected {
  return new Rejected(400, [item]);
}

/** The event name and its object's ids: from `transfer` (or, in the other form, `payment`). */
export function parseEvent(body: Uint8Array): GatewayEvent {
  let payload: unknown;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(body);
    payload = JSON.parse(decoded);
  } catch (error) {
    throw invalid({
      type: "json_invalid",
      loc: ["body"],
      msg: `JSON decode error: ${(error as Error).message}`,
      input: null,
    });
  }
  // Postgres text cannot hold NUL: such a body can never be applied, so it is refused (400), not retried.
  if (/\\u0000/i.test(decoded)) {
    throw invalid({ type: "value_error", loc: ["body"], msg: "NUL characters are not allowed", input: null });
  }
  const record = payload !== null && typeof payload === "object" && !Array.isArray(payload)
    ? payload as Record<string, unknown>
    : null;
  if (!record || typeof record.event !== "string" || record.event === "") {
    throw invalid({
      type: record && "event" in record ? "type_error" : "missing",
      loc: ["body", "event"],
      msg: "an event name is required",
      input: record?.event ?? null,
    });
  }
  const kind: Kind | null = TRANSFER_EVENTS.has(record.event)
    ? "transfer"
    : PAYMENT_EVENTS.has(record.event)
    ? "payment"
    : null;
  const holder = (kind === "transfer" ? record.transfer ?? record.payment : record.payment ?? record.transfer) as
    | Record<string, unknown>
    | null
    | undefined;
  const object = holder !== null && typeof holder === "object" ? holder : {};
  return {
    event: record.event,
    kind,
    objectId: text(object.id),
    externalReference: text(object.externalReference),
    describedId: describedId(object.description),
  };
}

/**
 * The event a gateway object's status stands for; null while it is not settled. A payment received in cash is
 * final as it is (no confirmation follows), so it stands for PAYMENT_CONFIRMED, which the database applies to a
 * payment not yet received as received, then confirmed (private.apply_payment_effect).
 */
export function eventForStatus(kind: Kind, status: string): string | null {
  const events: Record<Kind, Record<string, string>> = {
    transfer: { DONE: "TRANSFER_DONE", FAILED: "TRANSFER_FAILED", CANCELLED: "TRANSFER_CANCELLED" },
    payment: {
      RECEIVED: "PAYMENT_RECEIVED",
      RECEIVED_IN_CASH: "PAYMENT_CONFIRMED",
      CONFIRMED: "PAYMENT_CONFIRMED",
      REFUNDED: "PAYMENT_REFUNDED",
      OVERDUE: "PAYMENT_OVERDUE",
    },
  };
  return events[kind][status] ?? null;
}

// The webhook log's audit note (`detail`), which the platform writes in English with the gateway's and its own codes
// (`checked with the gateway (FAILED = TRANSFER_FAILED): withdrawal failed`), read into its parts so that the panel
// says it in words (features/integrations/components/Webhooks.tsx). The notes come from functions/gateway-webhook/
// (settle.ts, webhook.ts, reconcile.ts) and from apply_payment_event / apply_transfer_event
// (supabase/schemas/06_money.sql); a note this does not know is left as it is, and shown as written. Pure:
// tests/web/web-input.test.ts
// reads it.

export type Outcome =
  | "deliveryNow"
  | "alreadyApplied"
  | "paymentDoesNotApply"
  | "withdrawalLateSuccess"
  | "withdrawalForReview"
  | "withdrawalAlready"
  | "withdrawalNow"
  | "transferAttached"
  | "notSettled"
  | "noSuchDelivery"
  | "noSuchWithdrawal"
  | "notPix"
  | "notHandled"
  | "notOurs"
  | "gatewayHasNone"
  | "noGatewayId"
  | "noSecret"
  | "noSignature"
  | "badSignature"
  | "unknownCompany"
  | "couldNotCheck"
  | "tooSoon"
  | "noGatewayConfig"
  | "tooSlow";

export interface DetailReading {
  /** Sent without a signature (a hint checked with the gateway), or found by the reconciliation job. */
  via: ("unsigned" | "reconciliation")[];
  /** The status the gateway reported for the object when it was checked (PENDING, RECEIVED, DONE, ...). */
  gatewayStatus: string | null;
  /** What was done, with the codes it names (`status`, `payment`, `event`, `kind`). */
  outcome: { name: Outcome; values: Record<string, string> } | null;
}

const OUTCOMES: [RegExp, Outcome, string[]][] = [
  [/^delivery (\w+), payment (\w+)$/, "deliveryNow", ["status", "payment"]],
  [/^(\w+) already applied$/, "alreadyApplied", ["event"]],
  [/^(\w+) does not apply to a delivery (\w+) with payment (\w+)$/, "paymentDoesNotApply", [
    "event",
    "status",
    "payment",
  ]],
  [/^withdrawal completed after it was recorded failed \((\w+)\): /, "withdrawalLateSuccess", ["kind"]],
  [/^withdrawal is already (\w+); the gateway now reports (\w+): /, "withdrawalForReview", ["status", "event"]],
  [/^withdrawal already (\w+)$/, "withdrawalAlready", ["status"]],
  [/^withdrawal (\w+)$/, "withdrawalNow", ["status"]],
  [/^the transfer exists and is pending: attached to the withdrawal$/, "transferAttached", []],
  [/^the (payment|transfer) is not settled yet$/, "notSettled", ["object"]],
  [/^(no such delivery|no delivery for this payment)$/, "noSuchDelivery", []],
  [/^no such withdrawal$/, "noSuchWithdrawal", []],
  [/^delivery is not paid by Pix$/, "notPix", []],
  [/^(event \w+ is not handled|event not handled|\w+ is not a transfer event)$/, "notHandled", []],
  [/^(the transfer is not this withdrawal's|the gateway's (payment|transfer) is not this \w+'s)$/, "notOurs", []],
  [/^the gateway has no (payment|transfer) \S+$/, "gatewayHasNone", ["object"]],
  [/^the (payment|transfer) has no gateway id to check$/, "noGatewayId", ["object"]],
  [/^no webhook secret is configured for this endpoint$/, "noSecret", []],
  [/^missing gateway-signature$/, "noSignature", []],
  [/^invalid signature$/, "badSignature", []],
  [/^unknown company$/, "unknownCompany", []],
  [/^could not check the (payment|transfer) with the gateway: /, "couldNotCheck", ["object"]],
  [/^this object was checked with the gateway less than a minute ago$/, "tooSoon", []],
  [/^the company has no gateway configuration to check the event with$/, "noGatewayConfig", []],
  [/^the event could not be processed in time; deliver it again$/, "tooSlow", []],
];

/** The note's parts; `outcome` is null when what it says is not one of the notes above. */
export function readWebhookDetail(detail: string): DetailReading {
  let rest = detail.trim();
  const via: DetailReading["via"] = [];
  for (let m; (m = /^(unsigned|reconciliation), /.exec(rest));) {
    via.push(m[1] as "unsigned" | "reconciliation");
    rest = rest.slice(m[0].length);
  }
  let gatewayStatus: string | null = null;
  const checked = /^checked with the gateway \((\w+)(?: = \w+)?\): /.exec(rest);
  if (checked) {
    gatewayStatus = checked[1];
    rest = rest.slice(checked[0].length);
  }
  for (const [pattern, name, keys] of OUTCOMES) {
    const m = pattern.exec(rest);
    if (!m) continue;
    // Each name takes the next captured word that is one (the alternatives' own groups are skipped).
    const words = m.slice(1).filter((word) => word !== undefined && /^\w+$/.test(word));
    const values = Object.fromEntries(keys.map((key, i) => [key, words[i]]));
    return { via, gatewayStatus, outcome: { name, values } };
  }
  return { via, gatewayStatus, outcome: null };
}

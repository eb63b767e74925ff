// Every error the API can answer, as a sentence for people in the language in use (never the raw body). What the
// API says in its own (English) words is matched here and said again with its amounts in reais and its statuses
// named; a message not known here is still shown, inside a sentence.
import { formatBRL } from "../format.ts";
import { i18n } from "../i18n/index.ts";
import { ApiError } from "./client.ts";

/** A key under `group` when the language files have it, else the code as it came. */
function named(group: "status" | "withdrawalStatus" | "wallet.keyTypes" | "server.proofKinds", code: string) {
  const key = `${group}.${code}`;
  return i18n.exists(key) ? String(i18n.t(key as "status.pending")) : code;
}

type Known = [RegExp, (m: RegExpMatchArray) => string];
const KNOWN: Known[] = [
  [
    /^insufficient balance: available (-?[\d.]+), requested (-?[\d.]+)$/,
    (m) =>
      i18n.t("server.insufficientBalance", { available: formatBRL(Number(m[1])), requested: formatBRL(Number(m[2])) }),
  ],
  [
    /^the price changed to (-?[\d.]+) while the delivery was being created/,
    (m) => i18n.t("server.priceChanged", { price: formatBRL(Number(m[1])) }),
  ],
  [
    /^delivery cannot move from (\w+) to (\w+)$/,
    (m) => i18n.t("server.deliveryTransition", { from: named("status", m[1]), to: named("status", m[2]) }),
  ],
  [
    /^withdrawal cannot move from (\w+) to (\w+)$/,
    (m) =>
      i18n.t("server.withdrawalTransition", {
        from: named("withdrawalStatus", m[1]),
        to: named("withdrawalStatus", m[2]),
      }),
  ],
  [
    /^proof of delivery required: (.+) missing$/,
    (m) =>
      i18n.t("server.proofMissing", {
        what: m[1].split(", ").map((kind) => named("server.proofKinds", kind)).join(i18n.t("server.listSeparator")),
      }),
  ],
  [
    /^(the company has not configured the payment gateway|payment gateway not configured)$/,
    () => i18n.t("server.gatewayNotConfigured"),
  ],
  [/^the company has no price table$/, () => i18n.t("server.noPriceTable")],
  [/^(this )?driver is deactivated$/, () => i18n.t("server.driverDeactivated")],
  [
    /^pix_key is not a valid (\w+) key$/,
    (m) => i18n.t("server.pixKeyInvalid", { type: named("wallet.keyTypes", m[1]) }),
  ],
  [/^amount must be greater than 0 with at most 2 decimal places$/, () => i18n.t("server.amountRule")],
  [/^the note is longer than 1000 characters$/, () => i18n.t("server.noteTooLong")],
  [/^A user with this e-mail address already exists$/, () => i18n.t("server.emailTaken")],
  [
    /^a delivery with external_id (.+) already exists: ([0-9a-f-]{36})$/,
    (m) => i18n.t("server.externalIdTaken", { externalId: m[1], id: m[2].slice(0, 8) }),
  ],
  [/^reason must be one of /, () => i18n.t("server.failureReason")],
  [/^the offer of this delivery has expired$/, () => i18n.t("server.offerExpired")],
  [/^the offer of this delivery was withdrawn$/, () => i18n.t("server.offerWithdrawn")],
  [/^the offer of this delivery was (already )?declined$/, () => i18n.t("server.offerDeclined")],
  [/^the offer of this delivery was (already )?accepted$/, () => i18n.t("server.offerAccepted")],
  [/^this delivery was not offered to you$/, () => i18n.t("server.notOffered")],
  [
    /^Proof of delivery refused: (.+)\. It was removed: upload it again$/,
    (m) =>
      i18n.t("server.proofNotImage", {
        what: [...m[1].matchAll(/the (\w+) is not/g)].map(([, kind]) => named("server.proofKinds", kind))
          .join(i18n.t("server.listSeparator")),
      }),
  ],
  [/^Photo of the failed attempt refused: /, () => i18n.t("server.failurePhotoNotImage")],
  [/^wrong handover code$/, () => i18n.t("server.handoverWrong")],
  [/^the recipient's handover code is required$/, () => i18n.t("server.handoverRequired")],
  [/^too many wrong handover codes/, () => i18n.t("server.handoverLocked")],
  [/^to must not be before from$/, () => i18n.t("server.reportOrder")],
  [/^a report covers at most 366 days$/, () => i18n.t("server.reportLength")],
];

/** What the API says of a field in its own words (a validation item's `msg`), said again. */
const SAYS: [RegExp, "future" | "beforeWindowEnd"][] = [
  [/^must be in the future$/, "future"],
  [/^must be before window_end$/, "beforeWindowEnd"],
];

/** The API's own words as a sentence: a known message said again, any other inside "cannot be done now". */
export function serverSentence(detail: string): string {
  for (const [pattern, say] of KNOWN) {
    const m = detail.match(pattern);
    if (m) return say(m);
  }
  return i18n.t("errors.rules", { detail });
}

interface ValidationItem {
  type?: string;
  loc?: (string | number)[];
  msg?: string;
  input?: unknown;
}

const pathOf = (item: ValidationItem) =>
  (item.loc ?? []).filter((p) => !["body", "query", "path"].includes(String(p))).join(".");

/** What the item's `input` names, for a sentence: a list joined, a number in the language's digits. */
function inputText(input: unknown): string {
  if (Array.isArray(input)) return input.join(", ");
  if (typeof input === "number") return input.toLocaleString(i18n.language);
  return String(input ?? "");
}

/** One validation item as words: the field and what is wrong with it, or what is wrong with a whole file. */
function validationLine(item: ValidationItem): string {
  const path = pathOf(item);
  const field = path && i18n.exists(`fields.${path}`) ? String(i18n.t(`fields.${path}` as "fields.amount")) : path;
  const file = `errors.file.${item.type}`;
  if (!path && i18n.exists(file)) {
    return String(i18n.t(file as "errors.file.csv_missing_column", { input: inputText(item.input) }));
  }
  const issue = `errors.issue.${item.type}`;
  const said = SAYS.find(([pattern]) => pattern.test(item.msg ?? ""))?.[1];
  const message = said
    ? i18n.t(`errors.says.${said}`)
    : item.type && i18n.exists(issue)
    ? String(i18n.t(issue as "errors.issue.missing"))
    : String(item.msg ?? "");
  return i18n.t("errors.field", { field: field || i18n.t("errors.request"), message });
}

/** A 400's or 422's items: led by "some fields are not right", unless they say what is wrong with a file. */
function validationProblems(items: ValidationItem[]): string {
  const lines = items.map(validationLine).join("; ");
  const aboutFile = items.every((item) => !pathOf(item) && i18n.exists(`errors.file.${item.type}`));
  return aboutFile ? lines : `${i18n.t("errors.invalid")} ${lines}`;
}

/** What is wrong with one row of an imported CSV file: its cells named, else the database's refusal as a sentence. */
export function importRowProblem(error: { detail: string; items?: ValidationItem[] }): string {
  return error.items?.length ? error.items.map(validationLine).join("; ") : serverSentence(error.detail);
}

export function errorMessage(error: unknown): string {
  if (!(error instanceof ApiError)) return i18n.t("errors.server");
  const detail = (error.body as { detail?: unknown } | null)?.detail;
  const said = typeof detail === "string" ? serverSentence(detail) : null;
  switch (error.status) {
    case 0:
      return i18n.t("errors.network");
    case 400:
      if (Array.isArray(detail)) return validationProblems(detail as ValidationItem[]);
      return said ?? i18n.t("errors.server");
    case 401:
      return i18n.t("errors.unauthorized");
    case 403:
      return i18n.t("errors.forbidden");
    case 404:
      return i18n.t("errors.notFound");
    case 409:
      return said ?? i18n.t("errors.conflict");
    case 422:
      // An address the API could not find on the map comes named, as a validation item.
      if (Array.isArray(detail)) return validationProblems(detail as ValidationItem[]);
      return said ?? i18n.t("errors.server");
    case 429:
      return i18n.t("errors.rateLimited", { seconds: error.retryAfter ?? 10 });
    case 502:
      return i18n.t("errors.gateway");
    case 503:
      return i18n.t("errors.unavailable");
    default:
      return i18n.t("errors.server");
  }
}

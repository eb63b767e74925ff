// Money, dates, distances and durations through Intl, in the language in use. Money is always reais: R$ 1.234,56 in
// Portuguese, R$1,234.56 in English (the English reader's own separators). Dates and times are dd/mm/aaaa HH:mm, 24 h,
// in both languages (one way to write a day in a company whose people read either language) and in the company's
// time zone, not the browser's.
import { i18n, language } from "./i18n/index.ts";

/**
 * The company's time zone. The API does not say it yet: every company is in São Paulo's until it does, and then
 * the panel sets it here once, from the company (setTimeZone), before anything is shown.
 */
let zone = "America/Sao_Paulo";
export const timeZone = () => zone;
export function setTimeZone(next: string) {
  zone = next;
  dateParts.clear();
}

/** The Intl locale of each language. */
const LOCALE = { "pt-BR": "pt-BR", en: "en-US" } as const;
export const locale = () => LOCALE[language()];

const cache = new Map<string, Intl.NumberFormat>();
function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale()} ${JSON.stringify(options)}`;
  let format = cache.get(key);
  if (!format) cache.set(key, format = new Intl.NumberFormat(locale(), options));
  return format;
}

export const formatBRL = (value: number | null | undefined) =>
  value == null ? "—" : numberFormat({ style: "currency", currency: "BRL" }).format(value);

/** A number as a person would type it back into a field: no grouping, the language's decimal separator. */
export const formatInputNumber = (value: number, fractionDigits = 0) =>
  numberFormat({ useGrouping: false, minimumFractionDigits: fractionDigits, maximumFractionDigits: 6 }).format(value);

/** The separator the language uses between thousands (`.` in Portuguese, `,` in English). */
export const groupSeparator = (): "." | "," => (numberFormat({}).format(1000).includes(".") ? "." : ",");

export const formatKm = (metres: number) =>
  numberFormat({ style: "unit", unit: "kilometer", maximumFractionDigits: 1 }).format(metres / 1000);
export const formatMinutes = (seconds: number) =>
  numberFormat({ style: "unit", unit: "minute" }).format(Math.max(1, Math.round(seconds / 60)));
/** Coordinates keep the decimal point in every language, as maps and GPS apps write them. */
export const formatCoordinate = (degrees: number) => degrees.toFixed(5);

const dateParts = new Map<string, Intl.DateTimeFormat>();
function partsOf(iso: string, withSeconds: boolean) {
  const key = String(withSeconds);
  let format = dateParts.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat("pt-BR", {
      timeZone: zone,
      day: "2-digit",
      month: "2-digit",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: withSeconds ? "2-digit" : undefined,
      hourCycle: "h23",
    });
    dateParts.set(key, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(iso))) parts[part.type] = part.value;
  return parts;
}

/** dd/mm/aaaa HH:mm. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const p = partsOf(iso, false);
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}`;
}
/** HH:mm:ss, for what changes by the second (a position sent, a position seen). */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const p = partsOf(iso, true);
  return `${p.hour}:${p.minute}:${p.second}`;
}
/** HH:mm, for an arrival time. */
export function formatClock(iso: string | null | undefined): string {
  if (!iso) return "—";
  const p = partsOf(iso, false);
  return `${p.hour}:${p.minute}`;
}

export const shortId = (id: string) => id.slice(0, 8);

/** What a withdrawal's status badge says: a processing one in doubt says it waits for the gateway. */
export const withdrawalStatusText = (w: { status: "processing" | "completed" | "failed"; in_doubt?: boolean }) =>
  w.status === "processing" && w.in_doubt ? i18n.t("withdrawalInDoubt") : i18n.t(`withdrawalStatus.${w.status}`);

/** A gateway event (PAYMENT_RECEIVED) in words; one this app does not know yet says its code. */
export function gatewayEventName(event: string | null | undefined): string {
  if (!event) return "—";
  const key = `gatewayEvent.${event}`;
  return i18n.exists(key) ? String(i18n.t(key as "gatewayEvent.PAYMENT_RECEIVED")) : i18n.t("gatewayEvent.unknown", {
    code: event,
  });
}

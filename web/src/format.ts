// Money in BRL and times in the browser's own zone.
import { locale, t } from "./i18n/index.ts";

const brl = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" });
const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: "short", timeStyle: "medium" });
const time = new Intl.DateTimeFormat(locale, { timeStyle: "medium" });

export const formatBRL = (value: number | null | undefined) => (value == null ? "—" : brl.format(value));
export const formatDateTime = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : "—");
export const formatTime = (iso: string | null | undefined) => (iso ? time.format(new Date(iso)) : "—");
export const formatKm = (metres: number) =>
  `${(metres / 1000).toLocaleString(locale, { maximumFractionDigits: 1 })} km`;
export const formatMinutes = (seconds: number) => `${Math.max(1, Math.round(seconds / 60))} min`;
export const shortId = (id: string) => id.slice(0, 8);

/** What a withdrawal's status badge says: a processing one in doubt says it waits for the gateway. */
export const withdrawalStatusText = (w: { status: string; in_doubt?: boolean }) =>
  w.status === "processing" && w.in_doubt ? t.withdrawalInDoubt : t.withdrawalStatus[w.status];

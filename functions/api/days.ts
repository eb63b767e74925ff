// Days as the company counts them: in São Paulo's time zone (every company's, until companies have their own;
// the reports' roll-up in SQL uses the same zone). A query bound may be a day (YYYY-MM-DD) or an instant.
import { z } from "zod";

export const COMPANY_TIME_ZONE = "America/Sao_Paulo";

export const Day = z.iso.date();
/** A day (YYYY-MM-DD) or an instant (ISO 8601 with an offset). */
export const DayOrTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

const offsets = new Intl.DateTimeFormat("en-US", { timeZone: COMPANY_TIME_ZONE, timeZoneName: "longOffset" });

/** The zone's offset from UTC at an instant, in minutes (-180 for GMT-03:00). */
function offsetMinutes(at: number): number {
  const name = offsets.formatToParts(at).find((part) => part.type === "timeZoneName")?.value ?? "GMT";
  const match = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  if (!match) return 0;
  return (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

/** When a São Paulo day starts, as an instant. */
export function dayStart(day: string): Date {
  const [year, month, date] = day.split("-").map(Number);
  const midnightUtc = Date.UTC(year, month - 1, date);
  let start = midnightUtc - offsetMinutes(midnightUtc) * 60_000;
  // Once more at the start found, in case the offset changed in between (a daylight saving day).
  start = midnightUtc - offsetMinutes(start) * 60_000;
  return new Date(start);
}

/** The São Paulo day (YYYY-MM-DD) an instant falls on. */
export function dayOf(instant: Date): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: COMPANY_TIME_ZONE }).format(instant);
}

const nextDay = (day: string) => {
  const [year, month, date] = day.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, date + 1)).toISOString().slice(0, 10);
};

/**
 * A bound as instants: a day runs from its start to the next day's start (so `to` includes it); an instant is
 * both bounds itself (`from` includes it, `to` excludes it).
 */
export function dayBounds(value: string): { start: string; end: string } {
  if (Day.safeParse(value).success) {
    return { start: dayStart(value).toISOString(), end: dayStart(nextDay(value)).toISOString() };
  }
  return { start: value, end: value };
}

/** The day a bound falls on: a day itself, or the São Paulo day of an instant. */
export const dayOfBound = (value: string): string => (Day.safeParse(value).success ? value : dayOf(new Date(value)));

/** Today in São Paulo, and the day `days` before it. */
export function recentDays(days: number, now = new Date()): { from: string; to: string } {
  const to = dayOf(now);
  const [year, month, date] = to.split("-").map(Number);
  return { from: new Date(Date.UTC(year, month - 1, date - days)).toISOString().slice(0, 10), to };
}

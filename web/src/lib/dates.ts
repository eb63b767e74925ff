// Dates a person types: dd/mm/aaaa, and dd/mm/aaaa HH:mm (24 h) for a moment in the company's time zone, masked as
// they are typed, in both languages (as src/format.ts writes them). The browser's own date inputs are not used: they
// write a day as the browser's interface language does (mm/dd/yyyy and a 12-hour clock in an English Chrome), whatever
// the page's language. Pure: tests/web/web-input.test.ts reads it.

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** 31/12/2026 as it is typed (8 digits at most). */
export function maskDate(text: string): string {
  const d = digitsOf(text).slice(0, 8);
  return [d.slice(0, 2), d.slice(2, 4), d.slice(4, 8)].filter(Boolean).join("/");
}

/** 31/12/2026 14:30 as it is typed (12 digits at most). */
export function maskDateTime(text: string): string {
  const d = digitsOf(text).slice(0, 12);
  const day = maskDate(d.slice(0, 8));
  const time = [d.slice(8, 10), d.slice(10, 12)].filter(Boolean).join(":");
  return time ? `${day} ${time}` : day;
}

/** The day (YYYY-MM-DD) a dd/mm/aaaa text names, or null when it names none (31/02/2026, 1/1/26). */
export function parseDay(text: string): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text.trim());
  if (!m) return null;
  const [day, month, year] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1900 || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${m[3]}-${m[2]}-${m[1]}`;
}

/** dd/mm/aaaa of a YYYY-MM-DD day. */
export const dayText = (day: string) => `${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)}`;

/** How many milliseconds `zone`'s clocks are ahead of UTC at `instant`. */
function offsetAt(instant: number, zone: string): number {
  const parts: Record<string, number> = {};
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
  for (const part of format.formatToParts(new Date(instant))) parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant (ISO 8601, UTC) that a dd/mm/aaaa HH:mm text names on `zone`'s clocks, or null when it names none
 * (25:00, 31/02). A wall time that a clock change skips is read with the offset in force before it.
 */
export function parseDateTime(text: string, zone: string): string | null {
  const m = /^(\d{2}\/\d{2}\/\d{4}) (\d{2}):(\d{2})$/.exec(text.trim());
  const day = m && parseDay(m[1]);
  if (!m || !day) return null;
  const [hour, minute] = [Number(m[2]), Number(m[3])];
  if (hour > 23 || minute > 59) return null;
  const [year, month, date] = day.split("-").map(Number);
  const wall = Date.UTC(year, month - 1, date, hour, minute);
  // The offset at the wall time read as UTC is right except within a clock change's hours: then the offset at the
  // first guess gives the answer.
  const guess = wall - offsetAt(wall, zone);
  return new Date(wall - offsetAt(guess, zone)).toISOString();
}

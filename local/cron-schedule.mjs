// pg_cron's schedules, read with croner (a maintained cron library) for the
// local stand-in of pg_cron: by local/scheduler.ts, in process, and by the
// extension's cron.schedule() and cron.alter_job(), which run this file with
// Node.js (`node local/cron-schedule.mjs <schedule as hex>` prints the JSON,
// or nothing for an invalid schedule) so that they refuse an invalid schedule
// at once, as pg_cron does. Plain JavaScript, so that Node.js runs it as is.
//
// What pg_cron accepts (its entry.c, Vixie cron's grammar): '[1-59] seconds';
// @reboot (or @restart); the nicknames @yearly ... @hourly; five fields of
// `*`, `n`, `a-b`, lists, `*` or a range with `/step`, names (jan..dec,
// sun..sat), 7 for Sunday, and `$` for the last day of the month. croner reads
// the fields (its `L` stands for `$`); the characters pg_cron does not know
// (croner's `?`, `L`, `W`, `#`) are refused before it. Its types:
// local/cron-schedule.d.mts.
// @ts-self-types="./cron-schedule.d.mts"
import { Buffer } from "node:buffer";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { CronPattern } from "croner";

/** @type {Record<string, string>} */
const NICKNAMES = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** The schedule as pg_cron reads it (a CronSchedule), or null when pg_cron refuses it. */
export function parseSchedule(schedule) {
  const text = schedule.replace(/^[ \t\n]+|[ \t\n]+$/g, "").toLowerCase();
  const interval = /^([0-9]{1,9}) *seconds?$/.exec(text);
  if (interval) {
    const seconds = Number(interval[1]);
    return seconds >= 1 && seconds <= 59 ? { seconds } : null;
  }
  if (text === "@reboot" || text === "@restart") return { reboot: true };
  const fields = (NICKNAMES[text] ?? text).split(/[ \t]+/);
  if (fields.length !== 5) return null;
  const lastDom = fields[2] === "$";
  if (!fields.every((field, i) => /^[0-9a-z*,/-]+$/.test(field) || (i === 2 && lastDom))) return null;
  let pattern;
  try {
    pattern = new CronPattern(lastDom ? fields.with(2, "L").join(" ") : fields.join(" "), undefined, {
      mode: "5-part",
    });
  } catch {
    return null;
  }
  const on = (flags, first) => flags.flatMap((set, i) => (set ? [i + first] : []));
  return {
    minutes: on(pattern.minute, 0),
    hours: on(pattern.hour, 0),
    days: lastDom ? [] : on(pattern.day, 1),
    months: on(pattern.month, 1),
    dows: on(pattern.dayOfWeek, 0),
    dom_star: fields[2].startsWith("*"),
    dow_star: fields[4].startsWith("*"),
    last_dom: lastDom,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const parsed = parseSchedule(Buffer.from(process.argv[2] ?? "", "hex").toString("utf8"));
  if (parsed) process.stdout.write(`${JSON.stringify(parsed)}\n`);
}

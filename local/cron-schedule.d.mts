// The types of local/cron-schedule.mjs (plain JavaScript, so that Node.js runs it as is).

/**
 * A schedule, normalized for the scheduler: `{seconds}` for '[1-59] seconds', `{reboot: true}` for @reboot, or
 * the minutes, hours, days (1-31), months (1-12) and days of week (0-6, Sunday 0) a cron expression runs at. A
 * day matches when its day of month OR its day of week does, unless either field starts with `*` (dom_star,
 * dow_star): then both must (Vixie cron). last_dom: the day field is `$`, the last day of the month.
 */
export interface CronSchedule {
  seconds?: number;
  reboot?: boolean;
  minutes?: number[];
  hours?: number[];
  days?: number[];
  months?: number[];
  dows?: number[];
  dom_star?: boolean;
  dow_star?: boolean;
  last_dom?: boolean;
}

/** The schedule as pg_cron reads it, or null when pg_cron refuses it. */
export function parseSchedule(schedule: string): CronSchedule | null;

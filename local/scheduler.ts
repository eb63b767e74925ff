// The local stand-in for pg_cron's background worker. Every second it reads
// the active rows of cron.job (so new, changed and unscheduled jobs apply at
// the next tick) and starts the jobs that are due, as pg_cron does:
// - '[1-59] seconds' jobs when that long has passed since their last start;
// - cron expressions (read by local/cron-schedule.mjs with croner, as
//   cron.schedule validates them) at each UTC minute they match, the minutes
//   skipped by a slow tick included (up to 5, as Vixie cron);
// - '@reboot' jobs once per start of the scheduler.
// A job never runs twice at once; a run that falls due meanwhile waits for it
// (one pending run at most). Each run opens its own connection to the job's
// database, becomes the job's username (SET SESSION AUTHORIZATION), sends the
// command in one simple-protocol query, and is recorded in
// cron.job_run_details: 'starting', 'running' (with job_pid and start_time),
// then 'succeeded' with "<n> row(s)" or the command tag, or 'failed' with the
// error, and end_time. The database going away is logged once and retried at
// every tick; nothing here throws out of the loop.
import postgres from "postgres";
import { type CronSchedule, parseSchedule } from "./cron-schedule.mjs";

export type { CronSchedule };

/** Whether a parsed cron expression matches the UTC minute starting at `at`. */
export function cronMatches(schedule: CronSchedule, at: Date): boolean {
  const { minutes = [], hours = [], days = [], months = [], dows = [] } = schedule;
  if (!minutes.includes(at.getUTCMinutes()) || !hours.includes(at.getUTCHours())) return false;
  if (!months.includes(at.getUTCMonth() + 1)) return false;
  const lastDay = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate();
  const dom = schedule.last_dom ? at.getUTCDate() === lastDay : days.includes(at.getUTCDate());
  const dow = dows.includes(at.getUTCDay());
  // Vixie cron: when either day field starts with `*`, both must match; otherwise either.
  return schedule.dom_star || schedule.dow_star ? dom && dow : dom || dow;
}

interface JobRow {
  jobid: string;
  schedule: string;
  command: string;
  database: string;
  username: string;
}

interface Task {
  schedule: string;
  parsed: CronSchedule | null;
  lastStart: number;
  running: boolean;
  pending: boolean;
  rebootDone: boolean;
  invalidLogged: boolean;
}

export interface SchedulerOptions {
  /** A superuser's URL of the database holding cron.job (the database name is replaced per job). */
  url: string;
  log: (line: string) => void;
  /** Milliseconds between ticks; 1000 as pg_cron. */
  tickMs?: number;
}

export interface Scheduler {
  stop(): Promise<void>;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

function urlFor(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** What pg_cron records as return_message for a result (GetTaskFeedback). */
function describe(result: unknown): string {
  type Result = unknown[] & { command?: string; count?: number | null; columns?: unknown[] };
  let last = result as Result;
  // Several statements give one result each, the last one counts.
  if (Array.isArray(last) && last.length > 0 && Array.isArray(last[last.length - 1]) && last.command === undefined) {
    last = last[last.length - 1] as Result;
  }
  if (last.columns && last.columns.length > 0) return `${last.length} ${last.length === 1 ? "row" : "rows"}`;
  const command = last.command ?? "";
  if (last.count === null || last.count === undefined) return command;
  return command === "INSERT" ? `INSERT 0 ${last.count}` : `${command} ${last.count}`;
}

export function startScheduler(options: SchedulerOptions): Scheduler {
  const { log } = options;
  const tickMs = options.tickMs ?? 1000;
  const sql = postgres(options.url, {
    max: 2,
    connect_timeout: 5,
    // postgres.js leaves a failed type lookup on a new connection uncaught (porsager/postgres #1192);
    // nothing here binds arrays, so it is not needed.
    fetch_types: false,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: "pg_cron scheduler" },
  });
  const tasks = new Map<string, Task>();
  const runs = new Set<Promise<void>>();
  let lastMinute: number | undefined;
  let stopped = false;
  let down = false;
  let wake: (() => void) | undefined;

  async function record(query: () => Promise<unknown>): Promise<void> {
    try {
      await query().catch(async () => {
        // A connection that died with an outage fails its first query: once more, on a fresh one.
        await new Promise((resolve) => setTimeout(resolve, 250));
        await query();
      });
    } catch (error) {
      log(`pg_cron (local): could not record a job run: ${(error as Error).message}`);
    }
  }

  async function run(job: JobRow, task: Task, now: number): Promise<void> {
    task.running = true;
    task.pending = false;
    task.lastStart = now;
    let runid: string | undefined;
    try {
      const [row] = await sql<{ runid: string }[]>`
        insert into cron.job_run_details (jobid, database, username, command, status)
        values (${job.jobid}, ${job.database}, ${job.username}, ${job.command}, 'starting')
        returning runid`;
      runid = row.runid;
    } catch (error) {
      log(`pg_cron (local): job ${job.jobid} not started: ${(error as Error).message}`);
      task.running = false;
      return;
    }
    const client = postgres(urlFor(options.url, job.database), {
      max: 1,
      connect_timeout: 10,
      // postgres.js leaves a failed type lookup on a new connection uncaught (porsager/postgres #1192);
      // nothing here binds arrays, so it is not needed.
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: "pg_cron" },
    });
    let status = "failed";
    let message: string;
    try {
      await client.unsafe(`set session authorization ${quoteIdent(job.username)}`);
      const [{ pid }] = await client<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await record(() =>
        sql`update cron.job_run_details set status = 'running', job_pid = ${pid}, start_time = now()
            where runid = ${runid!}`
      );
      message = describe(await client.unsafe(job.command).simple());
      status = "succeeded";
    } catch (error) {
      message = `ERROR:  ${(error as Error).message}`;
    } finally {
      await client.end({ timeout: 1 }).catch(() => {});
    }
    await record(() =>
      sql`update cron.job_run_details
          set status = ${status}, return_message = ${message}, end_time = now(),
              start_time = coalesce(start_time, now())
          where runid = ${runid!}`
    );
    task.running = false;
  }

  function start(job: JobRow, task: Task, now: number): void {
    if (task.running || stopped) return;
    const promise = run(job, task, now).catch((error) => log(`pg_cron (local): job ${job.jobid}: ${error}`));
    runs.add(promise);
    promise.finally(() => runs.delete(promise));
  }

  async function tick(firstTick: boolean): Promise<void> {
    let jobs: JobRow[];
    try {
      jobs = await sql<JobRow[]>`
        select jobid, schedule, command, database, username from cron.job where active order by jobid`;
    } catch (error) {
      const message = (error as Error).message;
      // Before the migration that creates pg_cron: nothing to run.
      if (/schema "cron" does not exist|relation "cron.job" does not exist/.test(message)) return;
      if (!down) log(`pg_cron (local): cannot read cron.job (${message}); retrying every second`);
      down = true;
      return;
    }
    if (down) log("pg_cron (local): reading cron.job again");
    down = false;

    const now = Date.now();
    const minute = Math.floor(now / 60_000);
    const dueMinutes: number[] = [];
    if (lastMinute !== undefined && minute > lastMinute) {
      // The minutes since the last tick; after a jump of more than 5, only this one.
      const from = minute - lastMinute > 5 ? minute : lastMinute + 1;
      for (let m = from; m <= minute; m++) dueMinutes.push(m);
    }
    if (lastMinute === undefined || minute > lastMinute) lastMinute = minute;

    const seen = new Set<string>();
    for (const job of jobs) {
      seen.add(job.jobid);
      let task = tasks.get(job.jobid);
      if (!task) {
        task = {
          schedule: job.schedule,
          parsed: parseSchedule(job.schedule),
          lastStart: 0,
          running: false,
          pending: false,
          rebootDone: !firstTick,
          invalidLogged: false,
        };
        tasks.set(job.jobid, task);
      }
      if (task.schedule !== job.schedule) {
        task.schedule = job.schedule;
        task.parsed = parseSchedule(job.schedule);
        task.invalidLogged = false;
      }
      const parsed = task.parsed;
      if (!parsed) {
        if (!task.invalidLogged) log(`pg_cron (local): invalid schedule for job ${job.jobid}: ${job.schedule}`);
        task.invalidLogged = true;
        continue;
      }
      if (parsed.seconds) {
        // Measured from the tick that started the last run; half a tick of slack keeps the cadence.
        if (now - task.lastStart >= parsed.seconds * 1000 - tickMs / 2) task.pending = true;
      } else if (parsed.reboot) {
        if (!task.rebootDone) task.pending = true;
        task.rebootDone = true;
      } else if (dueMinutes.some((m) => cronMatches(parsed, new Date(m * 60_000)))) {
        task.pending = true;
      }
      if (task.pending) start(job, task, now);
    }
    for (const [jobid, task] of tasks) if (!seen.has(jobid) && !task.running) tasks.delete(jobid);
  }

  const loop = (async () => {
    let first = true;
    while (!stopped) {
      try {
        await tick(first);
        first = false;
      } catch (error) {
        log(`pg_cron (local): ${error}`);
      }
      // Ticks on the second (the job runs line up with the clock).
      const delay = tickMs - (Date.now() % tickMs) + 5;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await Promise.race([Promise.allSettled([...runs]), new Promise((r) => setTimeout(r, 2000))]);
      await sql.end({ timeout: 1 }).catch(() => {});
    },
  };
}

// The local stand-ins of pg_cron, pg_net and Supabase Vault (local/extensions/,
// local/scheduler.ts, local/net-worker.ts): jobs scheduled with cron.schedule
// run on their schedule as their user and are recorded in cron.job_run_details;
// net.http_* requests reach the network and their answers land in
// net._http_response; the scheduled job of the schema (supabase/schemas/10_jobs.sql),
// written as on a hosted project, runs unchanged against the local stack.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cronMatches, type CronSchedule } from "../../../local/scheduler.ts";
import { db, stack } from "../../support/api.ts";
import { waitFor } from "../../support/wait.ts";
import { projectRoot } from "../../support/stack.ts";

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

// A loopback HTTP server standing for the services the jobs call.
let server: Server;
let baseUrl: string;
const received: Received[] = [];
let delayMs = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The array when it has something, for `waitFor`. */
const some = <T>(items: T[]) => items.length > 0 && items;
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
const receivedOn = (path: string) => received.filter((r) => r.path.startsWith(path));

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      method: req.method!,
      path: req.url!,
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    });
    if (delayMs) await sleep(delayMs);
    res.writeHead(201, { "content-type": "application/json", "x-reply": "from-fake" });
    res.end(JSON.stringify({ received: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // As the migrations do (and a no-op once they have).
  await db().unsafe(`create extension if not exists pg_net with schema extensions;
                     create extension if not exists pg_cron with schema pg_catalog;`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function runsOf(jobid: string) {
  return await db()<
    {
      runid: string;
      status: string;
      return_message: string;
      job_pid: number | null;
      username: string;
      start_time: Date | null;
      end_time: Date | null;
    }[]
  >`
    select runid, status, return_message, job_pid, username, start_time, end_time
    from cron.job_run_details where jobid = ${jobid} order by runid`;
}

describe("pg_cron stand-in", () => {
  test("a '1 seconds' job calling net.http_post reaches the server with its headers and body, is recorded, and stops when unscheduled", async () => {
    const name = unique("post-every-second");
    const path = `/${name}`;
    const [{ schedule: jobid }] = await db()<{ schedule: string }[]>`
      select cron.schedule(${name}, '1 seconds', ${`select net.http_post(
        url := '${baseUrl}${path}',
        body := '{"hello": "world", "n": 1}'::jsonb,
        params := '{"q": "a b&c"}'::jsonb,
        headers := '{"Content-Type": "application/json", "X-Test": "scheduled"}'::jsonb,
        timeout_milliseconds := 4000)`})`;
    try {
      const started = Date.now();
      const [first] = await waitFor("the first call", () => some(receivedOn(path)));
      expect(Date.now() - started).toBeLessThan(5000);
      expect(first.method).toBe("POST");
      expect(first.path).toBe(`${path}?q=a%20b%26c`);
      expect(first.headers["x-test"]).toBe("scheduled");
      expect(first.headers["content-type"]).toBe("application/json");
      expect(first.headers["user-agent"]).toMatch(/^pg_net\//);
      expect(JSON.parse(first.body)).toEqual({ hello: "world", n: 1 });

      // The answer is in net._http_response as pg_net writes it.
      const response = await waitFor("a stored response", async () => {
        const [row] = await db()<
          {
            status_code: number;
            content: string;
            content_type: string;
            headers: Record<string, string>;
            timed_out: boolean;
            error_msg: string | null;
          }[]
        >`
          select status_code, content, content_type, headers, timed_out, error_msg
          from net._http_response where created > now() - interval '10 seconds' and content like '%received%'
          order by id desc limit 1`;
        return row;
      });
      expect(response).toMatchObject({
        status_code: 201,
        content_type: "application/json",
        timed_out: false,
        error_msg: null,
      });
      expect(JSON.parse(response.content)).toEqual({ received: true });
      expect(response.headers["x-reply"]).toBe("from-fake");

      // A second run a second later: the job keeps its cadence.
      await waitFor("a second call", () => receivedOn(path).length >= 2);
      const runs = await waitFor("two recorded runs", async () => {
        const rows = (await runsOf(jobid)).filter((r) => r.status === "succeeded");
        return rows.length >= 2 && rows;
      });
      for (const run of runs) {
        expect(run.return_message).toBe("1 row");
        expect(run.username).toBe("postgres");
        expect(run.job_pid).toBeGreaterThan(0);
        expect(run.start_time!.getTime()).toBeLessThanOrEqual(run.end_time!.getTime());
      }
      const [queue] = await db()`select count(*)::int as n from net.http_request_queue`;
      expect(queue.n).toBe(0);
    } finally {
      const [{ unschedule }] = await db()`select cron.unschedule(${name})`;
      expect(unschedule).toBe(true);
    }
    // A run already under way may still land; after that, nothing more.
    await sleep(1500);
    const calls = receivedOn(path).length;
    const recorded = (await runsOf(jobid)).length;
    await sleep(2500);
    expect(receivedOn(path).length).toBe(calls);
    expect((await runsOf(jobid)).length).toBe(recorded);
    expect(await db()`select 1 from cron.job where jobid = ${jobid}`).toHaveLength(0);
  });

  test("a failing job is recorded as failed with its error, and a job runs as its username", async () => {
    const failing = unique("fails");
    const [{ schedule: failingId }] = await db()`select cron.schedule(${failing}, '1 seconds', 'select 1/0')`;
    // schedule_in_database may name another role (superuser only), as on pg_cron.
    const [{ schedule_in_database: userJobId }] = await db()`
      select cron.schedule_in_database(${unique("as-user")}, '1 seconds',
        'do $$ begin raise exception ''running as %'', current_user; end $$',
        'postgres', 'authenticator')`;
    try {
      const [failed] = await waitFor(
        "a failed run",
        async () => some((await runsOf(failingId)).filter((r) => r.status === "failed")),
      );
      expect(failed.return_message).toContain("division by zero");
      expect(failed.end_time).not.toBeNull();

      const [run] = await waitFor(
        "the authenticator's run",
        async () => some((await runsOf(userJobId)).filter((r) => r.end_time)),
      );
      expect(run).toMatchObject({ username: "authenticator", status: "failed" });
      expect(run.return_message).toContain("running as authenticator");
    } finally {
      await db()`select cron.unschedule(${failing})`;
      await db()`select cron.unschedule(${userJobId}::bigint)`;
    }
  });

  test("cron.schedule validates the schedule, upserts by name, and alter_job pauses a job", async () => {
    await expect(db()`select cron.schedule('bad', '61 * * * *', 'select 1')`).rejects.toThrow(
      /invalid schedule: 61 \* \* \* \*/,
    );
    await expect(db()`select cron.schedule('bad', '60 seconds', 'select 1')`).rejects.toThrow(/invalid schedule/);
    await expect(db()`select cron.unschedule('no-such-job')`).rejects.toThrow(
      /could not find valid entry for job 'no-such-job'/,
    );

    const name = unique("paused");
    const path = `/${name}`;
    const command = `select net.http_get('${baseUrl}${path}')`;
    const [{ schedule: id }] = await db()`select cron.schedule(${name}, '0 0 1 1 *', ${command})`;
    const [{ schedule: again }] = await db()`select cron.schedule(${name}, '1 seconds', ${command})`;
    expect(again).toBe(id);
    const [job] = await db()`select schedule, active, username, database, jobname from cron.job where jobid = ${id}`;
    expect(job).toEqual({
      schedule: "1 seconds",
      active: true,
      username: "postgres",
      database: "postgres",
      jobname: name,
    });
    try {
      await waitFor("the job to run", () => receivedOn(path).length > 0);
      await db()`select cron.alter_job(${id}::bigint, active := false)`;
      await sleep(1500);
      const calls = receivedOn(path).length;
      await sleep(2000);
      expect(receivedOn(path).length).toBe(calls);
      // Back on, it runs again without a restart.
      await db()`select cron.alter_job(${id}::bigint, schedule := '2 seconds', active := true)`;
      await waitFor("the job to run again", () => receivedOn(path).length > calls);
    } finally {
      await db()`select cron.unschedule(${id}::bigint)`;
    }
  });

  test("cron expressions match the minutes pg_cron runs them at", async () => {
    const parse = async (schedule: string) =>
      (await db()<{ parsed: CronSchedule | null }[]>`select cron._parse_schedule(${schedule}) as parsed`)[0].parsed;
    const at = (iso: string) => new Date(iso);

    const everyFive = (await parse("*/5 * * * *"))!;
    expect(cronMatches(everyFive, at("2026-11-23T12:10:00Z"))).toBe(true);
    expect(cronMatches(everyFive, at("2026-11-23T12:11:00Z"))).toBe(false);

    const lists = (await parse("1-10/3,20 2 * jan-mar mon-fri"))!;
    expect(lists.minutes).toEqual([1, 4, 7, 10, 20]);
    expect(cronMatches(lists, at("2026-01-05T02:07:00Z"))).toBe(true); // a Monday in January
    expect(cronMatches(lists, at("2026-01-04T02:07:00Z"))).toBe(false); // a Sunday
    expect(cronMatches(lists, at("2026-04-06T02:07:00Z"))).toBe(false); // April

    // Both day fields restricted: either matches (Vixie cron).
    const domOrDow = (await parse("0 0 13 * 5"))!;
    expect(cronMatches(domOrDow, at("2026-11-13T00:00:00Z"))).toBe(true); // the 13th (a Friday)
    expect(cronMatches(domOrDow, at("2026-11-20T00:00:00Z"))).toBe(true); // a Friday
    expect(cronMatches(domOrDow, at("2026-11-14T00:00:00Z"))).toBe(false);

    const lastDay = (await parse("30 23 $ * *"))!;
    expect(cronMatches(lastDay, at("2026-02-28T23:30:00Z"))).toBe(true);
    expect(cronMatches(lastDay, at("2026-02-27T23:30:00Z"))).toBe(false);

    expect(await parse("@hourly")).toEqual(await parse("0 * * * *"));
    expect(await parse("7 * * * sun")).toEqual(await parse("7 * * * 7"));
    expect(await parse("30 seconds")).toEqual({ seconds: 30 });
    for (
      const bad of ["* * * *", "1/20 * * * *", "0 24 * * *", "0 0 0 * *", "5-1 * * * *", "0 seconds", "every minute"]
    ) {
      expect(await parse(bad), bad).toBeNull();
    }
  });
});

describe("pg_net stand-in", () => {
  test("a request to a closed port records pg_net's error, and one slower than its timeout records timed_out", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const [{ http_get: refusedId }] = await db()`select net.http_get(${`http://127.0.0.1:${closedPort}/`})`;
    const refused = await waitFor(
      "the refused response",
      async () => (await db()`select * from net._http_response where id = ${refusedId}`)[0],
    );
    expect(refused).toMatchObject({ status_code: null, timed_out: false, error_msg: "Couldn't connect to server" });
    expect(await db()`select net._http_collect_response(${refusedId}::bigint) as r`).toEqual([{
      r: `(ERROR,"Couldn't connect to server",)`,
    }]);

    delayMs = 2000;
    try {
      const [{ http_post: slowId }] = await db()`
        select net.http_post(${`${baseUrl}/slow`}, '{}'::jsonb, timeout_milliseconds := 300)`;
      const slow = await waitFor(
        "the timed-out response",
        async () => (await db()`select * from net._http_response where id = ${slowId}`)[0],
      );
      expect(slow.timed_out).toBe(true);
      expect(slow.status_code).toBeNull();
      expect(slow.error_msg).toMatch(/^Timeout of 300 ms reached/);
    } finally {
      delayMs = 0;
    }
  });
});

describe("the scheduled job of the migrations", () => {
  test("the stack stores the Vault secrets it reads, for postgres only", async () => {
    const secrets = await db()<{ name: string; decrypted_secret: string }[]>`
      select name, decrypted_secret from vault.decrypted_secrets
      where name in ('project_url', 'service_role_key') order by name`;
    expect(secrets).toEqual([
      { name: "project_url", decrypted_secret: stack().apiUrl },
      { name: "service_role_key", decrypted_secret: stack().serviceRoleKey },
    ]);
    for (const role of ["anon", "authenticated", "service_role"]) {
      const [row] = await db()`
        select has_table_privilege(${role}, 'vault.decrypted_secrets', 'select') as view,
               has_table_privilege(${role}, 'vault.secrets', 'select') as tab,
               has_function_privilege(${role}, 'vault.create_secret(text, text, text, uuid)', 'execute') as fn`;
      expect(row, role).toEqual({ view: false, tab: false, fn: false });
    }
    await expect(
      db().begin(async (tx) => {
        await tx`set local role service_role`;
        await tx`select decrypted_secret from vault.decrypted_secrets`;
      }),
    ).rejects.toThrow(/permission denied/);
  });

  test("runs verbatim: the reconcile call carries the project URL, the service role key and an empty body", async () => {
    const [before] =
      await db()`select jobid, schedule, command, active from cron.job where jobname = 'reconcile-with-gateway'`;
    // The job's statement as the schema file declares it, unchanged (scheduling it again changes nothing else).
    const schema = readFileSync(resolve(projectRoot, "supabase/schemas/10_jobs.sql"), "utf8");
    const migration = /select cron\.schedule\('reconcile-with-gateway'.*?\$\$\);/s.exec(schema)![0];
    const [{ id: projectUrlId }] = await db()`select id from vault.secrets where name = 'project_url'`;
    try {
      await db().unsafe(migration).simple();
      const [job] =
        await db()`select jobid, schedule, username, database, active from cron.job where jobname = 'reconcile-with-gateway'`;
      expect(job).toMatchObject({ schedule: "*/5 * * * *", username: "postgres", database: "postgres", active: true });

      // Point the project URL at the loopback server and run the job now rather than in five minutes.
      await db()`select vault.update_secret(${projectUrlId}, ${baseUrl})`;
      await db()`select cron.alter_job(${job.jobid}::bigint, schedule := '1 seconds')`;
      const path = "/functions/v1/gateway-webhook/reconcile";
      const [call] = await waitFor("the reconcile call", () => some(receivedOn(path)));
      expect(call.method).toBe("POST");
      expect(call.headers.authorization).toBe(`Bearer ${stack().serviceRoleKey}`);
      expect(call.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(call.body)).toEqual({});
      const [run] = await waitFor(
        "the recorded run",
        async () => (await runsOf(job.jobid)).filter((r) => r.status === "succeeded"),
      );
      expect(run.return_message).toBe("1 row");
    } finally {
      await db()`select vault.update_secret(${projectUrlId}, ${stack().apiUrl})`;
      if (before) {
        await db()`select cron.alter_job(${before.jobid}::bigint, schedule := ${before.schedule}, command := ${before.command}, active := ${before.active})`;
      } else await db()`select cron.unschedule('reconcile-with-gateway')`;
    }
  });
});

// The local pg_cron scheduler and pg_net worker when the database goes away:
// they log it once, throw nothing (vitest fails a file on any unhandled
// rejection), and pick up again by themselves when it returns. They run here
// in the test process against a database of their own (so the stack's own
// scheduler, which reads the `postgres` database, never runs these jobs),
// reached through a loopback TCP proxy that the test cuts and restores.
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startNetWorker } from "../../../local/net-worker.ts";
import { startScheduler } from "../../../local/scheduler.ts";
import { db, stack } from "../../support/api.ts";
import { waitFor } from "../../support/wait.ts";

const DATABASE = "scheduler_outage_test";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP proxy to the stack's Postgres that can be cut (connections reset, port closed) and restored. */
function startProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let port = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  return {
    get port() {
      return port;
    },
    up: () =>
      new Promise<void>((resolve) =>
        server.listen(port, "127.0.0.1", () => {
          port = (server.address() as AddressInfo).port;
          resolve();
        })
      ),
    down: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let http: HttpServer;
let calls = 0;
let hookUrl: string;

beforeAll(async () => {
  http = createHttpServer((_req, res) => {
    calls++;
    res.end("ok");
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/outage`;

  await db().unsafe(`drop database if exists ${DATABASE} with (force)`);
  await db().unsafe(`create database ${DATABASE}`);
  const own = postgres(stack().dbUrl.replace(/\/postgres$/, `/${DATABASE}`), { max: 1, onnotice: () => {} });
  try {
    await own.unsafe(`create schema extensions;
      create extension pg_net with schema extensions;
      create extension pg_cron with schema pg_catalog;`);
    await own`select cron.schedule('outage', '1 seconds', ${`select net.http_post('${hookUrl}')`})`;
  } finally {
    await own.end();
  }
});

afterAll(async () => {
  await new Promise((resolve) => http.close(resolve));
  await db().unsafe(`drop database if exists ${DATABASE} with (force)`);
});

test("the scheduler and the net worker survive the database going away and resume when it returns", async () => {
  const target = new URL(stack().dbUrl);
  const proxy = startProxy({ host: target.hostname, port: Number(target.port) });
  await proxy.up();
  const url = `postgresql://postgres:postgres@127.0.0.1:${proxy.port}/${DATABASE}`;
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const scheduler = startScheduler({ url, log });
  const worker = startNetWorker({ url, log });
  try {
    await waitFor("the first call", () => calls > 0, 6000);

    await proxy.down();
    await sleep(3500);
    const outage = calls;
    expect(lines.filter((l) => l.includes("cannot read cron.job"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("cannot read net.http_request_queue"))).toHaveLength(1);
    // Said once, not at every tick.
    expect(lines.length).toBeLessThanOrEqual(6);

    const own = postgres(stack().dbUrl.replace(/\/postgres$/, `/${DATABASE}`), { max: 1, onnotice: () => {} });
    const [{ before }] = await own`select coalesce(max(id), 0)::int as before from net._http_response`;
    await proxy.up();
    await waitFor("calls after the database returned", () => calls > outage + 1, 15_000);
    // Their answers are stored as well.
    await waitFor("responses stored after the database returned", async () => {
      const [{ n }] = await own`select count(*)::int as n from net._http_response where id > ${before}`;
      return n >= 2;
    }, 5000);
    expect(lines.some((l) => l.includes("reading cron.job again"))).toBe(true);
    expect(lines.some((l) => l.includes("reading net.http_request_queue again"))).toBe(true);
    // The runs after the outage succeed again.
    try {
      const [last] =
        await own`select status from cron.job_run_details where end_time is not null order by runid desc limit 1`;
      expect(last.status).toBe("succeeded");
    } finally {
      await own.end();
    }
  } finally {
    const stopped = Date.now();
    await Promise.all([scheduler.stop(), worker.stop()]);
    expect(Date.now() - stopped).toBeLessThan(5000);
    await proxy.down();
  }
});

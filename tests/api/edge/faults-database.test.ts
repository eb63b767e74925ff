// The stack keeps answering when the database does not: every table a request
// needs locked, and Postgres killed under load. A stack of its own
// (tests/support/stack.ts), since these faults would disturb the shared one.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { createServer, type Server } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OwnStack, passwordSignIn, processes, sleep, startOwnStack } from "../../support/stack.ts";

let stack: OwnStack;
let token: string;
let admin: postgres.Sql;

// The seed's demo company owner (supabase/seed.sql).
const OWNER = { email: "owner@demo.test", password: "demo-owner-pass" };
// Authenticated endpoints that read the database, each documented with 503.
const ENDPOINTS = ["/api/v1/deliveries", "/api/v1/drivers", "/api/v1/companies/me"];

interface Sample {
  path: string;
  status: number | "hung" | "error";
  ms: number;
  at: number;
}

async function timed(url: string, init: RequestInit = {}): Promise<Omit<Sample, "path">> {
  const at = Date.now();
  try {
    // 15 s is "hung": far past the 5 s the stack promises.
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - at, at };
  } catch (error) {
    return { status: (error as Error).name === "TimeoutError" ? "hung" : "error", ms: Date.now() - at, at };
  }
}

/** `clients` callers, each calling the endpoints in turn until stop() (with a short pause, as a retrying client does). */
function load(clients: number) {
  const samples: Sample[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async (_, i) => {
    for (let n = i; running; n++) {
      const path = ENDPOINTS[n % ENDPOINTS.length];
      samples.push({
        path,
        ...(await timed(`${stack.apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })),
      });
      await sleep(50);
    }
  });
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** /health every 200 ms until stop(). */
function healthProbe() {
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      samples.push({ path: "/health", ...(await timed(`${stack.apiUrl}/health`)) });
      await sleep(200);
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
    },
  };
}

function summary(samples: Sample[]): string {
  const counts: Record<string, number> = {};
  for (const s of samples) counts[s.status] = (counts[s.status] ?? 0) + 1;
  return `${JSON.stringify(counts)}, slowest ${Math.max(0, ...samples.map((s) => s.ms))} ms`;
}

beforeAll(async () => {
  // The Realtime probe below joins a public channel, which config.toml's private_only refuses.
  stack = await startOwnStack({ env: { REALTIME_PRIVATE_ONLY: "false" } });
  token = await passwordSignIn(stack, OWNER.email, OWNER.password);
  admin = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await admin?.end({ timeout: 1 }).catch(() => {});
  await stack?.stop();
});

describe("every pool connection busy", () => {
  it("a locked table makes requests answer 503 within 5 s instead of queueing, then recovers", async () => {
    for (const path of ENDPOINTS) {
      const res = await fetch(`${stack.apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, path).toBe(200);
    }
    // Held for 8 s: longer than any request may wait. Every endpoint above reads one of these.
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const lock = admin.begin(async (tx) => {
      await tx`lock table public.deliveries, public.drivers, public.companies in access exclusive mode`;
      locked();
      await sleep(8_000);
    });
    try {
      await isLocked;
      // 30 callers at once: more than the pool's 10 connections, so most wait for one.
      const started = Date.now();
      const burst = Promise.all(
        Array.from(
          { length: 30 },
          (_, i) =>
            timed(`${stack.apiUrl}${ENDPOINTS[i % ENDPOINTS.length]}`, {
              headers: { authorization: `Bearer ${token}` },
            }),
        ),
      );
      // /health, while the pool is busy with them.
      await sleep(300);
      const health = await timed(`${stack.apiUrl}/health`);
      const answers = await burst;
      expect(Date.now() - started).toBeLessThan(7_000);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.ms).toBeLessThan(5_000);
      }
      expect(health.status).toBe(503);
      expect(health.ms).toBeLessThan(1_000);
    } finally {
      await lock;
    }
    // Nothing leaked: every connection came back to the pool.
    const after = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) =>
          timed(`${stack.apiUrl}${ENDPOINTS[i % ENDPOINTS.length]}`, { headers: { authorization: `Bearer ${token}` } }),
      ),
    );
    expect(after.map((a) => a.status)).toEqual(after.map(() => 200));
    expect((await timed(`${stack.apiUrl}/health`)).status).toBe(200);
    await admin.end({ timeout: 1 });
  }, 60_000);
});

describe("Postgres killed under load", () => {
  let supabase: SupabaseClient;
  const received: unknown[] = [];

  afterAll(async () => {
    await supabase?.removeAllChannels();
  });

  /** Broadcasts from the database (realtime.send) until the subscribed client has one; false after `ms`. */
  async function broadcastArrives(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    const before = received.length;
    while (Date.now() < deadline) {
      const sql = postgres(stack.dbUrl, { max: 1, connect_timeout: 2, onnotice: () => {} });
      try {
        await sql`select realtime.send(${sql.json({ at: Date.now() })}, 'probe', 'faults-probe', false)`;
      } catch { /* not back yet */ }
      await sql.end({ timeout: 1 }).catch(() => {});
      await sleep(500);
      if (received.length > before) return true;
    }
    return false;
  }

  it("answers every request within 5 s and /health within 1 s, never exits, and recovers by itself", async () => {
    supabase = createClient(stack.apiUrl, stack.anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
    const subscribed = new Promise<string>((done) => {
      supabase.channel("faults-probe", { config: { private: false } })
        .on("broadcast", { event: "probe" }, (message) => received.push(message.payload))
        .subscribe((status) => status === "SUBSCRIBED" && done(status));
    });
    expect(await subscribed).toBe("SUBSCRIBED");
    expect(await broadcastArrives(10_000)).toBe(true);

    const traffic = load(20);
    const health = healthProbe();
    await sleep(1_500);

    // kill -9 of the postmaster and every process it started.
    const postmaster = stack.postmasterPid();
    const server = [postmaster, ...processes().filter((p) => p.ppid === postmaster).map((p) => p.pid)];
    const killedAt = Date.now();
    for (const pid of server) {
      try {
        process.kill(pid, "SIGKILL");
      } catch { /* a backend that ended meanwhile */ }
    }
    // The stack starts Postgres again by itself (after 1 s); holding its port from the moment the server
    // is gone keeps the database away for 8 s, as a server that takes that long to come back would.
    // Connections to it are dropped at once.
    const blocker: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((done, fail) => {
      const attempt = (tries: number) => {
        blocker.once("error", (error) => (tries > 0 ? setTimeout(() => attempt(tries - 1), 5) : fail(error)));
        blocker.listen(stack.dbPort, "127.0.0.1", () => done());
      };
      attempt(100);
    });
    await sleep(8_000);
    await new Promise((done) => blocker.close(done));
    const releasedAt = Date.now();

    // Back by itself: /health 200 again.
    let healthy = false;
    while (!healthy && Date.now() - releasedAt < 60_000) {
      healthy = (await timed(`${stack.apiUrl}/health`)).status === 200;
      if (!healthy) await sleep(250);
    }
    const backAt = Date.now();
    await sleep(1_000);
    await traffic.stop();
    await health.stop();

    expect(stack.exited(), stack.output().slice(-2000)).toBe(false);
    expect(healthy, `/health never came back:\n${stack.output().slice(-2000)}`).toBe(true);

    const report = `requests ${summary(traffic.samples)}; health ${summary(health.samples)}`;
    // No request hangs or fails at the HTTP level; each is an answer of the API within 5 s.
    for (const s of traffic.samples) {
      expect([200, 503], `${s.path} ${report}`).toContain(s.status);
      expect(s.ms, `${s.path} ${report}`).toBeLessThan(5_000);
    }
    for (const s of health.samples) {
      expect([200, 503], report).toContain(s.status);
      expect(s.ms, report).toBeLessThan(1_000);
    }
    // The outage was seen, and the answers to it were 503. (A request during the outage waits out its 3.5 s
    // budget, so each of the 20 clients fits one or two whole requests into the 8 s window.)
    const during = traffic.samples.filter((s) => s.at > killedAt + 100 && s.at + s.ms < releasedAt);
    expect(during.length, report).toBeGreaterThanOrEqual(10);
    expect(during.every((s) => s.status === 503), report).toBe(true);
    expect(
      health.samples.filter((s) => s.at > killedAt + 100 && s.at + s.ms < releasedAt).every((s) => s.status === 503),
    )
      .toBe(true);
    expect(traffic.samples.filter((s) => s.at > backAt).some((s) => s.status === 200), report).toBe(true);

    // Everything works again: sign-in, the API, and Realtime's broadcasts (its LISTEN came back).
    const fresh = await passwordSignIn(stack, OWNER.email, OWNER.password);
    const res = await fetch(`${stack.apiUrl}/api/v1/deliveries`, { headers: { authorization: `Bearer ${fresh}` } });
    expect(res.status).toBe(200);
    expect(await broadcastArrives(20_000)).toBe(true);
    // Nothing escaped as an uncaught error of the database driver.
    expect(stack.output()).not.toMatch(/unhandled_rejection|uncaught_error|Uncaught/);
    console.log(`Postgres killed under 20 clients: ${report}`);
  }, 120_000);
});

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// A plan job whose worker dies (docs/routes.md, Jobs): on a stack of its own, a plan running as a job (202) is cut off
// by kill -9 of the server that runs it. After the restart the job is not left `running` for ever: once its lease runs
// out (30 s without a word from a worker) it answers `failed` with the reason, and a new plan of the same deliveries
// runs to the end (nothing of the dead one holds them).
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { type OwnStack, passwordSignIn, processes, sleep, startOwnStack } from "../../support/stack.ts";

const PASSWORD = "correct-horse-battery";
const SE = { lat: -23.5505, lng: -46.6333 };
let stack: OwnStack;

async function call(path: string, token: string, body?: unknown) {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

afterAll(async () => {
  await stack?.stop();
});

/** kill -9 of Postgres (reaped first, as tests/api/cash/cash-day-under-kill.test.ts says why) and of the server. */
async function killStack() {
  const postmaster = stack.postmasterPid();
  const server = [
    postmaster,
    ...processes().filter((p) => p.ppid === postmaster).map((p) => p.pid),
  ];
  for (const pid of server) {
    try {
      process.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (
    const until = Date.now() + 10_000;
    server.some(alive) && Date.now() < until;
  ) await sleep(20);
  stack.child.kill("SIGKILL");
  await new Promise((done) =>
    stack.child.exitCode !== null || stack.child.signalCode !== null ? done(null) : stack.child.once("exit", done)
  );
}

describe("a plan job whose worker is killed", () => {
  it(
    "ends failed with the reason once its lease runs out, and the deliveries can be planned again",
    async () => {
      stack = await startOwnStack();
      const ownerEmail = `owner-${randomUUID().slice(0, 8)}@test.example`;
      const registered = await fetch(
        `${stack.apiUrl}/api/v1/companies/register`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            company_name: "Plano interrompido",
            owner_name: "Dona",
            email: ownerEmail,
            password: PASSWORD,
          }),
        },
      );
      expect(registered.status).toBe(201);
      let owner = await passwordSignIn(stack, ownerEmail, PASSWORD);
      const driver = await call("/api/v1/drivers", owner, {
        name: "Rita",
        email: `driver-${randomUUID().slice(0, 8)}@test.example`,
        password: PASSWORD,
      });
      expect(driver.status).toBe(201);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await call("/api/v1/deliveries", owner, {
          origin_address: "Praça da Sé",
          origin: SE,
          destination_address: `Rua ${i}`,
          destination: {
            lat: SE.lat - 0.005 * (i + 1),
            lng: SE.lng + 0.003 * (i % 3),
          },
          payment_method: "invoice",
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        ids.push(res.body.id);
      }
      const request = (maxSeconds: number) => ({
        delivery_ids: ids,
        drivers: [{
          driver_id: driver.body.id,
          start: SE,
          shift_start: new Date().toISOString(),
          shift_end: new Date(Date.now() + 8 * 3600_000).toISOString(),
        }],
        max_seconds: maxSeconds,
      });

      // A job of 60 s, killed a few seconds in.
      const started = await call("/api/v1/routes/plan", owner, request(60));
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      const job = started.body.id;
      await sleep(3_000);
      expect((await call(`/api/v1/route-plans/${job}`, owner)).body.status)
        .toBe("running");
      await killStack();

      stack = await startOwnStack({
        dataDir: stack.dataDir,
        apiPort: stack.apiPort,
        dbPort: stack.dbPort,
        args: [],
      });
      owner = await passwordSignIn(stack, ownerEmail, PASSWORD);
      let seen: any;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
        seen = (await call(`/api/v1/route-plans/${job}`, owner)).body;
        if (seen.status !== "running") break;
        await sleep(1_000);
      }
      expect(seen).toMatchObject({
        status: "failed",
        result: null,
        error: "the worker stopped before the plan was done (no word from it for 30 s): plan again",
      });

      // Nothing of the dead job holds the deliveries: planned again, all of them in one draft.
      const again = await call("/api/v1/routes/plan", owner, request(1));
      expect(again.status, JSON.stringify(again.body)).toBe(201);
      expect(again.body.unassigned).toEqual([]);
      expect(
        new Set(
          again.body.routes.flatMap((r: any) => r.stops.map((s: any) => s.delivery_id)),
        ),
      ).toEqual(new Set(ids));
    },
    300_000,
  );
});

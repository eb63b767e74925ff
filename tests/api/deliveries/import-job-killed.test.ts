// An import job killed mid-way (issue 33, DESIGN.md §11.2), on a stack of its own: a 3,000-row file, a third of its
// rows without an external_id, is imported as a job; while it runs, the stack's server (where the worker runs) and
// Postgres are killed with SIGKILL. On the restart the deliveries in the database are exactly the rows the job
// counted as created (no batch half in), and the job resumes by itself (its lease lapses, pg_cron wakes a worker)
// and ends with exactly the file's rows, each once.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { type OwnStack, passwordSignIn, processes, sleep, startOwnStack } from "../../support/stack.ts";
import { largeFile } from "../../support/import-files.ts";

const PASSWORD = "correct-horse-battery";
const ROWS = 3000;
let stack: OwnStack;

afterAll(async () => {
  await stack?.stop();
});

async function call(path: string, token: string, init: RequestInit = {}) {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...init.headers },
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("an import job killed mid-way", () => {
  it("resumes after the restart and ends with exactly the file's rows", async () => {
    stack = await startOwnStack();
    const email = `owner-${randomUUID().slice(0, 8)}@test.example`;
    const registered = await fetch(`${stack.apiUrl}/api/v1/companies/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ company_name: "Importa e cai", owner_name: "Dona", email, password: PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const companyId = (await registered.json()).company_id;
    let owner = await passwordSignIn(stack, email, PASSWORD);

    const tag = `IK${randomUUID().slice(0, 6)}`;
    const started = await call("/api/v1/deliveries/import", owner, {
      method: "POST",
      headers: { "content-type": "text/csv" },
      body: largeFile(tag, ROWS),
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id = started.body.id;

    // Once a batch or more is in, and before the last: kill -9 of Postgres and of the server.
    for (const until = Date.now() + 60_000; Date.now() < until;) {
      const now = await call(`/api/v1/imports/${id}`, owner);
      if (now.body.processed > 0) {
        expect(now.body.status).toBe("running");
        break;
      }
      await sleep(20);
    }
    const postmaster = stack.postmasterPid();
    const server = [postmaster, ...processes().filter((p) => p.ppid === postmaster).map((p) => p.pid)];
    for (const pid of server) {
      try {
        process.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    // Postgres reaped before the stack goes (cash-day-under-kill.test.ts says why).
    for (const until = Date.now() + 10_000; server.some(alive) && Date.now() < until;) await sleep(20);
    stack.child.kill("SIGKILL");
    await new Promise((done) =>
      stack.child.exitCode !== null || stack.child.signalCode !== null ? done(null) : stack.child.once("exit", done)
    );

    stack = await startOwnStack({ dataDir: stack.dataDir, apiPort: stack.apiPort, dbPort: stack.dbPort, args: [] });
    // A stack just restarted on a busy machine may take a while to answer its first sign-in.
    for (let tries = 0;; tries++) {
      try {
        owner = await passwordSignIn(stack, email, PASSWORD);
        break;
      } catch (error) {
        if (tries >= 5) throw error;
        await sleep(2_000);
      }
    }
    const sql = postgres(stack.dbUrl, { max: 1, onnotice: () => {} });
    const count = async () =>
      (await sql`select count(*)::integer as rows, count(distinct notes)::integer as distinct
        from public.deliveries where company_id = ${companyId} and notes like ${tag + " linha %"}`)[0];
    try {
      // What the crash left: the job part-way, and exactly the rows its committed batches counted.
      const [left] = await sql`select status, processed, created from public.imports where id = ${id}`;
      expect(left.status).toBe("running");
      expect(left.processed).toBeGreaterThan(0);
      expect(left.processed).toBeLessThan(ROWS);
      expect(await count()).toEqual({ rows: left.created, distinct: left.created });

      // It resumes by itself.
      let last: { status: string; processed: number; created: number } | undefined;
      for (const until = Date.now() + 180_000; Date.now() < until;) {
        last = (await call(`/api/v1/imports/${id}`, owner)).body;
        if (last?.status !== "running") break;
        await sleep(500);
      }
      expect(last).toMatchObject({ status: "done", processed: ROWS, created: ROWS, skipped: 0, errors: [] });
      expect(await count()).toEqual({ rows: ROWS, distinct: ROWS });
    } finally {
      await sql.end();
    }
  }, 420_000);
});

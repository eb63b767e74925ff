// The local Auth under an attacker's load (issue 26): how long the rest of the stack waits while 100 wrong-password
// sign-ins arrive at once (bcrypt's cost), and whether POST /auth/v1/recover answers an unknown address faster than a
// known one (which would tell an attacker who has an account). The stack runs with Auth's rate limits lifted, so that
// what is measured is the work itself, not the 429s that would cut it short.
import postgres from "postgres";
import { insertUsers, percentile, pool, positiveInt, startStack } from "./stack.ts";

const SIGN_INS = positiveInt("BENCH_SIGN_INS", 100);
const RECOVERS = positiveInt("BENCH_RECOVERS", 60);

const stack = await startStack();
const sql = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
try {
  const headers = { "content-type": "application/json", apikey: stack.anonKey };
  const post = (path: string, body: unknown) =>
    fetch(`${stack.apiUrl}${path}`, { method: "POST", headers, body: JSON.stringify(body) });

  // --- 1. the rest of the stack while wrong passwords are checked -------------------------------------------------
  // Created through the admin API, so its password is hashed at GoTrue's cost (10), as every real user's is.
  const victim = `victim-${crypto.randomUUID()}@bench.example`;
  const created = await fetch(`${stack.apiUrl}/auth/v1/admin/users`, {
    method: "POST",
    headers: { ...headers, apikey: stack.serviceRoleKey, authorization: `Bearer ${stack.serviceRoleKey}` },
    body: JSON.stringify({ email: victim, password: "the-right-password", email_confirm: true }),
  });
  if (created.status !== 200) throw new Error(`creating the user answered ${created.status}`);
  await created.body?.cancel();
  const probe = async () => {
    const started = performance.now();
    await (await fetch(`${stack.apiUrl}/auth/v1/health`)).body?.cancel();
    return performance.now() - started;
  };
  const idle = (await Promise.all(Array.from({ length: 5 }, probe))).sort((a, b) => a - b);
  let burstDone = false;
  const probes: number[] = [];
  const probing = (async () => {
    while (!burstDone) {
      probes.push(await probe());
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const burstStarted = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: SIGN_INS }, async () => {
      const res = await post("/auth/v1/token?grant_type=password", { email: victim, password: "wrong-password" });
      await res.body?.cancel();
      return res.status;
    }),
  );
  const burstMs = performance.now() - burstStarted;
  burstDone = true;
  await probing;
  probes.sort((a, b) => a - b);
  const byStatus = Object.entries(Object.groupBy(statuses, String)).map(([s, list]) => `${list!.length} x ${s}`);
  console.log(
    `${SIGN_INS} concurrent wrong-password sign-ins: all answered in ${burstMs.toFixed(0)} ms (${byStatus.join(", ")})`,
  );
  console.log(
    `  GET /auth/v1/health meanwhile (${probes.length} probes): p50 ${percentile(probes, 50).toFixed(1)} ms, ` +
      `max ${probes[probes.length - 1].toFixed(1)} ms (idle: p50 ${percentile(idle, 50).toFixed(1)} ms)`,
  );

  // --- 2. /recover for known and unknown addresses ----------------------------------------------------------------
  // A known address each time: a second recovery mail to one address within max_frequency would answer 429.
  const known = Array.from({ length: RECOVERS }, () => ({
    userId: crypto.randomUUID(),
    email: `known-${crypto.randomUUID()}@bench.example`,
  }));
  await insertUsers(sql, known);
  const timings = { known: [] as number[], unknown: [] as number[] };
  // Interleaved, one at a time, so both see the same load.
  await pool(known, 1, async (user) => {
    for (const kind of ["known", "unknown"] as const) {
      const email = kind === "known" ? user.email : `nobody-${crypto.randomUUID()}@bench.example`;
      const started = performance.now();
      const res = await post("/auth/v1/recover", { email });
      await res.body?.cancel();
      timings[kind].push(performance.now() - started);
      if (res.status !== 200) throw new Error(`recover of a ${kind} address answered ${res.status}`);
    }
  });
  for (const kind of ["known", "unknown"] as const) {
    const sorted = timings[kind].sort((a, b) => a - b);
    console.log(
      `POST /auth/v1/recover, ${kind} address (${sorted.length}): p50 ${percentile(sorted, 50).toFixed(2)} ms, ` +
        `p90 ${percentile(sorted, 90).toFixed(2)} ms`,
    );
  }
} finally {
  await sql.end();
  await stack.stop();
}

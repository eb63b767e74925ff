// `npm run bench:webhooks-out`: outgoing webhooks under load (issue 36). A
// stack of its own; one company with 5 webhook endpoints, each a loopback
// receiver of this script listening for delivery.created and
// delivery.status_changed; BENCH_DELIVERIES (1,000) deliveries created and
// then cancelled through the API, 20 at a time, while the fifth receiver is
// down (503) for its first BENCH_DOWN_S (60) seconds and then back.
//
// Prints: the p50/p95/p99 from the event's commit (its `timestamp`, taken in
// the transaction: a little before the commit, so the figure is an upper
// bound) to the receiver's receipt, for the four receivers that stayed up;
// every event delivered exactly once per endpoint (unique receipts, missing,
// duplicates: a duplicate is a second receipt of a webhook-id, e.g. an attempt
// whose answer was lost); and the down receiver's failed attempts and its
// catching up. Its retries are due after 5 s, then 5 min: once it is back, the
// bench moves their due time to now (the fake clock the tests use) instead of
// waiting 5 minutes, and says so.
import postgres from "postgres";
import { percentile, pool, positiveInt, registerCompany, startStack } from "./stack.ts";

const DELIVERIES = positiveInt("BENCH_DELIVERIES", 1_000);
const DOWN_S = positiveInt("BENCH_DOWN_S", 60);
const ENDPOINTS = 5;

interface Receipt {
  id: string;
  latencyMs: number;
}

function startReceiver(index: number, isDown: () => boolean) {
  const receipts: Receipt[] = [];
  let refused = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    if (isDown()) {
      refused++;
      return new Response("down", { status: 503 });
    }
    const id = req.headers.get("webhook-id") ?? "";
    const sent = Date.parse(JSON.parse(body).timestamp);
    receipts.push({ id, latencyMs: Date.now() - sent });
    return new Response(null, { status: 204 });
  });
  return {
    index,
    url: `http://127.0.0.1:${server.addr.port}/hooks/${index}`,
    receipts,
    refused: () => refused,
    stop: () => server.shutdown(),
  };
}

function summary(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms, p99 ${percentile(sorted, 99)} ms`;
}

const stack = await startStack();
const sql = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
const startedAt = Date.now();
const receivers = Array.from(
  { length: ENDPOINTS },
  (_, i) => startReceiver(i + 1, () => i === ENDPOINTS - 1 && Date.now() - startedAt < DOWN_S * 1000),
);
try {
  const { companyId, owner } = await registerCompany(stack, "Webhooks bench");
  const headers = { authorization: `Bearer ${owner.token}`, "content-type": "application/json" };
  const endpointIds: string[] = [];
  for (const receiver of receivers) {
    const res = await fetch(`${stack.apiUrl}/api/v1/webhook-endpoints`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: receiver.url, events: ["delivery.created", "delivery.status_changed"] }),
    });
    if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${await res.text()}`);
    endpointIds.push((await res.json()).id);
  }

  console.log(`${DELIVERIES} deliveries created and cancelled, 5 endpoints, endpoint 5 down for ${DOWN_S} s`);
  await pool(Array.from({ length: DELIVERIES }, (_, i) => i), 20, async (i) => {
    const created = await fetch(`${stack.apiUrl}/api/v1/deliveries`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        payment_method: "invoice",
        origin_address: "Praça da Sé, São Paulo",
        origin: { lat: -23.5505, lng: -46.6333 },
        destination_address: "Av. Paulista, 1000",
        destination: { lat: -23.5614, lng: -46.6559 },
        external_id: `bench-${i}`,
      }),
    });
    if (created.status !== 201) throw new Error(`delivery: ${created.status} ${await created.text()}`);
    const { id } = await created.json();
    const cancelled = await fetch(`${stack.apiUrl}/api/v1/deliveries/${id}/cancel`, {
      method: "POST",
      headers,
      body: JSON.stringify({ reason: "bench" }),
    });
    if (cancelled.status !== 200) throw new Error(`cancel: ${cancelled.status} ${await cancelled.text()}`);
  });
  const [{ events }] = await sql`select count(*)::int as events from private.webhook_messages
    where company_id = ${companyId}`;
  console.log(
    `  ${events} events queued (${events * ENDPOINTS} sends), in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
  );

  // The four that stayed up: every send delivered.
  const upIds = endpointIds.slice(0, ENDPOINTS - 1);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [{ pending }] = await sql`select count(*)::int as pending from private.webhook_deliveries
      where endpoint_id = any (${upIds}) and status <> 'delivered'`;
    if (pending === 0 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  // The down one, once back: its retries' due time moved to now (the fake clock), then delivered.
  while (Date.now() - startedAt < DOWN_S * 1000) await new Promise((r) => setTimeout(r, 500));
  await sql`update private.webhook_deliveries set next_attempt_at = now()
    where endpoint_id = ${endpointIds[ENDPOINTS - 1]} and status = 'pending'`;
  await fetch(`${stack.apiUrl}/functions/v1/webhooks-out/send`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.serviceRoleKey}` },
  });
  const downDeadline = Date.now() + 120_000;
  for (;;) {
    const [{ pending }] = await sql`select count(*)::int as pending from private.webhook_deliveries
      where endpoint_id = ${endpointIds[ENDPOINTS - 1]} and status <> 'delivered'`;
    if (pending === 0 || Date.now() > downDeadline) break;
    await sql`update private.webhook_deliveries set next_attempt_at = now()
      where endpoint_id = ${
      endpointIds[ENDPOINTS - 1]
    } and status = 'pending' and next_attempt_at > now() + interval '1 minute'`;
    await new Promise((r) => setTimeout(r, 1_000));
  }

  for (const receiver of receivers) {
    const unique = new Set(receiver.receipts.map((r) => r.id));
    const duplicates = receiver.receipts.length - unique.size;
    const missing = events - unique.size;
    const up = receiver.index < ENDPOINTS;
    console.log(
      `  endpoint ${receiver.index}${up ? "" : " (down, then back)"}: ${unique.size}/${events} events, ` +
        `${missing} missing, ${duplicates} duplicates` +
        (up
          ? `; commit to receipt ${summary(receiver.receipts.map((r) => r.latencyMs))}`
          : `; ${receiver.refused()} attempts refused while down`),
    );
  }
  const all = receivers.slice(0, ENDPOINTS - 1).flatMap((r) => r.receipts.map((x) => x.latencyMs));
  console.log(`  the four up: commit to receipt ${summary(all)} (target: p95 within 2,000 ms)`);
} finally {
  for (const receiver of receivers) await receiver.stop();
  await sql.end();
  await stack.stop();
}

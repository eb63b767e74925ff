// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Requests that are safe to retry (DESIGN.md §10.1): the Idempotency-Key of every POST under /api/v1 but the
// webhooks, with Stripe's rules. The first request with a key runs and its answer is kept; the same key and the
// same request get that answer again (`Idempotent-Replayed: true`) and nothing runs again; another request with the
// key is 422; a copy while the first runs is 409; keys are per caller. A withdrawal retried with its key after a
// 502 (the gateway made the transfer, then failed) never becomes two, nor do 20 copies sent at once.
import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  type CallOptions,
  configureGateway,
  createCompany,
  db,
  type TestCompany,
  uniqueEmail,
} from "../../support/api.ts";
import { deliveryBody, SE } from "../../support/deliveries.ts";
import { gateway, routing } from "../../support/fakes.ts";
import { creditDriver } from "../../support/money.ts";

let company: TestCompany;

beforeAll(async () => {
  company = await createCompany("Idempotent Co");
  await configureGateway(company);
  for (const driver of [company.driver, company.driver2]) await creditDriver(company.companyId, driver, "1000.00");
});

afterEach(async () => {
  await gateway.set("ok", 0);
  await routing.set("ok", 0);
});

const keyed = (key: string, options: CallOptions) =>
  ({ ...options, headers: { ...options.headers, "Idempotency-Key": key } }) satisfies CallOptions;

const invoiceDelivery = (overrides: Record<string, unknown> = {}) =>
  deliveryBody({ payment_method: "invoice", customer: undefined, ...overrides });

const withdrawal = (amount: number) => ({ amount, pix_key: "12345678909", pix_key_type: "cpf" });

async function withdrawalsOf(driverId: string): Promise<{ id: string; status: string; in_doubt: boolean }[]> {
  return await db()`select id, status, in_doubt from public.withdrawals where driver_id = ${driverId}
                    order by created_at`;
}

async function keyRow(key: string) {
  const [row] = await db()`select caller, status, changed_data, lease_until > now() as running
                           from private.idempotent_requests where key = ${key}`;
  return row;
}

describe("the header", () => {
  it("is 1 to 255 printable ASCII characters: anything else is 400 naming it, and nothing runs", async () => {
    for (const key of ["x".repeat(256), "tab\there", ""]) {
      const external = `ext-${randomUUID()}`;
      const res = await api(
        "/api/v1/deliveries",
        keyed(key, { token: company.owner.token, body: invoiceDelivery({ external_id: external }) }),
      );
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(res.body.detail).toEqual([expect.objectContaining({ loc: ["header", "Idempotency-Key"] })]);
      expect(await db()`select 1 from public.deliveries where external_id = ${external}`).toHaveLength(0);
    }
    const longest = "~".repeat(255);
    expect(
      (await api(
        "/api/v1/routes/quote",
        keyed(longest, {
          token: company.owner.token,
          body: { origin: SE, destination: SE },
        }),
      )).status,
    ).toBe(200);
  });

  it("is refused to a role that may not call the operation with 403, and is not claimed", async () => {
    const key = randomUUID();
    const res = await api("/api/v1/drivers", keyed(key, { token: company.driver.token, body: {} }));
    expect(res.status).toBe(403);
    expect(await keyRow(key)).toBeUndefined();
  });

  it("is documented on every POST but the webhooks', and nowhere else", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: "Idempotency-Key", in: "header" });
    const posts: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const keyedOp = (op.parameters ?? []).some((p: { $ref?: string }) =>
          p.$ref === "#/components/parameters/IdempotencyKey"
        );
        const webhook = path.startsWith("/api/v1/webhooks/");
        // A new API key or webhook secret is shown once and never kept, so its answer cannot be replayed.
        const holdsSecret = op["x-answer-holds-secret"] === true;
        expect(keyedOp, `${method} ${path}`).toBe(method === "post" && !webhook && !holdsSecret);
        if (keyedOp) {
          posts.push(path);
          expect(op.responses["409"]?.description, path).toContain("Idempotency-Key");
          expect(op.responses["422"]?.description, path).toContain("Idempotency-Key");
        }
      }
    }
    expect(posts.length).toBeGreaterThan(12);
  });
});

describe("a retried request", () => {
  it("gets the first answer again, marked as replayed, and creates nothing more", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    const first = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const [{ n }] = await db()`select count(*)::int as n from public.deliveries
                               where company_id = ${company.companyId} and origin_address = ${body.origin_address}
                                 and created_at >= ${first.body.created_at}`;
    expect(n).toBe(1);
    expect(await keyRow(key)).toMatchObject({ caller: company.owner.userId, status: 201, changed_data: true });
  });

  it("keeps an error answer too: a refused move is refused again without running", async () => {
    const key = randomUUID();
    const { body: delivery } = await api("/api/v1/deliveries", { token: company.owner.token, body: invoiceDelivery() });
    const start = () =>
      api(`/api/v1/deliveries/${delivery.id}/start`, keyed(key, { method: "POST", token: company.driver.token }));
    const refused = await start();
    expect(refused.status).toBe(422);
    // The delivery could now be started, but the key answers what it answered.
    await api(`/api/v1/deliveries/${delivery.id}/accept`, { method: "POST", token: company.driver.token });
    const replayed = await start();
    expect(replayed).toMatchObject({ status: 422, body: refused.body });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  });

  it("with another body, another path or another method is 422; the first answer stays", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    expect((await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }))).status).toBe(201);
    const other = await api(
      "/api/v1/deliveries",
      keyed(key, { token: company.owner.token, body: { ...body, notes: "another" } }),
    );
    expect(other.status).toBe(422);
    expect(other.body.detail).toContain("Idempotency-Key was used with another request");
    const elsewhere = await api(
      "/api/v1/routes/quote",
      keyed(key, {
        token: company.owner.token,
        body: { origin: SE, destination: SE },
      }),
    );
    expect(elsewhere.status).toBe(422);
    expect((await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }))).headers.get(
      "idempotent-replayed",
    )).toBe("true");
  });

  it("is per caller: another user's same key is another request", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    const mine = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    const theirs = await api("/api/v1/deliveries", keyed(key, { token: company.admin.token, body }));
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it("is 409 while the first is still running, then gets its answer", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    await routing.slow(1_500);
    const first = api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    await new Promise((r) => setTimeout(r, 500));
    const copy = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(copy.status).toBe(409);
    expect(copy.body.detail).toContain("still running");
    const answered = await first;
    expect(answered.status).toBe(201);
    const after = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(after).toMatchObject({ status: 201, body: answered.body });
  });

  it("after a 5xx that changed nothing runs again: the key is not kept", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    await routing.down();
    const failed = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    await routing.up();
    expect(failed.status).toBe(502);
    expect(await keyRow(key)).toBeUndefined();
    const retried = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("works on the public registration too", async () => {
    const key = randomUUID();
    const body = {
      company_name: "Keyed Co",
      owner_name: "Owner",
      email: uniqueEmail("keyed"),
      password: "long-password",
    };
    const first = await api("/api/v1/companies/register", keyed(key, { body }));
    expect(first.status).toBe(201);
    const again = await api("/api/v1/companies/register", keyed(key, { body }));
    expect(again).toMatchObject({ status: 201, body: first.body });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Kept under the client's address (a uuid derived from it, never the address itself), not one shared space.
    const row = await keyRow(key);
    expect(row).toMatchObject({ status: 201 });
    expect(row.caller).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("a request cut off before its answer was kept", () => {
  // What a request leaves when its function or the database goes away after it ran: no answer, its lease over.
  const cutOff = (key: string) =>
    db()`update private.idempotent_requests set status = null, body = null, lease_until = now() - interval '1 second'
         where key = ${key}`;

  it("is run again when it changed nothing (its transactions only read)", async () => {
    const key = randomUUID();
    const quote = () =>
      api("/api/v1/routes/quote", keyed(key, { token: company.owner.token, body: { origin: SE, destination: SE } }));
    expect((await quote()).status).toBe(200);
    expect(await keyRow(key)).toMatchObject({ status: 200, changed_data: false });
    await cutOff(key);
    const before = (await routing.state()).requests;
    const again = await quote();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect((await routing.state()).requests).toBe(before + 1);
  });

  it("is never run again when it changed data: 422, saying so", async () => {
    const key = randomUUID();
    const body = invoiceDelivery();
    expect((await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }))).status).toBe(201);
    expect(await keyRow(key)).toMatchObject({ changed_data: true });
    await cutOff(key);
    const again = await api("/api/v1/deliveries", keyed(key, { token: company.owner.token, body }));
    expect(again.status).toBe(422);
    expect(again.body.detail).toContain("cut off after it changed data");
  });
});

describe("withdrawals retried with their key", () => {
  it("after a gateway 500-after-create: the 502 is answered again, and there is one withdrawal, one transfer", async () => {
    const driver = company.driver;
    const key = randomUUID();
    const before = (await withdrawalsOf(driver.driverId)).length;
    await gateway.set("fail-after-create");
    const first = await api("/api/v1/withdrawals", keyed(key, { token: driver.token, body: withdrawal(12.34) }));
    expect(first.status).toBe(502);
    // The client follows docs/spec.md §7: retry a 502 after 1, 2 and 4 s; the gateway works again meanwhile.
    await gateway.set("ok");
    for (const wait of [1_000, 2_000]) {
      await new Promise((r) => setTimeout(r, wait));
      const retry = await api("/api/v1/withdrawals", keyed(key, { token: driver.token, body: withdrawal(12.34) }));
      expect(retry).toMatchObject({ status: 502, body: first.body });
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
    }
    const rows = await withdrawalsOf(driver.driverId);
    expect(rows).toHaveLength(before + 1);
    const made = rows.at(-1)!;
    expect(made).toMatchObject({ status: "processing", in_doubt: true });
    const transfers = (await gateway.state()).transfers.filter((t) => t.externalReference === made.id);
    expect(transfers).toHaveLength(1);
    expect(await keyRow(key)).toMatchObject({ status: 502, changed_data: true });
  });

  it("20 copies of one key at once make one withdrawal; the rest are 409 or its answer", async () => {
    const driver = company.driver2;
    const key = randomUUID();
    const before = (await withdrawalsOf(driver.driverId)).length;
    await gateway.slow(300);
    const answers = await Promise.all(
      Array.from(
        { length: 20 },
        () => api("/api/v1/withdrawals", keyed(key, { token: driver.token, body: withdrawal(5) })),
      ),
    );
    const rows = await withdrawalsOf(driver.driverId);
    expect(rows).toHaveLength(before + 1);
    const made = rows.at(-1)!;
    const ran = answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") === null);
    const replays = answers.filter((a) => a.headers.get("idempotent-replayed") === "true");
    const running = answers.filter((a) => a.status === 409);
    expect(ran).toHaveLength(1);
    expect(ran[0].body.id).toBe(made.id);
    expect(replays.length + running.length).toBe(19);
    for (const replay of replays) expect(replay).toMatchObject({ status: 201, body: ran[0].body });
    expect((await gateway.state()).transfers.filter((t) => t.externalReference === made.id)).toHaveLength(1);
    console.log(
      JSON.stringify({ twentyCopies: { ran: ran.length, replays: replays.length, running: running.length } }),
    );
  });

  it("answer 503 with a true message when the database cannot record the gateway's answer", async () => {
    const driver = company.driver;
    const key = randomUUID();
    const before = new Set((await withdrawalsOf(driver.driverId)).map((w) => w.id));
    // The gateway fails slowly; meanwhile another transaction holds the new withdrawal's row, so the edge cannot
    // mark it in doubt within its transaction budget: the database is why the outcome is not recorded.
    await gateway.set("fail", 1_000);
    const answer = api("/api/v1/withdrawals", keyed(key, { token: driver.token, body: withdrawal(7) }));
    let id: string | undefined;
    while (!id) {
      id = (await withdrawalsOf(driver.driverId)).find((w) => !before.has(w.id))?.id;
      if (!id) await new Promise((r) => setTimeout(r, 20));
    }
    let release!: () => void;
    const held = db().begin(async (tx) => {
      await tx`select 1 from public.withdrawals where id = ${id} for update`;
      await new Promise<void>((resolve) => (release = resolve));
    });
    const res = await answer;
    release();
    await held;
    expect(res.status).toBe(503);
    expect(res.body.detail).toContain(`withdrawal ${id} could be marked in doubt`);
    expect(res.body.detail).toContain("stays processing with its amount held");
    expect(res.headers.get("retry-after")).toBeNull();
    // What the message says is so: processing, not in doubt, the amount held.
    expect((await withdrawalsOf(driver.driverId)).find((w) => w.id === id)).toMatchObject({
      status: "processing",
      in_doubt: false,
    });
    // And its key keeps that answer: a retry does not make a second withdrawal.
    const retry = await api("/api/v1/withdrawals", keyed(key, { token: driver.token, body: withdrawal(7) }));
    expect(retry).toMatchObject({ status: 503, body: res.body });
    expect((await withdrawalsOf(driver.driverId)).filter((w) => !before.has(w.id))).toHaveLength(1);
  });
});

// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Outgoing webhooks (docs/integrations.md): endpoints made by a company (a
// secret shown once), each event signed as Standard Webhooks sign it and
// verified here with the standardwebhooks package, sent after the commit;
// failures retried on Standard Webhooks' schedule with the same id and body
// (the fake clock: the send's due time moved back in Postgres, then the sender
// run as its jobs run it); every attempt recorded; an endpoint failing for 5
// days disabled and its owner told by e-mail; resend and the test event; and
// SSRF: private, loopback and link-local addresses refused when an endpoint is
// saved and when it is sent to, names resolving to them too, redirects never
// followed. Every receiver is a loopback server of this file: nothing leaves
// the machine.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, moveDelivery } from "../../support/deliveries.ts";
import { smtp } from "../../support/fakes.ts";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { callFunctionProcess, functionProcessEnv } from "../../support/function-process.ts";
import { waitFor } from "../../support/wait.ts";

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

/** A loopback receiver: each path answers as the test says (200 unless told), and every request is kept. */
class Receiver {
  received: Received[] = [];
  /** A path's answer; `hang`: none at all, the request left open. */
  answers = new Map<string, { status: number; location?: string; hang?: boolean }>();
  private server!: Server;
  port = 0;

  async start() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        this.received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          at: Date.now(),
        });
        const answer = this.answers.get(path) ?? { status: 200 };
        if (answer.hang) return;
        res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
        res.end(answer.status === 200 ? "thanks" : `no: ${answer.status}`);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as { port: number }).port;
  }
  url(path: string) {
    return `http://127.0.0.1:${this.port}${path}`;
  }
  at(path: string) {
    return this.received.filter((r) => r.path === path);
  }
  close() {
    this.server.closeAllConnections();
    return new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function createEndpoint(company: TestCompany, url: string, events = ["delivery.created"]) {
  const res = await api("/api/v1/webhook-endpoints", { token: company.owner.token, body: { url, events } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; enabled: boolean };
}

/** One run of the sender, as the database's wake-up call and job make it. */
async function runSender() {
  const res = await fetch(`${stack().apiUrl}/functions/v1/webhooks-out/send`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack().serviceRoleKey}`, "content-type": "application/json" },
    body: "{}",
  });
  expect(res.status).toBe(200);
  return await res.json();
}

/** The fake clock: the endpoint's pending sends are due now. */
const dueNow = (endpointId: string) =>
  db()`update private.webhook_deliveries set next_attempt_at = now() where endpoint_id = ${endpointId} and status = 'pending'`;

const attemptsOf = async (endpointId: string) =>
  await db()`select attempt, status, error, at from private.webhook_attempts where endpoint_id = ${endpointId}
    order by at, attempt`;

const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any;

describe("outgoing webhooks", () => {
  let company: TestCompany;
  const receiver = new Receiver();
  beforeAll(async () => {
    [company] = await Promise.all([createCompany("Webhooks Co"), receiver.start()]);
  });
  afterAll(() => receiver.close());

  it("are signed as Standard Webhooks sign, verified by the library, within seconds of the commit", async () => {
    const endpoint = await createEndpoint(company, receiver.url("/signed"), [
      "delivery.created",
      "delivery.status_changed",
    ]);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.enabled).toBe(true);
    // The secret is shown once, and stored encrypted.
    const shown = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, { token: company.admin.token });
    expect(JSON.stringify(shown.body)).not.toContain(endpoint.secret.slice(6));
    const [sealed] = await db()`select secret_ciphertext from private.webhook_endpoint_secrets
      where endpoint_id = ${endpoint.id}`;
    expect(sealed.secret_ciphertext).toMatch(/^v1\./);
    expect(sealed.secret_ciphertext).not.toContain(endpoint.secret.slice(6));

    const started = Date.now();
    const delivery = await createInvoiceDelivery(company);
    const [got] = await waitFor("the event", () => receiver.at("/signed").length > 0 && receiver.at("/signed"));
    expect(got.at - started).toBeLessThan(5_000);
    const event = verify(endpoint.secret, got);
    expect(event).toMatchObject({ type: "delivery.created", data: { id: delivery.id, status: "pending" } });
    expect(event.data).not.toHaveProperty("recipient_phone");
    expect(got.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(() => new Webhook(`whsec_${btoa("another secret of enough length")}`).verify(got.body, got.headers as any))
      .toThrow();

    // A move is delivery.status_changed.
    await moveDelivery(company.owner, delivery.id, "cancel", { reason: "test" });
    const moved = await waitFor("the move", () => receiver.at("/signed").length > 1 && receiver.at("/signed")[1]);
    expect(verify(endpoint.secret, moved)).toMatchObject({
      type: "delivery.status_changed",
      data: { id: delivery.id, status: "cancelled", previous_status: "pending" },
    });

    // Every attempt is listed, with its status and timing.
    await waitFor("the attempts", async () => (await attemptsOf(endpoint.id)).length === 2);
    const attempts = await api(`/api/v1/webhook-endpoints/${endpoint.id}/attempts`, { token: company.owner.token });
    expect(attempts.status).toBe(200);
    expect(attempts.body.items).toHaveLength(2);
    expect(attempts.body.items[1]).toMatchObject({
      event_id: got.headers["webhook-id"],
      type: "delivery.created",
      attempt: 1,
      status: 200,
      response: "thanks",
    });
    expect(attempts.body.items[1].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("retry a failure on Standard Webhooks' schedule with the same id and body, then fail the event", async () => {
    const path = "/retry";
    receiver.answers.set(path, { status: 500 });
    const endpoint = await createEndpoint(company, receiver.url(path));
    await createInvoiceDelivery(company);
    await waitFor("the first attempt", async () => (await attemptsOf(endpoint.id)).length === 1);

    const waits: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt++) {
      await waitFor(`attempt ${attempt}`, async () => (await attemptsOf(endpoint.id)).length === attempt);
      const [send] = await db()`select w.status, w.next_attempt_at, a.at from private.webhook_deliveries w
        join private.webhook_attempts a on a.endpoint_id = w.endpoint_id and a.attempt = w.attempts
        where w.endpoint_id = ${endpoint.id}`;
      if (attempt === 8) {
        expect(send.status).toBe("failed");
        break;
      }
      expect(send.status).toBe("pending");
      waits.push((send.next_attempt_at.getTime() - send.at.getTime()) / 1000);
      await dueNow(endpoint.id);
      await runSender();
    }
    expect(waits).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    const copies = receiver.at(path);
    expect(copies).toHaveLength(8);
    expect(new Set(copies.map((c) => c.headers["webhook-id"])).size).toBe(1);
    expect(new Set(copies.map((c) => c.body)).size).toBe(1);
    for (const copy of copies) expect(verify(endpoint.secret, copy).type).toBe("delivery.created");
    const attempts = await api(`/api/v1/webhook-endpoints/${endpoint.id}/attempts?limit=3`, {
      token: company.owner.token,
    });
    expect(attempts.body.items.map((a: any) => [a.attempt, a.status])).toEqual([[8, 500], [7, 500], [6, 500]]);
    expect(attempts.body.next_cursor).not.toBeNull();

    // Resent: the same id and body again, and delivered once the receiver is back.
    receiver.answers.delete(path);
    const eventId = copies[0].headers["webhook-id"] as string;
    const resent = await api(`/api/v1/webhook-events/${eventId}/resend`, {
      method: "POST",
      token: company.owner.token,
    });
    expect(resent.status).toBe(202);
    // Queued again for every enabled endpoint it was for: the first test's endpoint had it too.
    expect(resent.body).toEqual({ event_id: eventId, queued: 2 });
    const copy = await waitFor("the resent copy", () => receiver.at(path).length === 9 && receiver.at(path)[8]);
    expect(copy.headers["webhook-id"]).toBe(eventId);
    expect(copy.body).toBe(copies[0].body);
    const other = await createCompany("Other Webhooks Co");
    const foreign = await api(`/api/v1/webhook-events/${eventId}/resend`, { method: "POST", token: other.owner.token });
    expect(foreign.status).toBe(404);
  });

  it("count no answer within 10 s as a failed attempt, retried after 5 s", async () => {
    const path = "/silent";
    receiver.answers.set(path, { status: 200, hang: true });
    const endpoint = await createEndpoint(company, receiver.url(path));
    await createInvoiceDelivery(company);
    const [attempt] = await waitFor("the attempt given up", async () => {
      const rows = await attemptsOf(endpoint.id);
      return rows.length > 0 && rows;
    }, 20_000);
    expect(receiver.at(path)).toHaveLength(1);
    expect(attempt).toMatchObject({ attempt: 1, status: null, error: "no answer within 10 s" });
    const [row] = await db()`select a.duration_ms, w.status, w.next_attempt_at - a.at as wait
      from private.webhook_attempts a join private.webhook_deliveries w using (endpoint_id)
      where a.endpoint_id = ${endpoint.id}`;
    expect(row.duration_ms).toBeGreaterThanOrEqual(10_000);
    expect(row.duration_ms).toBeLessThan(12_000);
    expect(row.status).toBe("pending");
    expect(row.wait).toBe("00:00:05");
    await db()`delete from public.webhook_endpoints where id = ${endpoint.id}`;
  }, 30_000);

  it("disable an endpoint failing for 5 days and tell the owner by e-mail", async () => {
    const path = "/down";
    receiver.answers.set(path, { status: 503 });
    const endpoint = await createEndpoint(company, receiver.url(path));
    await createInvoiceDelivery(company);
    await waitFor("the first attempt", async () => (await attemptsOf(endpoint.id)).length === 1);
    // The fake clock: its failures began 5 days ago.
    await db()`update public.webhook_endpoints set failing_since = now() - interval '5 days' where id = ${endpoint.id}`;
    await dueNow(endpoint.id);
    await runSender();
    await waitFor("the second attempt", async () => (await attemptsOf(endpoint.id)).length === 2);
    const shown = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, { token: company.owner.token });
    expect(shown.body).toMatchObject({ enabled: false, disabled_reason: "disabled after failing for 5 days" });
    const mail = await waitFor(
      "the owner's e-mail",
      async () => {
        await runSender();
        return (await smtp.state()).mails.find((m) => m.to.includes(company.owner.email));
      },
      15_000,
      500,
    );
    expect(mail.subject).toBe("Webhook endpoint disabled");
    // Nothing more is sent to it; enabled again, it gets new events.
    await createInvoiceDelivery(company);
    await runSender();
    expect(receiver.at(path)).toHaveLength(2);
    receiver.answers.delete(path);
    const enabled = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { enabled: true },
    });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    const test = await api(`/api/v1/webhook-endpoints/${endpoint.id}/test`, {
      method: "POST",
      token: company.owner.token,
    });
    expect(test.status).toBe(202);
    const got = await waitFor("the test event", () => receiver.at(path).length === 3 && receiver.at(path)[2]);
    expect(verify(endpoint.secret, got)).toMatchObject({ type: "webhook.test", data: { endpoint_id: endpoint.id } });
  });

  it("are at most 20 per company, also when many are added at once", async () => {
    const crowded = await createCompany("Crowded Webhooks Co");
    // 19 endpoints already: of 6 additions at once, exactly one finds room.
    await db()`insert into public.webhook_endpoints (company_id, url, events, enabled)
      select ${crowded.companyId}, 'https://hooks.example.com/' || i, '{delivery.created}', false
      from generate_series(1, 19) i`;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      api("/api/v1/webhook-endpoints", {
        token: crowded.owner.token,
        body: { url: receiver.url(`/crowded/${i}`), events: ["delivery.created"] },
      })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const [{ count }] = await db()`select count(*)::int from public.webhook_endpoints
      where company_id = ${crowded.companyId}`;
    expect(count).toBe(20);
  });

  it("refuse a description that cannot be stored with 400 naming it, and change nothing", async () => {
    const endpoint = await createEndpoint(company, receiver.url("/described"));
    await api(`/api/v1/webhook-endpoints/${endpoint.id}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { description: "shop" },
    });
    for (const description of ["a\u0000b", "lone \ud800 surrogate"]) {
      const res = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, {
        method: "PATCH",
        token: company.owner.token,
        body: { description, enabled: false },
      });
      expect(res.status, description).toBe(400);
      expect(res.body.detail[0].loc, description).toEqual(["body", "description"]);
    }
    const shown = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, { token: company.owner.token });
    expect(shown.body).toMatchObject({ description: "shop", enabled: true });
    // An empty one clears it.
    const cleared = await api(`/api/v1/webhook-endpoints/${endpoint.id}`, {
      method: "PATCH",
      token: company.owner.token,
      body: { description: "" },
    });
    expect(cleared.body.description).toBeNull();
    await db()`delete from public.webhook_endpoints where id = ${endpoint.id}`;
  });

  it("refuse private, loopback, link-local and metadata addresses when an endpoint is saved", async () => {
    for (
      const url of [
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[fd00::1]/hook",
        "https://[fe80::1]/hook",
        "http://hooks.example.com/hook",
        "ftp://hooks.example.com/hook",
        "https://user:pass@hooks.example.com/hook",
      ]
    ) {
      const res = await api("/api/v1/webhook-endpoints", {
        token: company.owner.token,
        body: { url, events: ["delivery.created"] },
      });
      expect(res.status, url).toBe(400);
      expect(res.body.detail[0].loc, url).toEqual(["body", "url"]);
    }
    // A name that resolves to 127.0.0.1 is refused where the configuration does not allow it (the stack allows
    // its own loopback receivers): a second instance of the API without WEBHOOK_ALLOWED_HOSTS.
    const { answers } = callFunctionProcess("api", [{
      method: "POST",
      path: "/api/v1/webhook-endpoints",
      headers: { authorization: `Bearer ${company.owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://localhost:9/hook", events: ["delivery.created"] }),
    }, {
      method: "POST",
      path: "/api/v1/webhook-endpoints",
      headers: { authorization: `Bearer ${company.owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url("/plain-http"), events: ["delivery.created"] }),
    }, {
      method: "POST",
      path: "/api/v1/webhook-endpoints",
      headers: { authorization: `Bearer ${company.owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://0x7f.1/hook", events: ["delivery.created"] }),
    }], { WEBHOOK_ALLOWED_HOSTS: "" });
    expect(answers[0].status).toBe(400);
    expect(answers[0].body.detail[0].msg).toContain("resolves to 127.0.0.1");
    expect(answers[1].status).toBe(400);
    expect(answers[1].body.detail[0].msg).toContain("loopback");
    // 127.0.0.1 written in hexadecimal is 127.0.0.1.
    expect(answers[2].status).toBe(400);
  });

  it("check the address again before each send, and never follow a redirect", async () => {
    // Saved where loopback was allowed, sent by a sender where it is not (as if DNS had changed): refused.
    const guarded = await createEndpoint(company, receiver.url("/guarded"));
    await db()`update public.webhook_endpoints set enabled = false where id = ${guarded.id}`;
    const redirecting = await createEndpoint(company, receiver.url("/redirect"));
    receiver.answers.set("/redirect", { status: 302, location: receiver.url("/redirected") });
    await createInvoiceDelivery(company);
    await waitFor("the redirect's attempt", async () => (await attemptsOf(redirecting.id)).length === 1);
    const [redirect] = await attemptsOf(redirecting.id);
    expect(redirect.status).toBe(302);
    expect(redirect.error).toContain("redirects are not followed");
    expect(receiver.at("/redirected")).toHaveLength(0);
    await db()`update public.webhook_endpoints set enabled = false where id = ${redirecting.id}`;

    await db()`update public.webhook_endpoints set enabled = true where id = ${guarded.id}`;
    const [message] = await db()`select id from private.webhook_messages where company_id = ${company.companyId}
      order by created_at desc limit 1`;
    await db()`insert into private.webhook_deliveries (message_id, endpoint_id, company_id, next_attempt_at)
      values (${message.id}, ${guarded.id}, ${company.companyId}, now() + interval '1 hour')`;
    // A sender of its own makes the send due and runs at once, so that the stack's own sender cannot take it first.
    const script = `
      import postgres from "postgres";
      const sql = postgres(Deno.env.get("SUPABASE_DB_URL"));
      await sql\`update private.webhook_deliveries set next_attempt_at = now() where endpoint_id = \${"${guarded.id}"}\`;
      await sql.end();
      const { default: fn } = await import("./functions/webhooks-out/index.ts");
      const res = await fn.fetch(new Request("http://local/webhooks-out/send", {
        method: "POST", headers: { authorization: "Bearer " + Deno.env.get("SUPABASE_SERVICE_ROLE_KEY") } }));
      console.log(await res.text());
      Deno.exit(0);`;
    const run = spawnSync(
      resolve(import.meta.dirname, "../../../node_modules/.bin/deno"),
      ["eval", "--ext=ts", script],
      {
        cwd: resolve(import.meta.dirname, "../../.."),
        encoding: "utf8",
        timeout: 45_000,
        env: functionProcessEnv({ WEBHOOK_ALLOWED_HOSTS: "" }) as NodeJS.ProcessEnv,
      },
    );
    expect(run.stdout, run.stderr).toContain("retried");
    const [refused] = await waitFor("the refused attempt", async () => {
      const rows = await attemptsOf(guarded.id);
      return rows.length > 0 && rows;
    });
    expect(refused.status).toBeNull();
    expect(refused.error).toContain("loopback");
    expect(receiver.at("/guarded")).toHaveLength(0);
  });
});

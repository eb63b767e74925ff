// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Recipients are told (docs/notifications.md): each event (failed too) sends
// exactly one message per channel, with the tracking link, through the loopback fakes of
// the WhatsApp Cloud API and of an SMTP relay; nearby once; a provider down
// and back; a refused destination; 20 senders at once over 500 messages; and
// the API around it (settings, a delivery's messages, erasing a recipient).
// The stack wakes its own sender (pg_net after each commit, pg_cron every
// minute); tests also run the sender themselves, as the jobs do. Where a test
// needs time to pass (the backoff), it moves the messages' times back instead
// of waiting: what the sender then sees is what it would see a minute later.
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, stack, type TestCompany } from "../../support/api.ts";
import { waitFor } from "../../support/wait.ts";
import { createInvoiceDelivery, moveDelivery } from "../../support/deliveries.ts";
import { smtp, whatsapp } from "../../support/fakes.ts";

const ALL_EVENTS = ["created", "started", "nearby", "completed", "failed"];

/** A Brazilian mobile number of its own and an address of its own, so each test finds its messages. */
function recipient() {
  const digits = String(randomInt(10_000_000, 99_999_999));
  return {
    recipient_name: "Ana Maria",
    recipient_phone: `+55 11 9${digits.slice(0, 4)}-${digits.slice(4)}`,
    wa_id: `55119${digits}`,
    recipient_email: `ana-${digits}@example.com`,
  };
}

/** One run of the sender, as the database's wake-up call and job make it. */
async function runSender(): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack().apiUrl}/functions/v1/notifications/send`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack().serviceRoleKey}`, "content-type": "application/json" },
    body: "{}",
  });
  return { status: res.status, body: await res.json() };
}

interface Row {
  event: string;
  channel: string;
  status: string;
  attempts: number;
  error: string | null;
}

const rows = (deliveryId: string) =>
  db()<Row[]>`select event, channel, status, attempts, error from public.notifications
    where delivery_id = ${deliveryId} order by event, channel`;

/** How long the sender may take to settle what it was woken for. */
const SETTLE_MS = 15_000;

/** Waits until every message of the delivery has left the queue. */
const settled = (deliveryId: string, count: number) =>
  waitFor(`${count} messages settled`, async () => {
    const found = await rows(deliveryId);
    return found.length === count && found.every((r) => r.status !== "queued") && found;
  }, SETTLE_MS);

/** "A minute passes" for the delivery's messages: due now, queued a minute earlier. */
const minutePasses = (deliveryId: string) =>
  db()`update public.notifications set next_attempt_at = now(), created_at = created_at - interval '1 minute'
    where delivery_id = ${deliveryId} and status = 'queued'`;

const trackingLink = async (deliveryId: string) => {
  const [{ token }] = await db()`select token from private.delivery_tracking where delivery_id = ${deliveryId}`;
  return `${stack().apiUrl}/track/${token}`;
};

const whatsappTo = async (waId: string) => (await whatsapp.state()).messages.filter((m) => m.to === waId);
const mailsTo = async (address: string) => (await smtp.state()).mails.filter((m) => m.to.includes(address));

let company: TestCompany;

beforeAll(async () => {
  await whatsapp.reset();
  await smtp.reset();
  company = await createCompany("Notifica Ltda");
  // This company's recipients are told of every event, on both channels.
  const settings = await api("/api/v1/notifications/settings", {
    method: "PUT",
    token: company.owner.token,
    body: { events: ALL_EVENTS, channels: ["whatsapp", "email"] },
  });
  expect(settings.status).toBe(200);
});

describe("each event", () => {
  it("sends exactly one message per channel, with the tracking link, in Portuguese", async () => {
    const who = recipient();
    const delivery = await createInvoiceDelivery(company, who);
    const link = await trackingLink(delivery.id);
    await settled(delivery.id, 2); // created
    expect((await moveDelivery(company.driver, delivery.id, "accept")).status).toBe(200);
    expect((await moveDelivery(company.driver, delivery.id, "start")).status).toBe(200);
    await settled(delivery.id, 4);
    // The ETA the tracking refresh measures (functions/api/eta.ts calls the same function): 4 minutes away.
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 1200, 240)`;
    await settled(delivery.id, 6);
    expect((await moveDelivery(company.driver, delivery.id, "complete")).status).toBe(200);
    const final = await settled(delivery.id, 8);
    expect(final.map((r) => `${r.event}/${r.channel}/${r.status}`)).toEqual([
      "completed/email/sent",
      "completed/whatsapp/sent",
      "created/email/sent",
      "created/whatsapp/sent",
      "nearby/email/sent",
      "nearby/whatsapp/sent",
      "started/email/sent",
      "started/whatsapp/sent",
    ]);

    const messages = await whatsappTo(who.wa_id);
    expect(messages.map((m) => m.template).sort()).toEqual([
      "entrega_a_caminho",
      "entrega_chegando",
      "entrega_concluida",
      "entrega_registrada",
    ]);
    for (const m of messages) {
      expect(m.language).toBe("pt_BR");
      expect(m.parameters[0]).toBe("Ana");
      expect(m.parameters).toContain("Notifica Ltda");
      expect(m.parameters.at(-1)).toBe(link);
      expect(m.text).toMatch(/^Olá, Ana! /);
    }
    expect(messages.find((m) => m.template === "entrega_chegando")!.parameters[2]).toMatch(/^[1-4] minutos?$/);

    const mails = await mailsTo(who.recipient_email);
    expect(mails.map((m) => m.subject).sort()).toEqual([
      "Notifica Ltda registrou uma entrega para você",
      "Sua entrega de Notifica Ltda está a caminho",
      "Sua entrega de Notifica Ltda está chegando",
      "Sua entrega de Notifica Ltda foi concluída",
    ]);
    for (const mail of mails) {
      expect(mail.from).toEqual({ name: "Notifica Ltda", address: "entregas@delivery.local" });
      expect(mail.text).toContain(link);
      expect(mail.html).toContain(`href="${link}"`);
      expect(mail.text).toMatch(/^Olá, Ana! /);
    }

    // The panel's list: masked destinations, what happened.
    const list = await api(`/api/v1/deliveries/${delivery.id}/notifications`, { token: company.admin.token });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(8);
    expect(list.body.items[0]).toEqual({
      event: "created",
      channel: expect.any(String),
      to: expect.stringMatching(/^(\*{5}\d{4}|a\*\*\*@example\.com)$/),
      status: "sent",
      attempts: 1,
      sent_at: expect.any(String),
      error: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(who.recipient_email);
    expect(JSON.stringify(list.body)).not.toContain(who.wa_id.slice(4));

    // The logs name the destinations masked only, and never the WhatsApp token.
    const log = readFileSync(stack().logFile, "utf8");
    expect(log).toMatch(new RegExp(`"notification_sent".*"delivery_id":"${delivery.id}"`));
    expect(log).not.toContain(who.recipient_email);
    expect(log).not.toContain(who.wa_id.slice(4));
    expect(log).not.toContain("test-whatsapp-token");
  });

  it("failed sends one message per channel, and a reopened delivery failing again sends no second", async () => {
    const who = recipient();
    const delivery = await createInvoiceDelivery(company, { ...who, driver_id: company.driver.driverId });
    const link = await trackingLink(delivery.id);
    expect((await moveDelivery(company.driver, delivery.id, "start")).status).toBe(200);
    await settled(delivery.id, 4); // created and started, on both channels
    const fail = { reason: "recipient_absent", note: "Ninguém atendeu" };
    expect((await moveDelivery(company.driver, delivery.id, "fail", fail)).status).toBe(200);
    const final = await settled(delivery.id, 6);
    expect(final.filter((r) => r.event === "failed").map((r) => `${r.channel}/${r.status}`)).toEqual([
      "email/sent",
      "whatsapp/sent",
    ]);
    const [message, ...more] = (await whatsappTo(who.wa_id)).filter((m) => m.template === "entrega_nao_realizada");
    expect(more).toEqual([]);
    expect(message.parameters).toEqual(["Ana", "Notifica Ltda", link]);
    expect(message.text).toMatch(/^Olá, Ana! Não conseguimos concluir sua entrega de Notifica Ltda\. /);
    const mails = (await mailsTo(who.recipient_email)).filter((m) => /Não conseguimos/.test(m.subject));
    expect(mails.map((m) => m.subject)).toEqual(["Não conseguimos concluir sua entrega de Notifica Ltda"]);
    expect(mails[0].text).toContain(link);

    // Reopened, taken again and failed again: the outbox's key holds, nobody is told twice.
    expect((await moveDelivery(company.admin, delivery.id, "reopen")).status).toBe(200);
    for (const action of ["accept", "start"]) {
      expect((await moveDelivery(company.driver, delivery.id, action)).status).toBe(200);
    }
    expect((await moveDelivery(company.driver, delivery.id, "fail", fail)).status).toBe(200);
    expect((await rows(delivery.id)).map((r) => `${r.event}/${r.channel}`)).toEqual(
      final.map((r) => `${r.event}/${r.channel}`),
    );
  });

  it("nearby is sent once, when the ETA first comes to 5 minutes", async () => {
    const who = recipient();
    const delivery = await createInvoiceDelivery(company, { ...who, driver_id: company.driver.driverId });
    expect((await moveDelivery(company.driver, delivery.id, "start")).status).toBe(200);
    await settled(delivery.id, 4); // created and started, on both channels
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 5000, 900)`;
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 3000, 400)`;
    expect((await rows(delivery.id)).filter((r) => r.event === "nearby")).toEqual([]);
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 1500, 300)`;
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 500, 120)`;
    await db()`select public.record_eta(${delivery.id}, -23.56, -46.65, 100, 30)`;
    await settled(delivery.id, 6);
    expect((await whatsappTo(who.wa_id)).filter((m) => m.template === "entrega_chegando")).toHaveLength(1);
    expect((await mailsTo(who.recipient_email)).filter((m) => /chegando/.test(m.subject))).toHaveLength(1);
  });
});

describe("providers failing", () => {
  it("a provider down for a minute, then back: the message is sent once, after it returns", async () => {
    const who = recipient();
    const delivery = await createInvoiceDelivery(company, { ...who, driver_id: company.driver.driverId });
    await settled(delivery.id, 2); // created
    await whatsapp.down();
    await smtp.down();
    try {
      expect((await moveDelivery(company.driver, delivery.id, "start")).status).toBe(200);
      // The first attempt (the wake-up after the commit) fails: queued again, saying why.
      const failedOnce = await waitFor("a failed first attempt", async () => {
        const started = (await rows(delivery.id)).filter((r) => r.event === "started");
        return started.length === 2 && started.every((r) => r.attempts >= 1 && r.error) && started;
      }, SETTLE_MS);
      expect(failedOnce.map((r) => r.status)).toEqual(["queued", "queued"]);
      // Half a minute later, still down.
      await minutePasses(delivery.id);
      expect((await runSender()).status).toBe(200);
      const stillDown = (await rows(delivery.id)).filter((r) => r.event === "started");
      expect(stillDown.map((r) => r.status)).toEqual(["queued", "queued"]);
      expect(stillDown.every((r) => r.attempts >= 2)).toBe(true);
    } finally {
      await whatsapp.up();
      await smtp.up();
    }
    expect(await whatsappTo(who.wa_id)).toHaveLength(1); // only created
    await minutePasses(delivery.id);
    expect((await runSender()).status).toBe(200);
    const sent = await settled(delivery.id, 4);
    expect(sent.every((r) => r.status === "sent" && r.error === null)).toBe(true);
    expect((await whatsappTo(who.wa_id)).filter((m) => m.template === "entrega_a_caminho")).toHaveLength(1);
    expect((await mailsTo(who.recipient_email)).filter((m) => /a caminho/.test(m.subject))).toHaveLength(1);
  });

  it("a refused number or address fails with the provider's reason, and is not tried again", async () => {
    const delivery = await createInvoiceDelivery(company, {
      recipient_name: "Bruno",
      recipient_phone: "+55 11 3333-4444", // a landline: not on WhatsApp
      recipient_email: "nobody@example.com", // a mailbox the relay does not have
      driver_id: company.driver.driverId,
    });
    const failed = await settled(delivery.id, 2);
    expect(failed.map((r) => [r.channel, r.status, r.attempts])).toEqual([["email", "failed", 1], [
      "whatsapp",
      "failed",
      1,
    ]]);
    expect(failed.find((r) => r.channel === "whatsapp")!.error).toMatch(/^\(#131026\) Message Undeliverable\./);
    const mailError = failed.find((r) => r.channel === "email")!.error!;
    expect(mailError).toMatch(/550/);
    expect(mailError).toContain("n***@example.com");
    expect(mailError).not.toContain("nobody@example.com");
    // Time passes, the sender runs again: nothing more is tried.
    await minutePasses(delivery.id);
    expect((await runSender()).status).toBe(200);
    expect((await rows(delivery.id)).map((r) => r.attempts)).toEqual([1, 1]);
    expect(await whatsappTo("551133334444")).toHaveLength(0);
    expect(await mailsTo("nobody@example.com")).toHaveLength(0);
  });
});

describe("senders at once", () => {
  it("20 concurrent senders over 500 queued messages send each exactly once", async () => {
    const other = await createCompany("Lote Ltda");
    const prefix = String(randomInt(100, 999));
    // 250 deliveries whose recipients have a phone and an address, and for each a `completed` message per channel.
    const deliveries = await db()<{ id: string }[]>`
      insert into public.deliveries (company_id, status, payment_status, payment_method, origin_address, origin_lat,
        origin_lng, destination_address, destination_lat, destination_lng, distance_m, duration_s, price, driver_share,
        recipient_name, recipient_phone, recipient_email)
      select ${other.companyId}, 'pending', 'invoiced', 'invoice', 'O', 0, 0, 'D', 0, 0, 1, 1, 10, 0.8,
        'Cliente ' || i, '+55 21 9' || ${prefix} || lpad(i::text, 5, '0'), 'lote-' || ${prefix} || '-' || i || '@example.com'
      from generate_series(1, 250) i
      returning id`;
    await db()`insert into public.notifications (company_id, delivery_id, event, channel)
      select ${other.companyId}, d.id, 'completed', c from unnest(${deliveries.map((d) => d.id)}::uuid[]) d (id),
        unnest(array['whatsapp', 'email']) c`;
    const runs = await Promise.all(Array.from({ length: 20 }, () => runSender()));
    expect(runs.map((r) => r.status)).toEqual(Array(20).fill(200));

    const ids = deliveries.map((d) => d.id);
    const outcome = await waitFor("500 messages sent", async () => {
      const [counts] = await db()`select count(*) filter (where status = 'sent')::int as sent,
          count(*) filter (where attempts <> 1)::int as retried
        from public.notifications where delivery_id = any (${ids}::uuid[])`;
      return counts.sent === 500 && counts;
    }, SETTLE_MS);
    expect(outcome.retried).toBe(0);
    const messages = (await whatsapp.state()).messages.filter((m) => m.to.startsWith(`55219${prefix}`));
    expect(messages).toHaveLength(250);
    expect(new Set(messages.map((m) => m.to)).size).toBe(250);
    const mails = (await smtp.state()).mails.filter((m) => m.to[0].startsWith(`lote-${prefix}-`));
    expect(mails).toHaveLength(250);
    expect(new Set(mails.map((m) => m.messageId)).size).toBe(250);
    expect(new Set(mails.map((m) => m.to[0])).size).toBe(250);
  });
});

describe("the API", () => {
  it("settings: owners and admins read and choose; others may not; bad input is 400", async () => {
    const fresh = await createCompany("Padrão Ltda");
    const read = await api("/api/v1/notifications/settings", { token: fresh.admin.token });
    expect(read).toMatchObject({
      status: 200,
      body: { events: ["started", "nearby", "completed", "failed"], channels: ["whatsapp", "email"] },
    });
    const put = await api("/api/v1/notifications/settings", {
      method: "PUT",
      token: fresh.admin.token,
      body: { events: ["completed", "created"], channels: ["email"] },
    });
    expect(put).toMatchObject({ status: 200, body: { events: ["created", "completed"], channels: ["email"] } });
    for (const who of [fresh.legacyAdmin, fresh.driver]) {
      expect((await api("/api/v1/notifications/settings", { token: who.token })).status).toBe(403);
    }
    const bad = await api("/api/v1/notifications/settings", {
      method: "PUT",
      token: fresh.owner.token,
      body: { events: ["paid"], channels: ["sms"] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail.map((d: any) => d.loc.join("."))).toEqual(["body.events.0", "body.channels.0"]);
  });

  it("a delivery's messages and erasing its recipient: managers of its company only", async () => {
    const who = recipient();
    const delivery = await createInvoiceDelivery(company, { ...who, driver_id: company.driver.driverId });
    const stranger = await createCompany("Outra Ltda");
    expect((await api(`/api/v1/deliveries/${delivery.id}/notifications`, { token: company.driver.token })).status)
      .toBe(403);
    expect((await api(`/api/v1/deliveries/${delivery.id}/notifications`, { token: stranger.owner.token })).status)
      .toBe(404);
    expect(
      (await api(`/api/v1/deliveries/${delivery.id}/erase-recipient`, { method: "POST", token: stranger.owner.token }))
        .status,
    ).toBe(404);
    expect(
      (await api(`/api/v1/deliveries/${delivery.id}/erase-recipient`, { method: "POST", token: company.driver.token }))
        .status,
    ).toBe(403);

    const erased = await api(`/api/v1/deliveries/${delivery.id}/erase-recipient`, {
      method: "POST",
      token: company.legacyAdmin.token,
    });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ id: delivery.id, recipient_name: null, recipient_phone: null });
    expect(erased.body.recipient_email).toBeNull();
    const list = await api(`/api/v1/deliveries/${delivery.id}/notifications`, { token: company.owner.token });
    expect(list.body.items.every((m: any) => m.to === null)).toBe(true);
    const [history] = await db()`select actor_id from public.delivery_history
      where delivery_id = ${delivery.id} and trigger = 'erase_recipient'`;
    expect(history.actor_id).toBe(company.legacyAdmin.userId);

    // 30 days after the delivery ended, its tracking link answers as a wrong one.
    const token = (await trackingLink(delivery.id)).split("/").pop();
    await db()`update public.deliveries set status = 'cancelled', cancelled_at = now() - interval '31 days'
      where id = ${delivery.id}`;
    expect((await api(`/api/v1/track/${token}`)).status).toBe(404);
  });

  it("the sender answers only the service role", async () => {
    const res = await fetch(`${stack().apiUrl}/functions/v1/notifications/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${company.owner.token}` },
    });
    expect(res.status).toBe(401);
  });
});

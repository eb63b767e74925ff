// The local mail catcher: what `supabase start` gives with Mailpit (Inbucket
// before it). Mail the local Auth sends (confirmations, invitations, magic links,
// recovery, e-mail changes, reauthentication), mail sent to the stack's SMTP
// listener (local/simulators/smtp.ts: the notifications to recipients) and a
// copy of each message the WhatsApp simulator accepts are kept in memory and served at
// /_mail/api/v1 in Mailpit's JSON shapes (the
// version in local/versions.ts): GET messages, GET message/{ID|latest},
// GET search?query=to:<address>, DELETE messages. The log records that a mail
// was sent and where to read it, never its links or codes.
import { Hono } from "hono";
import { log } from "./log.ts";

export interface Mail {
  to: string;
  subject: string;
  html: string;
  text: string;
  /** The sender; Supabase Auth's by default. */
  from?: { Name: string; Address: string };
}

interface Stored extends Mail {
  id: string;
  created: Date;
  read: boolean;
}

const FROM = { Name: "Supabase Auth", Address: "admin@email.com" };
const PREFIX = "/_mail/api/v1";
/** Mailpit keeps the newest 500 messages by default. */
const MAX_MESSAGES = 500;

export class Mailbox {
  readonly #messages: Stored[] = [];

  send(mail: Mail): void {
    const stored = {
      ...mail,
      id: crypto.randomUUID().replaceAll("-", "").slice(0, 22),
      created: new Date(),
      read: false,
    };
    this.#messages.unshift(stored);
    this.#messages.length = Math.min(this.#messages.length, MAX_MESSAGES);
    log("mail_sent", { to: mail.to, subject: mail.subject, mailbox: `${PREFIX}/message/${stored.id}` });
  }

  #summary(m: Stored) {
    return {
      ID: m.id,
      MessageID: `${m.id}@local`,
      Read: m.read,
      From: m.from ?? FROM,
      To: [{ Name: "", Address: m.to }],
      Cc: [],
      Bcc: [],
      ReplyTo: [],
      Subject: m.subject,
      Created: m.created.toISOString(),
      Tags: [],
      Size: m.html.length + m.text.length,
      Attachments: 0,
      Snippet: m.text.replace(/\s+/g, " ").trim().slice(0, 250),
    };
  }

  #list(messages: Stored[], url: URL) {
    const start = Math.max(0, Number(url.searchParams.get("start")) || 0);
    const limit = Math.max(1, Number(url.searchParams.get("limit")) || 50);
    const page = messages.slice(start, start + limit);
    return {
      total: this.#messages.length,
      unread: this.#messages.filter((m) => !m.read).length,
      count: page.length,
      messages_count: messages.length,
      start,
      tags: [],
      messages: page.map((m) => this.#summary(m)),
    };
  }

  list(url: URL): unknown {
    return this.#list(this.#messages, url);
  }

  clear(): void {
    this.#messages.length = 0;
  }

  search(url: URL): unknown {
    const query = url.searchParams.get("query") ?? "";
    const to = /^to:"?([^"\s]+)"?$/i.exec(query.trim())?.[1]?.toLowerCase();
    const found = this.#messages.filter((m) =>
      to ? m.to.toLowerCase() === to : `${m.subject} ${m.text}`.toLowerCase().includes(query.toLowerCase())
    );
    return this.#list(found, url);
  }

  /** One message in full, marked read; "latest" is the newest. */
  message(id: string): unknown | null {
    const message = id === "latest" ? this.#messages[0] : this.#messages.find((m) => m.id === id);
    if (!message) return null;
    message.read = true;
    const { Created: _created, Snippet: _snippet, ...summary } = this.#summary(message);
    return {
      ...summary,
      ReturnPath: (message.from ?? FROM).Address,
      Date: message.created.toISOString(),
      Text: message.text,
      HTML: message.html,
      Inline: [],
    };
  }
}

const text = (body: string, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

/** Mailpit's message API over the mailbox; local/server.ts mounts it at /_mail/api/v1. */
export function createMailboxApp(mailbox: Mailbox): Hono {
  const app = new Hono();
  app.get("/messages", (c) => c.json(mailbox.list(new URL(c.req.url))));
  app.delete("/messages", () => {
    mailbox.clear();
    return text("ok");
  });
  app.get("/search", (c) => c.json(mailbox.search(new URL(c.req.url))));
  app.get("/message/:id", (c) => {
    const message = mailbox.message(c.req.param("id"));
    return message ? c.json(message) : text("message not found", 404);
  });
  app.all("*", () => text("404 page not found", 404));
  return app;
}

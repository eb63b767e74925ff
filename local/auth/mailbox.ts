// The local mail catcher: what `supabase start` gives with Mailpit (Inbucket
// before it). Mail the local Auth sends (password recovery, e-mail change) is
// kept in memory and served at /_mail/api/v1 in Mailpit's JSON shapes (the
// version in local/versions.ts): GET messages, GET message/{ID|latest},
// GET search?query=to:<address>, DELETE messages. The log records that a mail
// was sent and where to read it, never its links or codes.
import { log } from "./log.ts";

export interface Mail {
  to: string;
  subject: string;
  html: string;
  text: string;
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
      From: FROM,
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

  handle(req: Request): Response {
    const url = new URL(req.url);
    const path = url.pathname.slice(PREFIX.length);
    if (req.method === "GET" && path === "/messages") return Response.json(this.#list(this.#messages, url));
    if (req.method === "DELETE" && path === "/messages") {
      this.#messages.length = 0;
      return new Response("ok", { headers: { "content-type": "text/plain" } });
    }
    if (req.method === "GET" && path === "/search") {
      const query = url.searchParams.get("query") ?? "";
      const to = /^to:"?([^"\s]+)"?$/i.exec(query.trim())?.[1]?.toLowerCase();
      const found = this.#messages.filter((m) =>
        to ? m.to.toLowerCase() === to : `${m.subject} ${m.text}`.toLowerCase().includes(query.toLowerCase())
      );
      return Response.json(this.#list(found, url));
    }
    const single = /^\/message\/([^/]+)$/.exec(path);
    if (req.method === "GET" && single) {
      const message = single[1] === "latest" ? this.#messages[0] : this.#messages.find((m) => m.id === single[1]);
      if (!message) {
        return new Response("message not found", { status: 404, headers: { "content-type": "text/plain" } });
      }
      message.read = true;
      const { Created: _created, Snippet: _snippet, ...summary } = this.#summary(message);
      return Response.json({
        ...summary,
        ReturnPath: FROM.Address,
        Date: message.created.toISOString(),
        Text: message.text,
        HTML: message.html,
        Inline: [],
      });
    }
    return new Response("404 page not found", { status: 404, headers: { "content-type": "text/plain" } });
  }
}

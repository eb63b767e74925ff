// An SMTP server that keeps what it receives: the local mailbox's listener
// (Mailpit listens for SMTP the same way, and `supabase start` prints its
// port), and, under vitest, the loopback fake of an SMTP relay. smtp-server
// speaks the protocol and postal-mime reads the message. Runtime-neutral
// (Node's net, which Deno provides): the stack runs it under Deno, the test
// suite under Node. No TLS, no login required (a login is accepted as given),
// as Mailpit's defaults.
import PostalMime from "postal-mime";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: { name: string; address: string };
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string | null;
  receivedAt: string;
}

/** An SMTP reply that refuses a command: a 4xx (try later) or a 5xx (never). */
export interface Refusal {
  code: number;
  message: string;
}

export interface SmtpOptions {
  hostname?: string;
  /** 0: any free port. */
  port: number;
  receive(mail: ReceivedMail): void;
  /** Asked at MAIL FROM: a refusal of every message (a relay in trouble), or null. */
  refuseMessage?(): Refusal | null;
  /** Asked at RCPT TO: a refusal of this recipient, or null. */
  refuseRecipient?(address: string): Refusal | null;
  /** Milliseconds to wait before accepting a message's data (a slow relay). */
  delayMs?(): number;
}

export interface SmtpListener {
  port: number;
  close(): Promise<void>;
}

function refusal(refused: Refusal): Error {
  return Object.assign(new Error(refused.message), { responseCode: refused.code });
}

export async function startSmtpServer(options: SmtpOptions): Promise<SmtpListener> {
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback, as Mailpit's default listener: no STARTTLS offered.
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    size: 1 << 20,
    // Stopping does not wait long for clients that stay connected.
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? "local" });
    },
    onMailFrom(_address, _session, callback) {
      const refused = options.refuseMessage?.();
      callback(refused ? refusal(refused) : null);
    },
    onRcptTo(address, _session, callback) {
      const refused = options.refuseRecipient?.(address.address);
      callback(refused ? refusal(refused) : null);
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("end", async () => {
        try {
          const delay = options.delayMs?.() ?? 0;
          if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
          const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
          let offset = 0;
          for (const chunk of chunks) bytes.set(chunk, (offset += chunk.length) - chunk.length);
          const parsed = await PostalMime.parse(bytes);
          options.receive({
            from: { name: parsed.from?.name ?? "", address: parsed.from?.address ?? "" },
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            html: parsed.html ?? "",
            messageId: parsed.messageId ?? null,
            receivedAt: new Date().toISOString(),
          });
          callback();
        } catch (error) {
          callback(refusal({ code: 451, message: `could not read the message: ${(error as Error).message}` }));
        }
      });
    },
  });
  server.on("error", () => {/* a client that went away; the server goes on */});
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(options.port, options.hostname ?? "127.0.0.1", () => {
      resolve((server.server.address() as { port: number }).port);
    });
  });
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

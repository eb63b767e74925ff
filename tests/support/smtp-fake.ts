// The loopback fake of an SMTP relay (local/simulators/smtp.ts), with an HTTP
// control server beside it as fake-server.ts gives the HTTP fakes: tests make
// it refuse every message for now (451), refuse recipients for good (550), slow
// or down, and read what it received. An address whose mailbox is `nobody@`
// is always refused for good, as a relay refuses a mailbox that does not exist.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type ReceivedMail, type SmtpListener, startSmtpServer } from "../../local/simulators/smtp.ts";
import type { FakeHandle } from "./fake-server.ts";

export interface SmtpFakeState {
  mails: ReceivedMail[];
}

export async function startSmtpFake(): Promise<FakeHandle> {
  let mode = "ok";
  let delayMs = 0;
  let mails: ReceivedMail[] = [];
  let port = 0;
  const open = async (): Promise<SmtpListener> => {
    const listener = await startSmtpServer({
      port,
      receive: (mail) => mails.push(mail),
      refuseMessage: () => mode === "fail" ? { code: 451, message: "4.3.0 Temporary failure, try again later" } : null,
      refuseRecipient: (address) =>
        mode === "reject" || address.startsWith("nobody@")
          ? { code: 550, message: `5.1.1 <${address}>: Recipient address rejected: User unknown` }
          : null,
      delayMs: () => delayMs,
    });
    port = listener.port;
    return listener;
  };
  let listener: SmtpListener | null = await open();

  const control = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString() || "{}") : {};
    const action = `${req.method} ${req.url}`;
    if (action === "POST /mode") {
      if (body.mode !== undefined) mode = body.mode;
      if (body.delayMs !== undefined) delayMs = body.delayMs;
    } else if (action === "POST /down") {
      await listener?.close();
      listener = null;
    } else if (action === "POST /up") {
      listener ??= await open();
    } else if (action === "POST /reset") {
      mode = "ok";
      delayMs = 0;
      mails = [];
      listener ??= await open();
    } else if (action !== "GET /state") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ name: "smtp", up: listener !== null, mode, delayMs, state: { mails } }));
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    async close() {
      await listener?.close();
      await new Promise((resolve) => control.close(resolve));
    },
  };
}

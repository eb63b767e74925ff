// WhatsApp template parameters and e-mail headers from what companies and recipients typed: the Cloud API refuses a
// parameter with a newline or a tab, or more than 4 consecutive spaces (error 132018), and an empty one; a CR/LF in a
// company's name must not become a header of the e-mail (its subject and From are written from it).
import nodemailer from "nodemailer";
import { describe, expect, it } from "vitest";
import {
  MAX_PARAMETER_LENGTH,
  oneLine,
  parametersOf,
  renderEmail,
  TEMPLATES,
} from "../../../functions/notifications/messages.ts";

const facts = {
  first_name: "Ana\r\nMaria\t\t     da   Silva",
  company_name: "Entregas\r\nBcc: vitima@example.com\r\n\r\nX",
  eta_at: null,
  link: "https://app.example/t/abc",
  now: new Date(),
};

/** What the Cloud API checks of a text parameter. */
const acceptable = (text: string) =>
  text.length > 0 && !/[\r\n\t]/.test(text) && !/ {5,}/.test(text) && [...text].length <= MAX_PARAMETER_LENGTH;

describe("WhatsApp template parameters", () => {
  it("carry no newline or tab, no run of more than 4 spaces, nothing empty, nothing over the length bound", () => {
    for (const template of Object.values(TEMPLATES)) {
      const parameters = parametersOf(template, facts);
      expect(parameters.every(acceptable), JSON.stringify(parameters)).toBe(true);
      expect(parameters[0]).toBe("Ana Maria da Silva");
    }
    expect(oneLine(" \r\n\t ")).toBe("-");
    expect(oneLine("", "cliente")).toBe("cliente");
    const long = oneLine("ã".repeat(500));
    expect([...long]).toHaveLength(MAX_PARAMETER_LENGTH);
    expect(long.endsWith("…")).toBe(true);
    expect(oneLine("a\u2028b\u0085c\u0000d")).toBe("a b c d");
  });
});

describe("the e-mail of a company whose name has CR/LF", () => {
  it("has one Subject and one From, and no header the name tried to add", async () => {
    const email = renderEmail("created", facts);
    expect(email.subject).not.toMatch(/[\r\n]/);
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "\r\n" });
    const info = await transport.sendMail({
      from: { name: oneLine(facts.company_name), address: "entregas@platform.example" },
      to: "ana@example.com",
      ...email,
    });
    const raw = (info.message as Buffer).toString("utf8");
    const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
    const names = head.split("\r\n").filter((line) => !/^\s/.test(line)).map((line) =>
      line.split(":")[0].toLowerCase()
    );
    expect(names).not.toContain("bcc");
    expect(names.filter((n) => n === "subject")).toHaveLength(1);
    expect(names.filter((n) => n === "from")).toHaveLength(1);
  });

  it("nodemailer itself keeps a CR/LF sender name out of the headers (a second guard)", async () => {
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "\r\n" });
    const info = await transport.sendMail({
      from: { name: facts.company_name, address: "entregas@platform.example" },
      to: "ana@example.com",
      subject: "Sua entrega\r\nBcc: vitima@example.com",
      text: "x",
    });
    const raw = (info.message as Buffer).toString("utf8");
    const head = raw.slice(0, raw.indexOf("\r\n\r\n"));
    expect(head.split("\r\n").some((line) => /^bcc:/i.test(line))).toBe(false);
  });
});

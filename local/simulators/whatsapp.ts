// A WhatsApp Cloud API simulator (docs/notifications.md): `POST
// /{version}/{phone_number_id}/messages` with a template message, answered as
// Meta's Graph API answers, with the templates the platform's account has
// approved (whatsapp-templates.json, the simulated account's own fixture, as
// Meta keeps them apart from the product that sends them; a test checks that
// it approves every template the product sends), rendered and kept. Meta's
// refusals, in Meta's error body (`{"error": {message, type, code,
// error_data: {messaging_product, details}, fbtrace_id}}`, HTTP 400 or 401):
// no bearer token (190), a malformed request (100), an unknown template
// (132001), a `to` that is not a number (100), and a number that is not on
// WhatsApp (131026): here, a Brazilian number that is not a mobile (a landline,
// e.g. +55 11 3333-4444). `GET /inbox` lists what it accepted, newest first
// (the simulators page shows it). Routed with Hono and runtime-neutral (a fetch
// handler), so the local stack serves it and the test suite wraps it in its loopback fake.
import { Hono } from "hono";
import APPROVED from "./whatsapp-templates.json" with { type: "json" };
import { controlled } from "./controls.ts";

export interface WhatsAppMessage {
  id: string;
  phone_number_id: string;
  to: string;
  template: string;
  language: string;
  parameters: string[];
  /** The template's body with the parameters in place, as the recipient's phone shows it. */
  text: string;
  received_at: string;
}

export interface WhatsAppSimulator {
  fetch(req: Request): Promise<Response>;
  /** "ok"; "fail" answers 500 with Meta's error 131000 (something went wrong), to be retried. */
  mode: "ok" | "fail";
  delayMs: number;
  messages: WhatsAppMessage[];
}

export interface WhatsAppSimulatorOptions {
  /** Each accepted message is also handed here (the local stack copies it into its mailbox). */
  onMessage?(message: WhatsAppMessage): void;
}

/** A template approved at Meta: its name, language and body, with {{1}}, {{2}}, ... for the parameters. */
export interface ApprovedTemplate {
  name: string;
  language: string;
  body: string;
}

export const APPROVED_TEMPLATES: ApprovedTemplate[] = APPROVED;
const BY_NAME = new Map(APPROVED_TEMPLATES.map((t) => [t.name, t]));

/** The body as the recipient's phone shows it: each {{n}} replaced by the n-th parameter. */
const render = (body: string, parameters: string[]) =>
  body.replace(/\{\{(\d+)\}\}/g, (whole, n) => parameters[Number(n) - 1] ?? whole);
const MAX_KEPT = 500;

function metaError(status: number, code: number, message: string, details: string, type = "OAuthException") {
  return Response.json({
    error: {
      message,
      type,
      code,
      error_data: { messaging_product: "whatsapp", details },
      fbtrace_id: `A${crypto.randomUUID().replaceAll("-", "").slice(0, 22)}`,
    },
  }, { status });
}

/** Whether a number (digits, with the country code) is on WhatsApp, as the simulator decides it. */
export function onWhatsApp(digits: string): boolean {
  // Brazil: 55, a two-digit area code, then a mobile's nine digits starting with 9.
  if (digits.startsWith("55")) return /^55\d{2}9\d{8}$/.test(digits);
  return digits.length >= 8 && digits.length <= 15;
}

interface TemplateRequest {
  messaging_product?: unknown;
  to?: unknown;
  type?: unknown;
  template?: {
    name?: unknown;
    language?: { code?: unknown };
    components?: { type?: unknown; parameters?: { type?: unknown; text?: unknown }[] }[];
  };
}

export function createWhatsAppSimulator(options: WhatsAppSimulatorOptions = {}): WhatsAppSimulator {
  const app = new Hono();
  const sim: WhatsAppSimulator = { mode: "ok", delayMs: 0, messages: [], fetch: async (req) => await app.fetch(req) };
  const messagesPath = "/:version{v[0-9]+\\.[0-9]+}/:phone_number_id{[0-9]+}/messages";
  app.use("*", controlled(sim));
  app.get("/inbox", (c) => c.json({ messages: sim.messages }));
  app.post(messagesPath, async (c) => {
    const req = c.req.raw;
    if (!/^Bearer \S+$/.test(req.headers.get("authorization") ?? "")) {
      return metaError(401, 190, "Invalid OAuth access token - Cannot parse access token", "");
    }
    if (sim.mode === "fail") {
      return metaError(500, 131000, "(#131000) Something went wrong", "Something went wrong");
    }
    const body = await req.json().catch(() => null) as TemplateRequest | null;
    if (body?.messaging_product !== "whatsapp" || body.type !== "template" || typeof body.to !== "string") {
      return metaError(400, 100, "(#100) Invalid parameter", "messaging_product, type and to are required");
    }
    const template = BY_NAME.get(String(body.template?.name));
    const language = String(body.template?.language?.code);
    if (!template || language !== template.language) {
      return metaError(
        404,
        132001,
        "(#132001) Template name does not exist in the translation",
        `template name (${body.template?.name}) does not exist in ${language}`,
      );
    }
    const parameters = (body.template?.components ?? []).filter((c) => c.type === "body")
      .flatMap((c) => c.parameters ?? []).map((p) => String(p.text ?? ""));
    const expected = (template.body.match(/\{\{\d+\}\}/g) ?? []).reduce(
      (n, p) => Math.max(n, Number(p.slice(2, -2))),
      0,
    );
    if (parameters.length !== expected) {
      return metaError(
        400,
        132000,
        "(#132000) Number of parameters does not match the expected number of params",
        `body: number of localizable_params (${parameters.length}) does not match the expected number of params (${expected})`,
      );
    }
    const digits = body.to.replace(/\D/g, "");
    if (digits.length < 8 || digits.length > 15) {
      return metaError(400, 100, "(#100) Invalid parameter", "Parameter 'to' is not a valid phone number");
    }
    if (!onWhatsApp(digits)) {
      return metaError(
        400,
        131026,
        "(#131026) Message Undeliverable.",
        "Message Undeliverable: the recipient's phone number is not a WhatsApp phone number",
      );
    }
    const message: WhatsAppMessage = {
      id: `wamid.${btoa(crypto.randomUUID()).replaceAll("=", "")}`,
      phone_number_id: c.req.param("phone_number_id"),
      to: digits,
      template: template.name,
      language,
      parameters,
      text: render(template.body, parameters),
      received_at: new Date().toISOString(),
    };
    sim.messages.unshift(message);
    sim.messages.length = Math.min(sim.messages.length, MAX_KEPT);
    options.onMessage?.(message);
    return Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: digits }],
      messages: [{ id: message.id, message_status: "accepted" }],
    });
  });
  app.all(
    messagesPath,
    () => metaError(400, 100, "Unsupported get request.", "Only POST is supported", "GraphMethodException"),
  );
  app.notFound(() =>
    metaError(400, 100, "Unsupported post request.", "Unknown path components", "GraphMethodException")
  );
  return sim;
}

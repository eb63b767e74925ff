// What a recipient reads, in Brazilian Portuguese, for each event: the
// WhatsApp message templates (approved at Meta under these names, in pt_BR,
// with these bodies: docs/notifications.md lists them) and the e-mails, which
// say the same. Every message carries the delivery's tracking link. Pure: no
// I/O, so the local WhatsApp simulator renders the same templates.

import type { NotificationEvent } from "../_shared/notifications.ts";

/** What a message says: the recipient's first name (if known), the company, the ETA, the link. */
export interface MessageFacts {
  first_name: string | null;
  company_name: string;
  /** The expected arrival (ISO 8601), while the delivery is under way. */
  eta_at: string | null;
  /** The absolute tracking link. */
  link: string;
  /** When the message is written (the nearby message counts minutes from it). */
  now: Date;
  /** The recipient's handover code, when the company requires one: the code-carrying templates say it. */
  handover_code?: string | null;
}

export interface Template {
  /** The template's name at Meta. */
  name: string;
  /** Its body, with {{1}}, {{2}}, ... for the parameters, in order. */
  body: string;
  subject: string;
  parameters(facts: MessageFacts): string[];
}

const TIME_ZONE = "America/Sao_Paulo";
const clock = new Intl.DateTimeFormat("pt-BR", { timeZone: TIME_ZONE, hour: "2-digit", minute: "2-digit" });

const name = (facts: MessageFacts) => oneLine(facts.first_name ?? "", "cliente");
/** "14:35" in São Paulo's time, or words when the ETA is not known yet. */
const arrival = (facts: MessageFacts) => facts.eta_at ? clock.format(new Date(facts.eta_at)) : "em breve";
/** "5 minutos", "1 minuto", counted from when the message is written. */
function minutesAway(facts: MessageFacts): string {
  if (!facts.eta_at) return "alguns minutos";
  const minutes = Math.max(1, Math.round((new Date(facts.eta_at).getTime() - facts.now.getTime()) / 60_000));
  return minutes === 1 ? "1 minuto" : `${minutes} minutos`;
}

export const TEMPLATES: Record<NotificationEvent, Template> = {
  created: {
    name: "entrega_registrada",
    body: "Olá, {{1}}! {{2}} registrou uma entrega para você. Acompanhe por este link: {{3}}",
    subject: "{{2}} registrou uma entrega para você",
    parameters: (f) => [name(f), f.company_name, f.link],
  },
  started: {
    name: "entrega_a_caminho",
    body: "Olá, {{1}}! Sua entrega de {{2}} saiu para entrega e deve chegar por volta das {{3}}. " +
      "Acompanhe ao vivo: {{4}}",
    subject: "Sua entrega de {{2}} está a caminho",
    parameters: (f) => [name(f), f.company_name, arrival(f), f.link],
  },
  nearby: {
    name: "entrega_chegando",
    body: "Olá, {{1}}! O entregador de {{2}} chega em cerca de {{3}}. Acompanhe ao vivo: {{4}}",
    subject: "Sua entrega de {{2}} está chegando",
    parameters: (f) => [name(f), f.company_name, minutesAway(f), f.link],
  },
  completed: {
    name: "entrega_concluida",
    body: "Olá, {{1}}! Sua entrega de {{2}} foi concluída. Veja os detalhes: {{3}}",
    subject: "Sua entrega de {{2}} foi concluída",
    parameters: (f) => [name(f), f.company_name, f.link],
  },
  failed: {
    name: "entrega_nao_realizada",
    body: "Olá, {{1}}! Não conseguimos concluir sua entrega de {{2}}. {{2}} vai entrar em contato; " +
      "veja os detalhes: {{3}}",
    subject: "Não conseguimos concluir sua entrega de {{2}}",
    parameters: (f) => [name(f), f.company_name, f.link],
  },
};

/**
 * The templates of a delivery with a handover code (the company requires one): the same messages, with the 4 digits
 * the recipient gives the driver at the door, before the link. Only the recipient's messages ever carry the code.
 */
export const HANDOVER_TEMPLATES: Partial<Record<NotificationEvent, Template>> = {
  created: {
    name: "entrega_registrada_codigo",
    body: "Olá, {{1}}! {{2}} registrou uma entrega para você. Na entrega, informe o código {{3}} ao entregador. " +
      "Acompanhe por este link: {{4}}",
    subject: "{{2}} registrou uma entrega para você",
    parameters: (f) => [name(f), f.company_name, f.handover_code ?? "", f.link],
  },
  started: {
    name: "entrega_a_caminho_codigo",
    body: "Olá, {{1}}! Sua entrega de {{2}} saiu para entrega e deve chegar por volta das {{3}}. " +
      "Informe o código {{4}} ao entregador. Acompanhe ao vivo: {{5}}",
    subject: "Sua entrega de {{2}} está a caminho",
    parameters: (f) => [name(f), f.company_name, arrival(f), f.handover_code ?? "", f.link],
  },
  nearby: {
    name: "entrega_chegando_codigo",
    body: "Olá, {{1}}! O entregador de {{2}} chega em cerca de {{3}}. Informe o código {{4}} ao entregador. " +
      "Acompanhe ao vivo: {{5}}",
    subject: "Sua entrega de {{2}} está chegando",
    parameters: (f) => [name(f), f.company_name, minutesAway(f), f.handover_code ?? "", f.link],
  },
};

/** The template of an event for this message: with the handover code when the delivery has one. */
export const templateFor = (event: NotificationEvent, facts: MessageFacts): Template =>
  (facts.handover_code && HANDOVER_TEMPLATES[event]) || TEMPLATES[event];

/** Every template approved at Meta, by name. */
export const ALL_TEMPLATES: Template[] = [...Object.values(TEMPLATES), ...Object.values(HANDOVER_TEMPLATES)];

/** The most characters a parameter may have: a template's body, parameters in place, stays within Meta's 1,024. */
export const MAX_PARAMETER_LENGTH = 200;

/**
 * A text as a template parameter may carry it: the Cloud API refuses a parameter with a newline or a tab, or more
 * than 4 consecutive spaces (error 132018), and an empty one, so every run of white space or control characters is
 * one space, the ends are trimmed, at most MAX_PARAMETER_LENGTH characters are kept (whole code points, an
 * ellipsis marking the cut), and an empty text becomes `fallback`. E-mail subjects and senders are written from the
 * same parameters, so no CR or LF reaches a header either.
 */
export function oneLine(text: string, fallback = "-"): string {
  // deno-lint-ignore no-control-regex -- control characters are what this removes
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu, " ").trim();
  const chars = [...flat];
  const cut = chars.length > MAX_PARAMETER_LENGTH
    ? `${chars.slice(0, MAX_PARAMETER_LENGTH - 1).join("").trimEnd()}…`
    : flat;
  return cut || fallback;
}

/** A template's parameters for these facts, each made safe to send (oneLine). */
export function parametersOf(template: Template, facts: MessageFacts): string[] {
  return template.parameters(facts).map((text) => oneLine(text));
}

/** A template's text with its parameters in place ({{n}} is the n-th). */
export function fill(text: string, parameters: string[]): string {
  return text.replace(/\{\{(\d+)\}\}/g, (whole, n) => parameters[Number(n) - 1] ?? whole);
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export interface Email {
  subject: string;
  text: string;
  html: string;
}

/** The e-mail of an event: the template's sentence, the link as a button, in text and HTML. */
export function renderEmail(event: NotificationEvent, facts: MessageFacts): Email {
  const template = templateFor(event, facts);
  const parameters = parametersOf(template, facts);
  const sentence = fill(template.body, parameters);
  const footer = `Você recebe esta mensagem porque ${oneLine(facts.company_name)} tem uma entrega para você.`;
  const text = `${sentence}\n\n${footer}\n`;
  // The sentence ends with the link; in HTML the link is a button of its own.
  const lead = sentence.slice(0, sentence.lastIndexOf(facts.link)).trim();
  const html = `<!doctype html>\n<html lang="pt-BR"><body style="font-family: sans-serif">` +
    `<p>${escapeHtml(lead)}</p>` +
    `<p><a href="${escapeHtml(facts.link)}" style="display: inline-block; padding: 10px 16px; background: #0b5cad; ` +
    `color: #fff; text-decoration: none; border-radius: 4px">Acompanhar a entrega</a></p>` +
    `<p style="font-size: small; color: #555">${escapeHtml(footer)}<br>${escapeHtml(facts.link)}</p>` +
    `</body></html>\n`;
  return { subject: fill(template.subject, parameters), text, html };
}

// The mails GoTrue sends (internal/api/mail.go, internal/mailer): a code and a
// link per mail, the hash of the two stored on the user, GoTrue's default
// templates, and the limits on sending: one mail of a kind per user per
// `max_frequency`, and `email_sent` per hour for the whole project.
import { createHash } from "node:crypto";
import type { RequestContext } from "./context.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import type { Mail } from "./mailbox.ts";

/** GoTrue's crypto.GenerateTokenHash: hex SHA-224 of the address and the code. */
export function tokenHash(address: string, otp: string): string {
  return createHash("sha224").update(address + otp).digest("hex");
}

/** A code of `digits` decimal digits, each drawn without bias. */
export function generateOtp(digits: number): string {
  const out: string[] = [];
  while (out.length < digits) {
    for (const byte of crypto.getRandomValues(new Uint8Array(digits * 2))) {
      if (byte < 250 && out.length < digits) out.push(String(byte % 10));
    }
  }
  return out.join("");
}

/** A new code for `address`: the code itself, and its hash as stored (`pkce_` first for the PKCE flow). */
export function newToken(address: string, digits: number, pkce = false): { otp: string; stored: string } {
  const otp = generateOtp(digits);
  const hash = tokenHash(address, otp);
  return { otp, stored: pkce ? `pkce_${hash}` : hash };
}

/** GoTrue's encodeRedirectURL: a redirect the caller did not encode is encoded here. */
function encodeRedirect(url: string): string {
  return /[&=#]/.test(url) ? encodeURIComponent(url) : url;
}

/** The link of a mail: `{issuer}/verify?token=...&type=...&redirect_to=...` (GoTrue's getPath). */
export function verifyLink(issuer: string, token: string, type: string, redirectTo: string): string {
  return `${issuer}/verify?token=${encodeURIComponent(token)}&type=${type}&redirect_to=${encodeRedirect(redirectTo)}`;
}

export type MailKind = "signup" | "invite" | "magiclink" | "recovery" | "email_change" | "reauthentication";

/** GoTrue's default subjects and templates. */
const TEMPLATES: Record<MailKind, { subject: string; heading: string; sentence: string; linkText: string }> = {
  signup: {
    subject: "Confirm Your Email",
    heading: "Confirm Your Email",
    sentence: "Follow this link to confirm your email:",
    linkText: "Confirm your email address",
  },
  invite: {
    subject: "You have been invited",
    heading: "You have been invited",
    sentence: "You have been invited to create a user on {site}. Follow this link to accept the invite:",
    linkText: "Accept the invite",
  },
  magiclink: {
    subject: "Your Magic Link",
    heading: "Magic Link",
    sentence: "Follow this link to login:",
    linkText: "Log In",
  },
  recovery: {
    subject: "Reset Your Password",
    heading: "Reset password",
    sentence: "Follow this link to reset the password for your user:",
    linkText: "Reset password",
  },
  email_change: {
    subject: "Confirm Email Change",
    heading: "Confirm Change of Email",
    sentence: "Follow this link to confirm the update of your email from {email} to {newEmail}:",
    linkText: "Change Email",
  },
  reauthentication: {
    subject: "Confirm reauthentication",
    heading: "Confirm reauthentication",
    sentence: "",
    linkText: "",
  },
};

export interface MailParams {
  to: string;
  otp: string;
  /** The link, for every kind but reauthentication. */
  link?: string;
  siteUrl?: string;
  email?: string;
  newEmail?: string;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

export function renderMail(kind: MailKind, params: MailParams): Mail {
  const template = TEMPLATES[kind];
  if (kind === "reauthentication") {
    return {
      to: params.to,
      subject: template.subject,
      html: `<h2>${template.heading}</h2>\n\n<p>Enter the code: ${params.otp}</p>`,
      text: `${template.heading}\n\nEnter the code: ${params.otp}`,
    };
  }
  const sentence = template.sentence
    .replace("{site}", params.siteUrl ?? "")
    .replace("{email}", params.email ?? "")
    .replace("{newEmail}", params.newEmail ?? "");
  const link = params.link ?? "";
  const html = `<h2>${template.heading}</h2>\n\n<p>${escapeHtml(sentence)}</p>\n` +
    `<p><a href="${
      escapeHtml(link)
    }">${template.linkText}</a></p>\n<p>Alternatively, enter the code: ${params.otp}</p>`;
  const text = `${template.heading}\n\n${sentence}\n${template.linkText} ( ${link} )\n\n` +
    `Alternatively, enter the code: ${params.otp}`;
  return { to: params.to, subject: template.subject, html, text };
}

/** GoTrue's validateSentWithinFrequencyLimit: a second mail of a kind to one user within `max_frequency` is 429. */
export function checkFrequency(ctx: RequestContext, sentAt: Date | null | undefined): void {
  if (!sentAt) return;
  const left = sentAt.getTime() + ctx.project.maxFrequencyMs - Date.now();
  if (left > 0) throw errors.sentTooRecently(Math.trunc(left / 1000));
}

/**
 * GoTrue's sendEmail limit: `email_sent` per hour for the whole project, and
 * none at all when it is 0. Like GoTrue, the hourly count applies only when
 * sign-ups need confirming (GoTrue's "rate limits should still be applied to
 * autoconfirm" TODO), so it is taken here under the same condition.
 */
export function takeEmailAllowance(ctx: RequestContext): void {
  const { emailSent } = ctx.project.rateLimits;
  const allowed = emailSent === 0 ? false : ctx.project.mailerAutoconfirm || ctx.limiters.email.allow();
  if (!allowed) {
    log("rate_limited", { group: "email_sent" });
    throw errors.overEmailSendRateLimit();
  }
}

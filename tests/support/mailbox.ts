// The local mailbox (Mailpit's API at /_mail/api/v1) as a test reads it: the newest mail to an address,
// and the code and the link in it.
import { expect } from "vitest";

export interface Mail {
  Subject: string;
  Text: string;
  HTML: string;
  To: { Address: string }[];
}

async function mailbox(apiUrl: string, path: string) {
  return await (await fetch(`${apiUrl}/_mail/api/v1${path}`)).json();
}

/** Every mail to `address`, newest first (summaries). */
export async function mailsTo(apiUrl: string, address: string): Promise<{ ID: string; Subject: string }[]> {
  return (await mailbox(apiUrl, `/search?query=${encodeURIComponent(`to:${address}`)}`)).messages;
}

/** The newest mail to `address`, in full. */
export async function latestMailTo(apiUrl: string, address: string): Promise<Mail> {
  const found = await mailsTo(apiUrl, address);
  expect(found.length, `mail to ${address}`).toBeGreaterThan(0);
  return await mailbox(apiUrl, `/message/${found[0].ID}`);
}

/** The code of a mail ("enter the code: 123456", GoTrue's templates). */
export const codeIn = (mail: Mail) => /enter the code: (\d{6,10})/i.exec(mail.Text)![1];

/** The link of a mail. */
export const linkIn = (mail: Mail) => /href="([^"]+)"/.exec(mail.HTML)![1].replaceAll("&amp;", "&");

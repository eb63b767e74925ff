// Every read of the local simulators, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { ApiError } from "../../../api/client.ts";
import { config } from "../../../config.ts";
import { simulatorKeys } from "./keys.ts";

export interface WhatsAppMessage {
  id: string;
  to: string;
  template: string;
  text: string;
  received_at: string;
}

export interface MailSummary {
  ID: string;
  From: { Name: string; Address: string };
  To: { Address: string }[];
  Subject: string;
  Created: string;
}

async function read<T>(path: string): Promise<T> {
  const res = await fetch(`${config.apiUrl}${path}`).catch(() => null);
  if (!res?.ok) throw new ApiError(res?.status ?? 0, null);
  return (await res.json()) as T;
}

/** What the WhatsApp simulator received. */
export const whatsAppInboxQuery = () =>
  queryOptions({
    queryKey: simulatorKeys.whatsapp(),
    queryFn: () => read<{ messages: WhatsAppMessage[] }>("/_sim/whatsapp/inbox"),
  });

/** The e-mails in the local mailbox. */
export const mailsQuery = () =>
  queryOptions({
    queryKey: simulatorKeys.mails(),
    queryFn: () => read<{ messages: MailSummary[] }>("/_mail/api/v1/messages?limit=50"),
  });

/** One e-mail's text (a message does not change). */
export const mailQuery = (id: string) =>
  queryOptions({
    queryKey: simulatorKeys.mail(id),
    queryFn: () => read<{ Text: string }>(`/_mail/api/v1/message/${id}`),
    staleTime: Infinity,
  });

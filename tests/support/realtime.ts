// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Listening on a private Realtime topic with the real supabase-js client.
import { afterAll } from "vitest";
import { supabaseClient } from "./supabase.ts";

export type Client = ReturnType<typeof supabaseClient>;
export interface Message {
  event: string;
  payload: Record<string, any>;
}
export interface Listener {
  client: Client;
  status: string;
  inbox: Message[];
}

const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.removeAllChannels()));
});

/**
 * Joins `topic` with `token`; resolves with the join's status and the inbox of
 * the broadcasts named `event` ("*": every one). Channels close after the file.
 */
export async function listen(
  topic: string,
  token: string,
  { event = "*", client = supabaseClient() }: { event?: string; client?: Client } = {},
): Promise<Listener> {
  clients.push(client);
  await client.realtime.setAuth(token);
  const inbox: Message[] = [];
  const channel = client.channel(topic, { config: { private: true } })
    .on("broadcast", { event }, (m) => inbox.push({ event: m.event, payload: m.payload }));
  const status = await new Promise<string>((resolve) => channel.subscribe((s) => s !== "CLOSED" && resolve(s)));
  return { client, status, inbox };
}

/** Waits until `condition` holds or `timeoutMs` passes (the assertion that follows says which). */
export async function until(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

// Broadcast replay (Realtime's Messages.replay and RealtimeChannel's
// can_replay?/maybe_replay_messages): a private channel joined with
// `config.broadcast.replay = {since, limit}` first gets the topic's broadcasts
// stored in realtime.messages since `since` (Unix milliseconds), the last
// `limit` of them (1 to 25, 25 when not given), oldest first, each pushed as a
// broadcast whose meta says `replayed: true` and its id (the bytes of
// send_binary as bytes). A public channel may not replay; parameters that are not whole numbers are refused.
import type postgres from "postgres";
import { isPayload, type Payload } from "./protocol.ts";

const HARD_LIMIT = 25;
/** The Unix milliseconds Elixir's DateTime.from_unix/2 takes: the years -9999 to 9999. */
const MIN_UNIX_MS = -377_705_116_800_000;
const MAX_UNIX_MS = 253_402_300_799_999;

/** What a join asked of replay: nothing, something Realtime cannot read, or the window to replay. */
export type ReplayRequest =
  | { kind: "none" }
  | { kind: "invalid" }
  | { kind: "replay"; since: number; limit: number };

/** The join's `config.broadcast.replay`, read as Realtime reads it (`asked` says whether the key is there at all). */
export function replayRequest(broadcast: Payload): { asked: boolean; request: ReplayRequest } {
  if (!("replay" in broadcast)) return { asked: false, request: { kind: "none" } };
  const params = broadcast.replay;
  // Realtime replays only for a map; anything else asked for nothing to replay (but is still "asked").
  if (!isPayload(params)) return { asked: true, request: { kind: "none" } };
  const since = params.since;
  const limit = params.limit === null || params.limit === undefined || params.limit === false
    ? HARD_LIMIT
    : params.limit;
  if (!Number.isSafeInteger(since) || !Number.isSafeInteger(limit)) {
    return { asked: true, request: { kind: "invalid" } };
  }
  if ((since as number) < MIN_UNIX_MS || (since as number) > MAX_UNIX_MS) {
    return { asked: true, request: { kind: "invalid" } };
  }
  return {
    asked: true,
    request: { kind: "replay", since: since as number, limit: Math.max(Math.min(limit as number, HARD_LIMIT), 1) },
  };
}

export interface ReplayedMessage {
  id: string;
  event: string | null;
  payload: unknown;
  /** The bytes of a realtime.send_binary message (its payload is then null). */
  binary_payload: Uint8Array | null;
}

/** The topic's private broadcasts since `since`, the newest `limit` of them, oldest first. */
export async function replayedMessages(
  sql: postgres.Sql,
  topic: string,
  since: number,
  limit: number,
): Promise<ReplayedMessage[]> {
  // inserted_at is a timestamp without time zone written by now(): compared in the session's time zone, as
  // written. Nothing from more than a minute ahead (Realtime skips the future partitions).
  const rows = await sql<ReplayedMessage[]>`
    select id::text, event, payload, binary_payload from realtime.messages
    where topic = ${topic} and private is true and extension = 'broadcast'
      and inserted_at >= to_timestamp(${since}::double precision / 1000)::timestamp
      and inserted_at < (now() + interval '1 minute')::timestamp
    order by inserted_at desc
    limit ${limit}`;
  return [...rows].reverse();
}

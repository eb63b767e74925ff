// The local stand-in for pg_net's background worker. Woken by the NOTIFY that
// net.wake() sends when a request is queued (and polling each second), it
// takes queued requests as pg_net does (DELETE ... RETURNING, 200 at a time,
// in id order), performs each one (method, url, headers, body, timeout;
// redirects followed) and writes net._http_response: status_code, headers,
// content_type and content for an answer; timed_out and error_msg otherwise.
// Like pg_net it delivers at most once: a request taken is not retried.
// Responses older than 6 hours are deleted (pg_net.ttl). Nothing here throws
// out of the loop; the database going away is logged once and retried.
import postgres from "postgres";

export const NET_WAKE_CHANNEL = "pg_net_local_wake";
const USER_AGENT = "pg_net/0.20.4";
const BATCH_SIZE = 200;
const TTL = "6 hours";

export interface NetWorkerOptions {
  /** A superuser's URL of the database where pg_net is installed. */
  url: string;
  log: (line: string) => void;
}

export interface NetWorker {
  stop(): Promise<void>;
}

interface QueuedRequest {
  id: string;
  method: string;
  url: string;
  timeout_milliseconds: number;
  headers: Record<string, string> | null;
  body: Uint8Array | null;
}

interface Outcome {
  status_code: number | null;
  content_type: string | null;
  headers: Record<string, string> | null;
  content: string | null;
  timed_out: boolean;
  error_msg: string | null;
}

/** curl's wording of the failures, as pg_net records them. */
function describeFailure(error: unknown): string {
  const text = String((error as Error)?.message ?? error);
  const cause = String((error as { cause?: unknown })?.cause ?? "");
  const both = `${text} ${cause}`;
  if (/refused|ECONNREFUSED/i.test(both)) return "Couldn't connect to server";
  if (/dns|lookup|ENOTFOUND|EAI_AGAIN|resolve/i.test(both)) return "Couldn't resolve host name";
  if (/reset|ECONNRESET|closed|EPIPE/i.test(both)) return "Failure when receiving data from the peer";
  if (/certificate|tls|ssl/i.test(both)) return "SSL connect error";
  if (/url|scheme|protocol/i.test(both)) return "URL using bad/illegal format or missing URL";
  return text;
}

export async function perform(request: QueuedRequest): Promise<Outcome> {
  const started = performance.now();
  const headers = new Headers();
  try {
    for (const [name, value] of Object.entries(request.headers ?? {})) headers.append(name, String(value));
  } catch (error) {
    return failed(`Invalid request header: ${(error as Error).message}`);
  }
  if (!headers.has("user-agent")) headers.set("User-Agent", USER_AGENT);
  const method = request.method.toUpperCase();
  // fetch cannot send a body with GET; pg_net's http_get never queues one.
  const body = method === "GET" || !request.body ? undefined : new Uint8Array(request.body);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeout_milliseconds);
  try {
    const response = await fetch(request.url, { method, headers, body, signal: controller.signal, redirect: "follow" });
    const content = await response.text();
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => (responseHeaders[name] = value));
    return {
      status_code: response.status,
      content_type: response.headers.get("content-type"),
      headers: responseHeaders,
      content: content === "" ? null : content,
      timed_out: false,
      error_msg: null,
    };
  } catch (error) {
    if (controller.signal.aborted) {
      const total = (performance.now() - started).toFixed(6);
      return {
        ...failed(`Timeout of ${request.timeout_milliseconds} ms reached. Total time: ${total} ms`),
        timed_out: true,
      };
    }
    return failed(describeFailure(error));
  } finally {
    clearTimeout(timer);
  }
}

function failed(message: string): Outcome {
  return { status_code: null, content_type: null, headers: null, content: null, timed_out: false, error_msg: message };
}

export function startNetWorker(options: NetWorkerOptions): NetWorker {
  const { log } = options;
  const sql = postgres(options.url, {
    max: 3,
    connect_timeout: 5,
    // postgres.js leaves a failed type lookup on a new connection uncaught (porsager/postgres #1192);
    // nothing here binds arrays, so it is not needed.
    fetch_types: false,
    idle_timeout: 60,
    onnotice: () => {},
    // net.check_worker_is_up() and net.wait_until_running() look for this name.
    connection: { application_name: "pg_net worker" },
  });
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let down = false;
  let wake: (() => void) | undefined;
  let woken = false;
  let lastExpiry = 0;
  let listener: { unlisten(): Promise<void> } | undefined;

  const ring = () => {
    woken = true;
    wake?.();
  };

  async function listen(): Promise<void> {
    if (listener || stopped) return;
    try {
      listener = await sql.listen(NET_WAKE_CHANNEL, ring);
    } catch {
      listener = undefined; // retried at the next poll
    }
  }

  async function store(request: QueuedRequest, outcome: Outcome): Promise<void> {
    try {
      await insertResponse(request, outcome).catch(async () => {
        // A connection that died with an outage fails its first query: once more, on a fresh one.
        await new Promise((resolve) => setTimeout(resolve, 250));
        await insertResponse(request, outcome);
      });
    } catch (error) {
      log(`pg_net (local): response to request ${request.id} not stored: ${(error as Error).message}`);
    }
  }

  async function insertResponse(request: QueuedRequest, outcome: Outcome): Promise<void> {
    await sql`
      insert into net._http_response (id, status_code, content, headers, content_type, timed_out, error_msg)
      values (${request.id}, ${outcome.status_code}, ${outcome.content},
              ${outcome.headers === null ? null : sql.json(outcome.headers)},
              ${outcome.content_type}, ${outcome.timed_out}, ${outcome.error_msg})`;
  }

  async function poll(): Promise<void> {
    let requests: QueuedRequest[];
    try {
      if (Date.now() - lastExpiry > 60_000) {
        await sql`
          with rows as (select ctid from net._http_response where created < now() - ${TTL}::interval
                        order by created limit ${BATCH_SIZE})
          delete from net._http_response r using rows where r.ctid = rows.ctid`;
        lastExpiry = Date.now();
      }
      requests = await sql<QueuedRequest[]>`
        with rows as (select id from net.http_request_queue order by id limit ${BATCH_SIZE})
        delete from net.http_request_queue q using rows where q.id = rows.id
        returning q.id, q.method, q.url, q.timeout_milliseconds, q.headers, q.body`;
    } catch (error) {
      const message = (error as Error).message;
      // Before the migration that creates pg_net: nothing to do.
      if (/schema "net" does not exist|relation "net\.[a-z_]+" does not exist/.test(message)) return;
      if (!down) log(`pg_net (local): cannot read net.http_request_queue (${message}); retrying every second`);
      down = true;
      return;
    }
    if (down) log("pg_net (local): reading net.http_request_queue again");
    down = false;
    await listen();
    for (const request of requests) {
      const promise = perform(request).then((outcome) => store(request, outcome)).catch((error) =>
        log(`pg_net (local): request ${request.id}: ${error}`)
      );
      inFlight.add(promise);
      promise.finally(() => inFlight.delete(promise));
    }
    // A full batch: there may be more queued already.
    if (requests.length === BATCH_SIZE) woken = true;
  }

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      try {
        await poll();
      } catch (error) {
        log(`pg_net (local): ${error}`);
      }
      if (woken || stopped) continue;
      await new Promise<void>((resolve) => {
        if (woken) return resolve();
        const timer = setTimeout(resolve, 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await listener?.unlisten().catch(() => {});
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, 2000))]);
      await sql.end({ timeout: 1 }).catch(() => {});
    },
  };
}

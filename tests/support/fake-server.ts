// A loopback HTTP server around a fetch handler (the simulators of
// local/simulators), with a control server beside it so that test files,
// which run in other processes than the global setup, can make the fake slow,
// failing or down, and read what it received.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Controllable {
  fetch(req: Request): Promise<Response>;
  mode: string;
  delayMs: number;
  /** Moves a stored object to a status (the gateway's payments and transfers); false when unknown. */
  setStatus?(id: string, status: string): boolean;
  /** Stores an object made outside the fake's API (the gateway's payments and transfers). */
  put?(
    kind: "payment" | "transfer",
    object: { id: string; status: string; [key: string]: unknown },
  ): void;
}

export interface FakeHandle {
  url: string;
  controlUrl: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  return new Request(new URL(req.url ?? "/", base), {
    method: req.method,
    headers,
    body,
  });
}

/** Writes the answer; with `bodyDelayMs`, its head at once and its body that much later (a stalled body). */
async function send(
  res: ServerResponse,
  response: Response,
  bodyDelayMs = 0,
): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  const body = Buffer.from(await response.arrayBuffer());
  if (bodyDelayMs > 0) {
    res.flushHeaders();
    await new Promise((resolve) => setTimeout(resolve, bodyDelayMs));
  }
  res.end(body);
}

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve) =>
    server.listen(
      port,
      "127.0.0.1",
      () => resolve((server.address() as AddressInfo).port),
    )
  );
}

export async function startFake(
  name: string,
  create: () => Controllable,
  snapshot: (fake: Controllable) => unknown,
): Promise<FakeHandle> {
  let fake = create();
  /** How long the fake holds its answer after doing the work (the answer is late, the work is done). */
  let answerDelayMs = 0;
  /** How long the fake holds its answer's body after sending its head. */
  let bodyDelayMs = 0;
  const sockets = new Set<import("node:net").Socket>();
  const data = createServer(async (req, res) => {
    try {
      const answer = await fake.fetch(await toRequest(req, "http://fake"));
      if (answerDelayMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
      }
      await send(res, answer, bodyDelayMs);
    } catch {
      res.destroy();
    }
  });
  data.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await listen(data);
  let up = true;

  async function goDown(): Promise<void> {
    if (!up) return;
    up = false;
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => data.close(resolve));
  }
  async function goUp(): Promise<void> {
    if (up) return;
    await listen(data, port);
    up = true;
  }
  const actions: Record<
    string,
    (
      body: {
        mode?: string;
        delayMs?: number;
        answerDelayMs?: number;
        bodyDelayMs?: number;
        refunds?: string;
      },
    ) => Promise<void> | void
  > = {
    "GET /state": () => {},
    "POST /mode": (
      {
        mode,
        delayMs,
        answerDelayMs: answerDelay,
        bodyDelayMs: bodyDelay,
        refunds,
      },
    ) => {
      if (mode !== undefined) fake.mode = mode;
      // The gateway's refunds: "immediate" or "in_progress" (local/simulators/gateway.ts).
      if (refunds !== undefined) {
        (fake as { refunds?: string }).refunds = refunds;
      }
      if (delayMs !== undefined) fake.delayMs = delayMs;
      if (answerDelay !== undefined) answerDelayMs = answerDelay;
      if (bodyDelay !== undefined) bodyDelayMs = bodyDelay;
    },
    "POST /down": goDown,
    "POST /up": goUp,
    "POST /reset": async () => {
      fake = create();
      answerDelayMs = 0;
      bodyDelayMs = 0;
      await goUp();
    },
  };

  const control = createServer(async (req, res) => {
    const request = await toRequest(req, "http://control");
    const path = new URL(request.url).pathname;
    // POST /objects/{id} {"status"}: what the external service does to its own objects over time.
    const object = /^\/objects\/([^/]+)$/.exec(path);
    if (req.method === "POST" && object) {
      const { status } = await request.json().catch(() => ({})) as {
        status?: unknown;
      };
      if (typeof status !== "string") {
        return send(
          res,
          Response.json({ detail: "status is required" }, { status: 400 }),
        );
      }
      const found = fake.setStatus?.(decodeURIComponent(object[1]), status) ??
        false;
      return send(
        res,
        Response.json({ id: decodeURIComponent(object[1]), status }, {
          status: found ? 200 : 404,
        }),
      );
    }
    // PUT /objects/{payment|transfer} {id, status, ...}: an object the service made some other way.
    const kind = /^\/objects\/(payment|transfer)$/.exec(path);
    if (req.method === "PUT" && kind && fake.put) {
      const object = await request.json().catch(() => null) as {
        id?: unknown;
        status?: unknown;
      } | null;
      if (typeof object?.id !== "string" || typeof object.status !== "string") {
        return send(
          res,
          Response.json({ detail: "id and status are required" }, {
            status: 400,
          }),
        );
      }
      fake.put(
        kind[1] as "payment" | "transfer",
        object as { id: string; status: string },
      );
      return send(res, Response.json(object));
    }
    const action = actions[`${req.method} ${path}`];
    if (!action) return send(res, new Response(null, { status: 404 }));
    await action(
      req.method === "POST" ? await request.json().catch(() => ({})) : {},
    );
    await send(
      res,
      Response.json({
        name,
        up,
        mode: fake.mode,
        delayMs: fake.delayMs,
        state: snapshot(fake),
      }),
    );
  });
  const controlPort = await listen(control);
  return {
    url: `http://127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      if (up) await new Promise((resolve) => data.close(resolve));
      await new Promise((resolve) => control.close(resolve));
    },
  };
}

// A stand-in for the Docker Engine API, for the one container the Supabase
// CLI needs against a database it did not start: `supabase test db` runs
// pg_prove in the `supabase/pg_prove` image, with PGHOST/PGPORT/... in its
// environment and the test files bound at their host paths. Where no Docker
// daemon runs (this project needs none), local/supabase-cli.ts points
// DOCKER_HOST here, and each such container is pg_prove run natively (Debian's
// libtap-parser-sourcehandler-pgtap-perl, with psql), with that environment,
// command and working directory. Any other image is refused as missing, with
// a message saying so. Served on 127.0.0.1 only, for the life of one CLI call.
//
// The endpoints are the Engine API's (v1.45): ping, image inspect, container
// create, attach (an HTTP upgrade to the raw multiplexed stream, which the CLI
// opens before starting the container), start, logs, inspect, wait, remove.
// node:http serves them because it hands over upgraded connections.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

const API_VERSION = "1.45";
const IMAGE = /(^|\/)supabase\/pg_prove(:[\w.-]+)?$/;

interface Container {
  id: string;
  image: string;
  cmd: string[];
  env: string[];
  workdir: string;
  process?: Deno.ChildProcess;
  /** Output so far, as frames of the multiplexed stream (stream, 0, 0, 0, size, then the bytes). */
  frames: Uint8Array[];
  exitCode: number | null;
  finished: Promise<void>;
  done: () => void;
  /** Called with each new frame, and with null once the process has exited. */
  listeners: Set<(frame: Uint8Array | null) => void>;
}

export interface DockerStandIn {
  /** The DOCKER_HOST to give the CLI. */
  host: string;
  close(): Promise<void>;
}

/** Environment variables a pg_prove run may take from the container's: the libpq ones. */
function pgEnvironment(env: string[]): Record<string, string> {
  const out: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  for (const item of env) {
    const at = item.indexOf("=");
    if (at > 0 && /^PG[A-Z]+$/.test(item.slice(0, at))) out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

function frame(kind: 1 | 2, bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + bytes.byteLength);
  out[0] = kind;
  new DataView(out.buffer).setUint32(4, bytes.byteLength);
  out.set(bytes, 8);
  return out;
}

/** Sends every frame of `c`, then each new one, to `write`; resolves once the process has exited and all was sent. */
function follow(c: Container, write: (frame: Uint8Array) => void, live: boolean): Promise<void> {
  for (const f of c.frames) write(f);
  if (!live || c.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const listener = (f: Uint8Array | null) => {
      if (f) return write(f);
      c.listeners.delete(listener);
      resolve();
    };
    c.listeners.add(listener);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  req.setEncoding("utf8");
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    "api-version": API_VERSION,
    ostype: "linux",
    ...(text ? { "content-type": "application/json" } : {}),
  });
  res.end(text);
}

export function startDockerStandIn(): Promise<DockerStandIn> {
  const containers = new Map<string, Container>();

  function create(res: ServerResponse, body: { Image?: string; Cmd?: string[]; Env?: string[]; WorkingDir?: string }) {
    const image = body.Image ?? "";
    if (!IMAGE.test(image)) {
      return send(res, 404, { message: `No such image: ${image} (the local Docker stand-in runs only pg_prove)` });
    }
    if (!Array.isArray(body.Cmd) || body.Cmd[0] !== "pg_prove") {
      return send(res, 400, { message: "the local Docker stand-in runs only the pg_prove command" });
    }
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const id = crypto.randomUUID().replaceAll("-", "") + crypto.randomUUID().replaceAll("-", "");
    containers.set(id, {
      id,
      image,
      cmd: body.Cmd,
      env: body.Env ?? [],
      workdir: body.WorkingDir || Deno.cwd(),
      frames: [],
      exitCode: null,
      finished,
      done,
      listeners: new Set(),
    });
    send(res, 201, { Id: id, Warnings: [] });
  }

  function start(res: ServerResponse, c: Container) {
    if (c.process) return send(res, 304);
    try {
      c.process = new Deno.Command("pg_prove", {
        args: c.cmd.slice(1),
        env: pgEnvironment(c.env),
        clearEnv: true,
        cwd: c.workdir,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      return send(res, 500, { message: `could not run pg_prove: ${(error as Error).message}` });
    }
    const pump = async (stream: ReadableStream<Uint8Array>, kind: 1 | 2) => {
      for await (const chunk of stream) {
        const f = frame(kind, chunk);
        c.frames.push(f);
        for (const listener of c.listeners) listener(f);
      }
    };
    const process = c.process;
    Promise.all([pump(process.stdout, 1), pump(process.stderr, 2), process.status]).then(([, , status]) => {
      c.exitCode = status.code;
      for (const listener of [...c.listeners]) listener(null);
      c.done();
    });
    send(res, 204);
  }

  function inspect(res: ServerResponse, c: Container) {
    const running = c.process !== undefined && c.exitCode === null;
    send(res, 200, {
      Id: c.id,
      Image: c.image,
      Config: { Image: c.image, Cmd: c.cmd, Env: c.env, WorkingDir: c.workdir, Tty: false },
      State: {
        Status: running ? "running" : c.process ? "exited" : "created",
        Running: running,
        ExitCode: c.exitCode ?? 0,
        OOMKilled: false,
      },
    });
  }

  const route = (req: IncomingMessage) => {
    const url = new URL(req.url ?? "/", "http://docker");
    const path = url.pathname.replace(/^\/v\d+\.\d+/, "");
    const match = /^\/containers\/([^/]+)(\/[a-z]+)?$/.exec(path);
    return { url, path, match, container: match ? containers.get(match[1]) : undefined, action: match?.[2] ?? "" };
  };

  const server = createServer(async (req, res) => {
    const { url, path, match, container: c, action } = route(req);
    const method = req.method ?? "GET";
    if (path === "/_ping") {
      res.writeHead(200, { "api-version": API_VERSION, ostype: "linux", "content-type": "text/plain" });
      return res.end(method === "HEAD" ? "" : "OK");
    }
    if (path === "/version") {
      return send(res, 200, { Version: "local-stand-in", ApiVersion: API_VERSION, MinAPIVersion: "1.24", Os: "linux" });
    }
    const image = /^\/images\/(.+)\/json$/.exec(path);
    if (image && method === "GET") {
      const name = decodeURIComponent(image[1]);
      return IMAGE.test(name)
        ? send(res, 200, { Id: "sha256:local-pg-prove", RepoTags: [name], Os: "linux", Architecture: "amd64" })
        : send(res, 404, { message: `No such image: ${name} (the local Docker stand-in runs only pg_prove)` });
    }
    if (path === "/containers/create" && method === "POST") return create(res, JSON.parse(await readBody(req)));
    if (match && !c) return send(res, 404, { message: `No such container: ${match[1]}` });
    if (c && action === "/start" && method === "POST") return start(res, c);
    if (c && action === "/json" && method === "GET") return inspect(res, c);
    if (c && action === "/logs" && method === "GET") {
      res.writeHead(200, { "api-version": API_VERSION, "content-type": "application/vnd.docker.multiplexed-stream" });
      await follow(c, (f) => res.write(f), ["1", "true"].includes(url.searchParams.get("follow") ?? ""));
      return res.end();
    }
    if (c && action === "/wait" && method === "POST") {
      // The client waits for the headers before it starts the container; the status follows at exit.
      res.writeHead(200, { "api-version": API_VERSION, "content-type": "application/json" });
      res.flushHeaders();
      await c.finished;
      return res.end(JSON.stringify({ StatusCode: c.exitCode ?? 0 }));
    }
    if (c && action === "" && method === "DELETE") {
      try {
        c.process?.kill("SIGKILL");
      } catch { /* already gone */ }
      containers.delete(c.id);
      return send(res, 204);
    }
    send(res, 404, { message: `${method} ${url.pathname} is not part of the local Docker stand-in` });
  });

  // attach: the connection becomes the container's raw multiplexed output.
  server.on("upgrade", (req: IncomingMessage, socket: Duplex) => {
    const { container: c, action } = route(req);
    if (!c || action !== "/attach") {
      socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    socket.write(
      "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\n" +
        "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
    );
    follow(c, (f) => socket.write(f), true).then(() => socket.end());
  });

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        host: `tcp://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const c of containers.values()) {
              try {
                c.process?.kill("SIGKILL");
              } catch { /* already gone */ }
            }
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

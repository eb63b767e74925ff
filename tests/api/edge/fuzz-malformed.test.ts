// deno-lint-ignore-file no-explicit-any -- JSON bodies of the API under test are read as `any`
// Malformed input is a 4xx, never a 5xx (DESIGN.md §11.7): NUL, invalid UTF-8 (raw bytes, %FF, overlong and
// surrogate sequences, truncated ones) and oversized values, in paths, query strings, headers and JSON bodies, sent
// to every service of the local stack (Auth, Storage, REST, Realtime over HTTP and its websocket's joins) and to
// every operation of /api/v1 as its OpenAPI document lists them. Requests go over a raw socket, so the bytes sent
// are exactly the bytes written here (fetch would re-encode them).
import { connect } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, stack, type TestCompany } from "../../support/api.ts";

/** Path or query values, written as they go on the wire. */
const URL_VALUES: Buffer[] = [
  "%00",
  "a%00b",
  "%FF",
  "%C0%AF",
  "%C0%80",
  "%ED%A0%80",
  "%E2%82",
  "%F8%88%80%80%80",
  "%",
  "x".repeat(20_000),
].map((v) => Buffer.from(v, "latin1")).concat([
  Buffer.from([0x61, 0xff, 0x62]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
]);

/** JSON string values, written as they go on the wire (with their quotes). */
const JSON_VALUES: Buffer[] = [
  Buffer.from('"\\u0000"'),
  Buffer.from('"a\\u0000b"'),
  Buffer.from('"\\ud800"'),
  Buffer.from(JSON.stringify("x".repeat(300_000))),
  Buffer.from([0x22, 0x61, 0xff, 0x62, 0x22]),
  Buffer.from([0x22, 0xc0, 0x80, 0x22]),
  Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
];

interface RawRequest {
  method: string;
  /** Path and query, as bytes. */
  target: Buffer;
  headers?: Record<string, string | Buffer>;
  body?: Buffer;
}

interface Outcome {
  status: number;
  text: string;
}

/** One HTTP/1.1 request over its own connection; the status and the start of the answer. */
function send(request: RawRequest): Promise<Outcome> {
  const { hostname, port } = new URL(stack().apiUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error("timeout")), 15_000);
    socket.on("connect", () => {
      const head: Buffer[] = [Buffer.from(`${request.method} `), request.target, Buffer.from(" HTTP/1.1\r\n")];
      const headers: Record<string, string | Buffer> = {
        host: `${hostname}:${port}`,
        connection: "close",
        ...request.headers,
      };
      // A request line with raw bytes over 0x7f is refused before its body is read: a body written after it would
      // meet a closed connection, whose reset can discard the answer already sent.
      if (request.target.some((byte) => byte > 0x7f)) request.body = undefined;
      if (request.body) headers["content-length"] = String(request.body.length);
      for (const [name, value] of Object.entries(headers)) {
        head.push(Buffer.from(`${name}: `), Buffer.isBuffer(value) ? value : Buffer.from(value), Buffer.from("\r\n"));
      }
      head.push(Buffer.from("\r\n"));
      socket.write(Buffer.concat(head));
      if (request.body) socket.write(request.body);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const done = (error?: Error) => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: status ? Number(status[1]) : 0, text: status ? text.slice(0, 600) : String(error ?? text) });
    };
    socket.on("error", done);
    socket.on("close", () => done());
  });
}

const b = (text: string) => Buffer.from(text);
const fill = (template: string, value: Buffer) => {
  const parts = template.split("{v}");
  return Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [b(part)] : [value, b(part)])));
};

let company: TestCompany;
const failures: string[] = [];
let sent = 0;

async function run(requests: RawRequest[], label: string, concurrency = 8) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests.length) {
      const request = requests[next++];
      const outcome = await send(request);
      sent++;
      if (outcome.status >= 500 || outcome.status === 0) {
        failures.push(
          `${label}: ${request.method} ${request.target.toString("latin1").slice(0, 120)} -> ${outcome.status} ${
            outcome.text.split("\r\n\r\n")[1]?.slice(0, 200) ?? outcome.text.slice(0, 200)
          }`,
        );
      }
    }
  }));
}

const json = { "content-type": "application/json" };

beforeAll(async () => {
  company = await createCompany("Fuzz Ltda");
});

describe("malformed input is a 4xx, never a 5xx", { timeout: 300_000 }, () => {
  it("Auth", async () => {
    const anon = { apikey: stack().anonKey };
    const service = { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` };
    const paths: [string, string, Record<string, string>][] = [
      ["POST", "/auth/v1/token?grant_type={v}", anon],
      ["GET", "/auth/v1/verify?token={v}&type=signup&redirect_to={v}", anon],
      ["GET", "/auth/v1/verify?token_hash={v}&type={v}", anon],
      ["GET", "/auth/v1/{v}", anon],
      ["GET", "/auth/v1/admin/users/{v}", service],
      ["DELETE", "/auth/v1/admin/users/{v}", service],
      ["GET", "/auth/v1/admin/users?page={v}&per_page={v}", service],
      ["GET", "/auth/v1/authorize?provider={v}&redirect_to={v}", anon],
      ["POST", "/auth/v1/logout?scope={v}", anon],
      ["GET", "/auth/v1/factors/{v}", anon],
    ];
    const requests: RawRequest[] = [];
    for (const value of URL_VALUES) {
      for (const [method, path, headers] of paths) requests.push({ method, target: fill(path, value), headers });
      // Header values: a token, an API key.
      requests.push({
        method: "GET",
        target: b("/auth/v1/user"),
        headers: { ...anon, authorization: fill("Bearer {v}", value) },
      });
      requests.push({ method: "GET", target: b("/auth/v1/settings"), headers: { apikey: value } });
    }
    const bodies: [string, string][] = [
      ["/auth/v1/token?grant_type=password", '{"email":{v},"password":"secret-pass"}'],
      ["/auth/v1/token?grant_type=password", '{"email":"a@b.test","password":{v}}'],
      ["/auth/v1/token?grant_type=password", '{"phone":{v},"password":"x"}'],
      ["/auth/v1/token?grant_type=refresh_token", '{"refresh_token":{v}}'],
      ["/auth/v1/token?grant_type=pkce", '{"auth_code":{v},"code_verifier":{v}}'],
      ["/auth/v1/signup", '{"email":{v},"password":"secret-pass-1"}'],
      ["/auth/v1/signup", '{"email":"fz@b.test","password":{v},"data":{"name":{v}}}'],
      ["/auth/v1/recover", '{"email":{v}}'],
      ["/auth/v1/otp", '{"email":{v},"create_user":false}'],
      ["/auth/v1/magiclink", '{"email":{v}}'],
      ["/auth/v1/verify", '{"type":"signup","token":{v},"email":"a@b.test"}'],
      ["/auth/v1/verify", '{"type":{v},"token_hash":{v}}'],
      ["/auth/v1/resend", '{"type":"signup","email":{v}}'],
    ];
    for (const value of JSON_VALUES) {
      for (const [path, body] of bodies) {
        requests.push({ method: "POST", target: b(path), headers: { ...anon, ...json }, body: fill(body, value) });
      }
      requests.push({
        method: "POST",
        target: b("/auth/v1/admin/users"),
        headers: { ...service, ...json },
        body: fill('{"email":{v},"password":{v},"user_metadata":{"n":{v}}}', value),
      });
      requests.push({
        method: "PUT",
        target: b(`/auth/v1/admin/users/${company.owner.userId}`),
        headers: { ...service, ...json },
        body: fill('{"app_metadata":{"x":{v}},"ban_duration":{v}}', value),
      });
      requests.push({
        method: "PUT",
        target: b("/auth/v1/user"),
        headers: { ...anon, authorization: `Bearer ${company.driver2.token}`, ...json },
        body: fill('{"data":{"nick":{v}},"nonce":{v}}', value),
      });
    }
    await run(requests, "auth");
  });

  it("Storage", async () => {
    const service = { apikey: stack().serviceRoleKey, authorization: `Bearer ${stack().serviceRoleKey}` };
    const owner = { apikey: stack().anonKey, authorization: `Bearer ${company.owner.token}` };
    const paths: [string, string][] = [
      ["GET", "/storage/v1/bucket/{v}"],
      ["DELETE", "/storage/v1/bucket/{v}"],
      ["POST", "/storage/v1/bucket/{v}/empty"],
      ["GET", "/storage/v1/bucket?search={v}&limit={v}&sortColumn={v}"],
      ["GET", "/storage/v1/object/{v}/{v}"],
      ["GET", "/storage/v1/object/delivery-proofs/{v}"],
      ["HEAD", "/storage/v1/object/delivery-proofs/{v}"],
      ["GET", "/storage/v1/object/info/delivery-proofs/{v}"],
      ["GET", "/storage/v1/object/public/{v}/x.png"],
      ["GET", "/storage/v1/object/authenticated/delivery-proofs/{v}"],
      ["GET", "/storage/v1/object/sign/delivery-proofs/x.png?token={v}"],
      ["POST", "/storage/v1/object/sign/delivery-proofs/{v}"],
      ["DELETE", "/storage/v1/object/delivery-proofs/{v}"],
      ["POST", "/storage/v1/object/list/{v}"],
      ["POST", "/storage/v1/object/upload/sign/delivery-proofs/{v}"],
      ["PUT", "/storage/v1/object/upload/sign/delivery-proofs/x.png?token={v}"],
    ];
    const requests: RawRequest[] = [];
    for (const value of URL_VALUES) {
      for (const headers of [service, owner]) {
        for (const [method, path] of paths) {
          requests.push({
            method,
            target: fill(path, value),
            headers: { ...headers, ...json },
            body: b('{"expiresIn":60}'),
          });
        }
      }
      requests.push({
        method: "POST",
        target: fill("/storage/v1/object/delivery-proofs/{v}", value),
        headers: { ...service, "content-type": "image/png", "x-upsert": "true" },
        body: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      });
      requests.push({
        method: "POST",
        target: b("/storage/v1/object/delivery-proofs/fuzz.png"),
        headers: { ...service, "content-type": "image/png", "x-metadata": value, "cache-control": value },
        body: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      });
    }
    const bodies: [string, string, string][] = [
      ["POST", "/storage/v1/bucket", '{"id":{v},"name":{v},"public":false}'],
      ["PUT", "/storage/v1/bucket/delivery-proofs", '{"public":false,"allowed_mime_types":[{v}]}'],
      ["POST", "/storage/v1/object/list/delivery-proofs", '{"prefix":{v},"search":{v}}'],
      ["POST", "/storage/v1/object/list-v2/delivery-proofs", '{"prefix":{v},"cursor":{v}}'],
      ["POST", "/storage/v1/object/sign/delivery-proofs", '{"expiresIn":60,"paths":[{v}]}'],
      ["DELETE", "/storage/v1/object/delivery-proofs", '{"prefixes":[{v}]}'],
      ["POST", "/storage/v1/object/move", '{"bucketId":"delivery-proofs","sourceKey":{v},"destinationKey":{v}}'],
      ["POST", "/storage/v1/object/copy", '{"bucketId":{v},"sourceKey":"a","destinationKey":{v}}'],
    ];
    for (const value of JSON_VALUES) {
      for (const headers of [service, owner]) {
        for (const [method, path, body] of bodies) {
          requests.push({ method, target: b(path), headers: { ...headers, ...json }, body: fill(body, value) });
        }
      }
    }
    await run(requests, "storage");
  });

  it("REST", async () => {
    const anon = { apikey: stack().anonKey };
    const owner = { apikey: stack().anonKey, authorization: `Bearer ${company.owner.token}` };
    const paths: [string, string][] = [
      ["GET", "/rest/v1/deliveries?select=id->{v}"],
      ["GET", "/rest/v1/deliveries?select=id->>{v}"],
      ["GET", "/rest/v1/deliveries?select={v}"],
      ["GET", "/rest/v1/deliveries?select=id,{v}(id)"],
      ["GET", "/rest/v1/deliveries?id=eq.{v}"],
      ["GET", "/rest/v1/deliveries?recipient_name=like.{v}"],
      ["GET", "/rest/v1/deliveries?recipient_name=in.({v})"],
      ["GET", "/rest/v1/deliveries?notes=fts.{v}"],
      ["GET", "/rest/v1/deliveries?or=(id.eq.{v},notes.eq.{v})"],
      ["GET", "/rest/v1/deliveries?order={v}"],
      ["GET", "/rest/v1/deliveries?limit={v}&offset={v}"],
      ["GET", "/rest/v1/{v}"],
      ["GET", "/rest/v1/deliveries?{v}=eq.1"],
      ["POST", "/rest/v1/rpc/{v}"],
      ["GET", "/rest/v1/rpc/list_deliveries?cursor={v}"],
      ["PATCH", "/rest/v1/deliveries?id=eq.{v}"],
      ["DELETE", "/rest/v1/deliveries?id=eq.{v}"],
    ];
    const requests: RawRequest[] = [];
    for (const value of URL_VALUES) {
      for (const headers of [anon, owner]) {
        for (const [method, path] of paths) {
          requests.push({ method, target: fill(path, value), headers: { ...headers, ...json }, body: b("{}") });
        }
        for (const header of ["prefer", "range", "accept-profile", "accept"]) {
          requests.push({
            method: "GET",
            target: b("/rest/v1/deliveries?select=id"),
            headers: { ...headers, [header]: value },
          });
        }
      }
    }
    for (const value of JSON_VALUES) {
      for (const headers of [anon, owner]) {
        for (
          const [method, path, body] of [
            ["POST", "/rest/v1/rpc/list_deliveries", '{"cursor":{v}}'],
            ["POST", "/rest/v1/rpc/set_notification_settings", '{"events":[{v}],"channels":[{v}]}'],
            ["PATCH", "/rest/v1/deliveries?id=eq.00000000-0000-0000-0000-000000000000", '{"notes":{v}}'],
            ["POST", "/rest/v1/deliveries", '{"notes":{v},"recipient_name":{v}}'],
          ]
        ) {
          requests.push({ method, target: b(path), headers: { ...headers, ...json }, body: fill(body, value) });
        }
      }
    }
    await run(requests, "rest");
  });

  it("Realtime over HTTP", async () => {
    const owner = { apikey: stack().anonKey, authorization: `Bearer ${company.owner.token}` };
    const requests: RawRequest[] = [];
    for (const value of URL_VALUES) {
      requests.push({ method: "GET", target: fill("/realtime/v1/websocket?apikey={v}&vsn={v}", value) });
      requests.push({
        method: "POST",
        target: fill("/realtime/v1/api/broadcast/{v}/events/{v}", value),
        headers: { ...owner, ...json },
        body: b("{}"),
      });
    }
    for (const value of JSON_VALUES) {
      requests.push({
        method: "POST",
        target: b("/realtime/v1/api/broadcast"),
        headers: { ...owner, ...json },
        body: fill('{"messages":[{"topic":{v},"event":{v},"payload":{"x":{v}},"private":true}]}', value),
      });
    }
    await run(requests, "realtime-http");
  });

  it("Realtime websocket joins", async () => {
    const values = ["\u0000", "a\u0000b", "\ud800", "x".repeat(300_000), "\uffff", "realtime:\u0000"];
    const url = `${stack().apiUrl.replace(/^http/, "ws")}/realtime/v1/websocket?apikey=${stack().anonKey}&vsn=1.0.0`;
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    const replies = new Map<string, any>();
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data));
      if (message.event === "phx_reply") replies.set(message.ref, message.payload);
    };
    let closed = false;
    socket.onclose = () => (closed = true);
    let ref = 0;
    const joins: { ref: string; what: string }[] = [];
    const join = (topic: string, payload: unknown, what: string) => {
      const r = String(++ref);
      joins.push({ ref: r, what });
      socket.send(JSON.stringify({ topic: `realtime:${topic}`, event: "phx_join", payload, ref: r, join_ref: r }));
    };
    for (const [i, value] of values.entries()) {
      const base = { broadcast: { self: false }, presence: { key: "" } };
      join(value, { config: { ...base, private: true }, access_token: company.owner.token }, `private topic ${i}`);
      join(value, { config: { ...base, private: false } }, `public topic ${i}`);
      join(`fz-${i}`, { config: { ...base, private: true }, access_token: value }, `token ${i}`);
      join(`fz-pc-${i}`, {
        config: {
          ...base,
          private: false,
          postgres_changes: [{ event: "*", schema: value, table: value, filter: value }],
        },
        access_token: company.owner.token,
      }, `postgres_changes ${i}`);
      join(`fz-pr-${i}`, { config: { ...base, private: false, presence: { key: value } } }, `presence key ${i}`);
      join(`fz-rp-${i}`, {
        config: { ...base, private: true, broadcast: { replay: { since: value, limit: value } } },
        access_token: company.owner.token,
      }, `replay ${i}`);
    }
    const deadline = Date.now() + 15_000;
    while (replies.size < joins.length && Date.now() < deadline && !closed) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sent += joins.length;
    for (const { ref: r, what } of joins) {
      const reply = replies.get(r);
      if (!reply) failures.push(`realtime-ws: join (${what}) never answered`);
      else if (/unable|internal|unexpected/i.test(JSON.stringify(reply.response ?? {}))) {
        failures.push(`realtime-ws: join (${what}) -> ${JSON.stringify(reply).slice(0, 200)}`);
      }
    }
    socket.close();
  });

  it("/api/v1, every operation of its OpenAPI document", async () => {
    const doc = (await api("/api/v1/openapi.json")).body;
    const requests: RawRequest[] = [];
    const tokens = [company.owner.token, company.driver.token, null];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        const query = (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name);
        const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
        const properties = Object.keys(resolve(doc, bodySchema)?.properties ?? {});
        for (const token of tokens) {
          const headers: Record<string, string> = token ? { authorization: `Bearer ${token}`, ...json } : { ...json };
          for (const value of URL_VALUES) {
            const target = `/api/v1${path.replace(/\{[^}]+\}/g, "{v}")}${
              query.length ? `?${query.map((q: string) => `${q}={v}`).join("&")}` : ""
            }`;
            requests.push({
              method: method.toUpperCase(),
              target: fill(target, value),
              headers,
              body: method === "get" || method === "delete" ? undefined : b("{}"),
            });
          }
          if (method === "get" || method === "delete") continue;
          const plain = `/api/v1${path.replace(/\{[^}]+\}/g, "00000000-0000-0000-0000-000000000000")}`;
          for (const value of JSON_VALUES) {
            const body = `{${properties.map((p) => `${JSON.stringify(p)}:{v}`).join(",")}}`;
            requests.push({ method: method.toUpperCase(), target: b(plain), headers, body: fill(body, value) });
            requests.push({
              method: method.toUpperCase(),
              target: b(plain),
              headers: { ...headers, "idempotency-key": Buffer.from([0x6b, 0xff]) as unknown as string },
              body: b("{}"),
            });
          }
        }
      }
    }
    await run(requests, "api");
  });

  it("more select columns than Postgres allows (1,664): 500 with 54011, as PostgREST maps class 54, too complex", async () => {
    const res = await api(`/rest/v1/deliveries?select=${Array(1665).fill("id").join(",")}`, {
      headers: { apikey: stack().anonKey, authorization: `Bearer ${company.owner.token}` },
    });
    console.log(JSON.stringify({ status: res.status, body: res.body }));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      code: "54011",
      details: null,
      hint: null,
      message: "target lists can have at most 1664 entries",
    });
  });

  it("answers 0 5xx over at least 2,000 malformed requests, and the stack is still well", async () => {
    expect((await api("/health")).status).toBe(200);
    console.log(JSON.stringify({ malformed_requests: sent, server_errors: failures.length }));
    expect(sent).toBeGreaterThanOrEqual(2_000);
    expect(failures).toEqual([]);
  });
});

function resolve(doc: any, schema: any): any {
  if (!schema) return undefined;
  if (schema.$ref) return resolve(doc, schema.$ref.split("/").slice(1).reduce((o: any, k: string) => o?.[k], doc));
  if (schema.allOf) {
    return { properties: Object.assign({}, ...schema.allOf.map((s: any) => resolve(doc, s)?.properties)) };
  }
  return schema;
}

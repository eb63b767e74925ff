// Storage under hostile input: bodies are bounded as they arrive (a JSON body
// past 1 MiB is 413, an upload past its limit is Storage's EntityTooLarge,
// with or without Content-Length, before the body ends), and malformed input
// (a bad percent-escape, JSON of the wrong types, control characters in a
// download name) is a 400 or harmless, never a 500.
import { createClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { stack } from "../../support/api.ts";
import { sendStream, stallingBody } from "../../support/streams.ts";

const MiB = 1_048_576;
const service = () => createClient(stack().apiUrl, stack().serviceRoleKey, { auth: { persistSession: false } }).storage;
const auth = () => ({ authorization: `Bearer ${stack().serviceRoleKey}` });

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack().apiUrl}/storage/v1${path}`, {
    method,
    headers: { ...auth(), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json().catch(() => null) };
}

let bucket: string;
beforeAll(async () => {
  bucket = `s26-hard-${randomUUID().slice(0, 8)}`;
  expect((await service().createBucket(bucket, { public: true, fileSizeLimit: "64kb" })).error).toBeNull();
  expect((await service().from(bucket).upload("a.txt", "a", { contentType: "text/plain" })).error).toBeNull();
});

describe("request bodies", () => {
  it("a JSON body over 1 MiB is 413, without Content-Length, before it ends", async () => {
    const res = await sendStream("POST", `/storage/v1/object/list/${bucket}`, stallingBody(MiB + 64 * 1024), {
      ...auth(),
      "content-type": "application/json",
    });
    expect(res).toEqual({
      status: 413,
      body: { statusCode: "413", code: "EntityTooLarge", error: "FastifyError", message: "Request body is too large" },
    });
  });

  it("an upload over the limit is Storage's EntityTooLarge, without Content-Length, before it ends", async () => {
    const tooLarge = {
      statusCode: "413",
      code: "EntityTooLarge",
      error: "Payload too large",
      message: "The object exceeded the maximum allowed size",
    };
    const raw = await sendStream("POST", `/storage/v1/object/${bucket}/big.bin`, stallingBody(256 * 1024), {
      ...auth(),
      "content-type": "application/octet-stream",
    });
    expect(raw).toEqual({ status: 400, body: tooLarge });
    // A multipart form whose file never ends.
    const boundary = "s26boundary";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name=""; filename="blob"\r\nContent-Type: image/png\r\n\r\n`,
    );
    const rest = stallingBody(256 * 1024).getReader();
    let started = false;
    const form = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!started) {
          started = true;
          return controller.enqueue(head);
        }
        const { value } = await rest.read();
        if (value) controller.enqueue(value);
      },
    });
    const multipart = await sendStream("POST", `/storage/v1/object/${bucket}/big.png`, form, {
      ...auth(),
      "content-type": `multipart/form-data; boundary=${boundary}`,
    });
    expect(multipart).toEqual({ status: 400, body: tooLarge });
    expect((await service().from(bucket).list("")).data?.map((o) => o.name)).toEqual(["a.txt"]);
  });
});

describe("malformed input", () => {
  it("a percent-escape that does not decode is 400", async () => {
    for (const [method, path] of [["GET", `/object/${bucket}/%E0%A4%A`], ["POST", "/object/list/%ZZ"]]) {
      const res = await call(method, path, method === "POST" ? { prefix: "" } : undefined);
      expect(res.status, path).toBe(400);
      expect(res.body).toMatchObject({ statusCode: "400", code: "InvalidRequest" });
    }
  });

  it("JSON of the wrong types is 400 naming the field, in list, delete and sign", async () => {
    const cases: [string, string, unknown, string][] = [
      ["POST", `/object/list/${bucket}`, { prefix: 5 }, "body/prefix must be string"],
      ["POST", `/object/list/${bucket}`, { prefix: "", limit: "ten" }, "body/limit must be integer"],
      ["POST", `/object/list/${bucket}`, [], "body must be object"],
      ["POST", `/object/list-v2/${bucket}`, { with_delimiter: "yes" }, "body/with_delimiter must be boolean"],
      ["DELETE", `/object/${bucket}`, { prefixes: "a.txt" }, "body/prefixes must be array"],
      ["DELETE", `/object/${bucket}`, { prefixes: [1] }, "body/prefixes/0 must be string"],
      ["DELETE", `/object/${bucket}`, {}, "body must have required property 'prefixes'"],
      ["POST", `/object/sign/${bucket}/a.txt`, { expiresIn: "60" }, "body/expiresIn must be integer"],
      ["POST", `/object/sign/${bucket}/a.txt`, { expiresIn: 1.5 }, "body/expiresIn must be integer"],
      ["POST", `/object/sign/${bucket}`, { expiresIn: 60, paths: "a.txt" }, "body/paths must be array"],
      [
        "POST",
        "/object/move",
        { bucketId: bucket, sourceKey: ["a.txt"], destinationKey: "b" },
        "body/sourceKey must be string",
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await call(method, path, body);
      expect(res, `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({
        status: 400,
        body: { statusCode: "400", code: "InvalidRequest", message },
      });
    }
    const notJson = await call("POST", `/object/list/${bucket}`, "{prefix:");
    expect(notJson).toMatchObject({ status: 400, body: { statusCode: "400", code: "InvalidRequest" } });
    const huge = await call("POST", `/object/sign/${bucket}/a.txt`, { expiresIn: 1e300 });
    expect(huge.status).toBe(400);
    expect(await service().from(bucket).exists("a.txt")).toEqual({ data: true, error: null });
  });

  it("control characters in download= never reach the header: the name is percent-encoded, as Storage does", async () => {
    const res = await fetch(
      `${stack().apiUrl}/storage/v1/object/public/${bucket}/a.txt?download=x%0D%0ASet-Cookie:%20a=1`,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.headers.get("content-disposition")).toBe(
      "attachment; filename=x%0D%0ASet-Cookie%3A%20a%3D1; filename*=UTF-8''x%0D%0ASet-Cookie%3A%20a%3D1",
    );
    expect(await res.text()).toBe("a");
  });
});

// Supabase's gateway runs no key check on /storage/v1 (supabase/docker's kong.yml: Storage "manages its own auth";
// a transformer only makes one of the project's keys the bearer), so Storage answers in its own words: no gateway
// 401 "No API key found in request" / "Invalid API key" here, unlike /rest/v1 and /auth/v1.
describe("the apikey, as the gateway passes it to Storage", () => {
  const bare = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(`${stack().apiUrl}/storage/v1${path}`, { headers });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  const noAuthorization = {
    statusCode: "400",
    code: "InvalidRequest",
    error: "Error",
    message: "headers must have required property 'authorization'",
  };

  it("no apikey and no Authorization: Storage's 400 asking for authorization", async () => {
    expect(await bare("/bucket", {})).toEqual({ status: 400, body: noAuthorization });
  });

  it("an apikey that is not one of the project's keys is not a bearer: the same 400", async () => {
    expect(await bare("/bucket", { apikey: "nonsense" })).toEqual({ status: 400, body: noAuthorization });
  });

  it("a project key with a nonsense Authorization: the bearer counts, and Storage refuses it", async () => {
    const res = await bare("/bucket", { apikey: stack().anonKey, authorization: "Bearer nonsense" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: "403", error: "Unauthorized" });
  });

  it("the anon key alone is the anon caller, and a public object needs no key at all", async () => {
    expect((await bare("/bucket", { apikey: stack().anonKey })).status).toBe(200);
    const res = await fetch(`${stack().apiUrl}/storage/v1/object/public/${bucket}/a.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("a");
  });
});

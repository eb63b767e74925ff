// A known path called with a method it does not have answers 405, naming the
// methods it has in `Allow`, with a docs/spec.md §7 body; an unknown path stays 404.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../../support/api.ts";

const METHODS = ["get", "post", "put", "patch", "delete"];

let paths: [string, string[]][];

beforeAll(async () => {
  const doc = (await api("/api/v1/openapi.json")).body;
  paths = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .map(([path, operations]) => [path, Object.keys(operations)]);
});

/** The documented path with a fresh UUID for each parameter. */
const concrete = (path: string) => path.replace(/\{\w+\}/g, () => randomUUID());

describe("a method a path does not have", () => {
  it("is 405 with Allow on every documented path, /health included", async () => {
    expect(paths.map(([path]) => path)).toContain("/health");
    for (const [path, methods] of paths) {
      // /api/v1/drivers/locations is also /api/v1/drivers/{id}, which has PATCH.
      const missing = METHODS.filter((m) =>
        !methods.includes(m) && !(path === "/api/v1/drivers/locations" && m === "patch")
      );
      for (const method of missing) {
        const res = await api(concrete(path), {
          method: method.toUpperCase(),
          headers: { "content-type": "application/json" },
        });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(typeof res.body.detail, `${method} ${path}`).toBe("string");
        const allow = res.headers.get("allow")!.split(", ").sort();
        const expected = [
          ...methods.map((m) => m.toUpperCase()),
          ...(methods.includes("get") ? ["HEAD"] : []),
          "OPTIONS",
        ];
        expect(allow, `${method} ${path}`).toEqual(expected.sort());
      }
    }
  });

  it("lets a browser read Allow (CORS)", async () => {
    const res = await api("/api/v1/prices", { method: "DELETE", headers: { origin: "https://panel.example" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase().split(/,\s*/)).toContain("allow");
  });

  it("leaves a path's own methods and unknown paths alone", async () => {
    expect((await api("/health")).status).toBe(200);
    expect((await api("/health", { method: "HEAD" })).status).toBe(200);
    const unknown = await api("/api/v1/no-such-thing", { method: "DELETE" });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("allow")).toBeNull();
  });
});

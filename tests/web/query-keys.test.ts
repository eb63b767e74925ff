// Every query key of the web app is written once, in its feature's key factory (web/src/features/<feature>/api/):
// screens, the plumbing in lib/ and the cache helpers name keys through those factories and read through the
// features' `queryOptions`, so that a list updated by Realtime, kept on a driver's phone or invalidated after a
// mutation is the one the screen reads. This scans web/src and fails on a key written out anywhere else.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../web/src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A key written out as an array: in a query's options, a filter, or a cache read or write. */
const LITERAL_KEY = [
  /\bqueryKey\s*:\s*\[/,
  /\bmutationKey\s*:\s*\[/,
  /\b(?:set|get)Quer(?:y|ies)Data\s*(?:<[^(]*>)?\(\s*\[/,
  /\b(?:invalidate|refetch|cancel|remove|reset)Queries\s*\(\s*\{[^}]*queryKey\s*:\s*\[/,
  /\b(?:fetch|prefetch|ensure)QueryData\s*\(\s*\{\s*queryKey\s*:\s*\[/,
  /\bqueryKey\[\d\]\s*[!=]==?\s*["'`]/,
];

/** Where keys may be written: a feature's api/ folder. */
const inFeatureApi = (path: string) => /^features\/[^/]+\/api\//.test(relative(SRC, path).split(sep).join("/"));

function literalKeys(text: string): string[] {
  return text.split("\n").filter((line) => LITERAL_KEY.some((pattern) => pattern.test(line)));
}

describe("query keys", () => {
  const files = sources(SRC);

  it("finds the web app's sources and the features' key factories", () => {
    expect(files.length).toBeGreaterThan(50);
    const factories = files.filter((f) => inFeatureApi(f) && f.endsWith("keys.ts"));
    expect(factories.length).toBeGreaterThanOrEqual(10);
  });

  it("catches each form of a key written out", () => {
    expect(literalKeys(`useQuery({ queryKey: ["deliveries"], queryFn })`)).toHaveLength(1);
    expect(literalKeys(`void client.invalidateQueries({ queryKey: ["wallet"] });`)).toHaveLength(1);
    expect(literalKeys(`client.setQueryData<Delivery>(["delivery", id], d);`)).toHaveLength(1);
    expect(literalKeys(`client.setQueriesData<Page<Route>>({ queryKey: ["routes"] }, f);`)).toHaveLength(1);
    expect(literalKeys(`client.getQueryData(["delivery", id])`)).toHaveLength(1);
    expect(literalKeys(`predicate: (q) => q.queryKey[0] !== "proof"`)).toHaveLength(1);
    expect(literalKeys(`useQuery(deliveryQuery(id)); client.invalidateQueries({ queryKey: deliveryKeys.lists() });`))
      .toHaveLength(0);
  });

  it("has no key written out outside features/*/api", () => {
    const found = files
      .filter((file) => !inFeatureApi(file))
      .flatMap((file) =>
        literalKeys(readFileSync(file, "utf8")).map((line) => `${relative(SRC, file)}: ${line.trim()}`)
      );
    expect(found).toEqual([]);
  });
});

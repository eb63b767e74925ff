// Reads a V8 CPU profile (a `.cpuprofile`, e.g. the stack's under
// BENCH_CPU_PROF=<dir>, see bench/stack.ts) and prints where the process spent
// its busy time: by area (our code, Hono, zod, postgres.js, Deno's runtime...),
// by function (self time) and the functions that held the most time
// (inclusive). Nothing here is product code.
//
//   deno run --allow-read bench/profile.ts <file.cpuprofile> [top=25]

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = Deno.args;
if (!file) {
  console.error("usage: deno run --allow-read bench/profile.ts <file.cpuprofile> [top]");
  Deno.exit(2);
}
const top = Number(topArg ?? 25);
const profile: Profile = JSON.parse(await Deno.readTextFile(file));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Time per sample: the delta to the next sample (the last one gets the mean). */
const weights = profile.timeDeltas.slice(1).concat([0]);
const mean = weights.reduce((a, b) => a + b, 0) / Math.max(1, weights.length - 1);
weights[weights.length - 1] = mean;

function area(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "(native / V8 builtins)";
  if (url.includes("/node_modules/.deno/") || url.includes("/node_modules/")) {
    const m = /node_modules\/(?:\.deno\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
    return `npm:${m?.[1] ?? "?"}`;
  }
  if (url.startsWith("ext:")) return url.replace(/^ext:([^/]+)\/.*$/, "deno:$1");
  if (url.startsWith("node:")) return "deno:node-compat";
  const local = /\/(functions|local|bench)\/(.*)$/.exec(url);
  if (local) {
    const parts = local[2].split("/");
    return `${local[1]}/${parts.length > 1 ? parts.slice(0, -1).join("/") + "/" : ""}${parts.at(-1)}`;
  }
  return url;
}

const selfByFn = new Map<string, number>();
const selfByArea = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const w = weights[i];
  const node = byId.get(profile.samples[i])!;
  total += w;
  const name = node.callFrame.functionName || "(anonymous)";
  if (name === "(idle)") {
    idle += w;
    continue;
  }
  const key = `${name} ${area(node.callFrame.url, name)}:${node.callFrame.lineNumber + 1}`;
  selfByFn.set(key, (selfByFn.get(key) ?? 0) + w);
  const a = area(node.callFrame.url, name);
  selfByArea.set(a, (selfByArea.get(a) ?? 0) + w);
  // Inclusive: every distinct function on the stack gets the sample once.
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!.callFrame;
    const fname = f.functionName || "(anonymous)";
    if (fname === "(root)") continue;
    const k = `${fname} ${area(f.url, fname)}:${f.lineNumber + 1}`;
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + w);
  }
}

const busy = total - idle;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
console.log(`${file}\n  wall ${ms(total)}, idle ${ms(idle)}, busy ${ms(busy)} (percentages below are of busy time)\n`);
const print = (title: string, map: Map<string, number>, n: number) => {
  console.log(title);
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`  ${pct(v)} ${ms(v)}  ${k}`);
  console.log();
};
print("Self time by area", selfByArea, top);
print("Self time by function", selfByFn, top);
print("Inclusive time by function", inclusive, top * 2);

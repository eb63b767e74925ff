// `npm run bench:planning -- [--dir <folder>] [--seconds <s>] [--out <folder>] [--filter <text>] [--limit <n>]
// [--seed <n>]`: the built-in route planner on the literature's instances (Solomon and Gehring & Homberger
// VRPTW, Li & Lim PDPTW; told apart by their content), every plan checked by the independent validator
// (functions/_shared/plan-check.ts). Prints per instance and per class the share of valid plans, the
// vehicles, the average gap to the BKS.json beside the files (Solomon: its distance-only keys) and the
// time; with --out, one `<instance>.json` per instance that any other tool can check. See bench/README.md.
// Needs no stack: the planner is pure computation.
import process from "node:process";
import { plan, random } from "../functions/_shared/planner/plan.ts";
import { insertCheapest } from "../functions/_shared/planner/insert.ts";
import type { Problem } from "../functions/_shared/planner/problem.ts";
import { checkPlan } from "../functions/_shared/plan-check.ts";

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

const here = new URL(".", import.meta.url).pathname;
const dir = flag("dir") ?? `${here}../../shared/benchmarks/routing`;
const seconds = Number(flag("seconds") ?? "2");
const outDir = flag("out");
const filter = flag("filter");
const limit = Number(flag("limit") ?? "Infinity");
const seed = Number(flag("seed") ?? "1");
/** `--clock cpu` (default): --seconds of this process's CPU time, so that a busy machine still gives each
 * instance a core's seconds; `--clock wall`: of the wall clock, as the API counts its budget. */
const clock = flag("clock") ?? "cpu";
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
if (!(seconds >= 0) || !(limit > 0)) {
  console.error("--seconds must be a number ≥ 0 and --limit a number > 0");
  Deno.exit(2);
}

interface Instance {
  name: string;
  path: string;
  folder: string;
  format: "vrptw" | "pdptw";
  problem: Problem;
  /** Row number of every location (the depot is row 0). */
  rows: number[];
  fleet: number;
}

function euclidean(xs: number[], ys: number[]): number[][] {
  return xs.map((x, a) => xs.map((x2, b) => Math.hypot(x - x2, ys[a] - ys[b])));
}

/** Solomon / Homberger: name, VEHICLE (number, capacity), CUSTOMER rows `id x y demand ready due service`. */
function readVrptw(text: string): Omit<Instance, "name" | "path" | "folder"> | null {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const v = lines.findIndex((l) => /^VEHICLE/i.test(l));
  const c = lines.findIndex((l) => /^CUSTOMER/i.test(l));
  if (v < 0 || c < 0) return null;
  const fleetLine = lines.slice(v + 1, c).find((l) => /^\d/.test(l));
  if (!fleetLine) return null;
  const [fleet, capacity] = fleetLine.split(/\s+/).map(Number);
  const rows = lines.slice(c + 1).filter((l) => /^\d/.test(l)).map((l) => l.split(/\s+/).map(Number));
  const xs = rows.map((r) => r[1]), ys = rows.map((r) => r[2]);
  const matrix = euclidean(xs, ys);
  const depot = rows[0];
  return {
    format: "vrptw",
    fleet,
    rows: rows.map((r) => r[0]),
    problem: {
      durations: matrix,
      vehicles: Array.from({ length: fleet }, (_, i) => ({
        id: `v${i + 1}`,
        start: 0,
        end: 0,
        capacity,
        shift: [depot[4], depot[5]] as [number, number],
      })),
      shipments: [],
      jobs: rows.slice(1).map((r, i) => ({
        id: String(r[0]),
        amount: r[3],
        stop: { location: i + 1, service: r[6], window: [r[4], r[5]] as [number, number] },
      })),
    },
  };
}

/** Li & Lim: `vehicles capacity speed`, then rows `id x y demand ready due service pickup delivery`. */
function readPdptw(text: string): Omit<Instance, "name" | "path" | "folder"> | null {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  const head = lines[0]?.split(/\s+/).map(Number) ?? [];
  const rows = lines.slice(1).map((l) => l.split(/\s+/).map(Number));
  if (head.length < 2 || head.some((n) => !Number.isFinite(n)) || rows.some((r) => r.length < 9)) return null;
  const [fleet, capacity] = head;
  const speed = head[2] > 0 ? head[2] : 1;
  const index = new Map(rows.map((r, i) => [r[0], i]));
  const xs = rows.map((r) => r[1]), ys = rows.map((r) => r[2]);
  const distances = euclidean(xs, ys);
  const durations = speed === 1 ? distances : distances.map((row) => row.map((d) => d / speed));
  const depot = rows[0];
  const stop = (i: number) => ({
    location: i,
    service: rows[i][6],
    window: [rows[i][4], rows[i][5]] as [number, number],
  });
  const shipments = rows.slice(1).flatMap((r, k) => {
    if (r[7] !== 0) return []; // a delivery row: its pickup row makes the shipment
    const d = index.get(r[8]);
    if (d === undefined) return [];
    return [{ id: String(r[0]), amount: r[3], pickup: stop(k + 1), delivery: stop(d) }];
  });
  return {
    format: "pdptw",
    fleet,
    rows: rows.map((r) => r[0]),
    problem: {
      durations,
      distances,
      vehicles: Array.from({ length: fleet }, (_, i) => ({
        id: `v${i + 1}`,
        start: 0,
        end: 0,
        capacity,
        shift: [depot[4], depot[5]] as [number, number],
      })),
      shipments,
    },
  };
}

function* walk(folder: string): Generator<string> {
  const entries = [...Deno.readDirSync(folder)].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  for (const e of entries) {
    const path = `${folder}/${e.name}`;
    if (e.isDirectory) yield* walk(path);
    else if (e.isFile && e.name.endsWith(".txt")) yield path;
  }
}

/** The BKS.json in the instance's folder or one or two folders up (VRPTW/BKS.json beside VRPTW/solomon/). */
function bksBeside(path: string): Record<string, { best_known_cost: number; solved_with_vehicles?: number }> | null {
  let folder = path;
  for (let up = 0; up < 3; up++) {
    folder = folder.replace(/\/[^/]*$/, "");
    try {
      return JSON.parse(Deno.readTextFileSync(`${folder}/BKS.json`));
    } catch {
      // not here: one folder up
    }
  }
  return null;
}

function className(instance: Instance): string {
  const base = instance.name.toUpperCase();
  const m = instance.format === "pdptw" ? base.match(/^L?(RC|R|C)(\d)/) : base.match(/^(RC|R|C)(\d)/);
  const folder = instance.folder.split("/").pop() ?? "";
  return m ? `${folder} ${m[1]}${m[2]}` : folder;
}

interface Row {
  name: string;
  klass: string;
  folder: string;
  valid: boolean;
  assigned: boolean;
  vehicles: number;
  bksVehicles?: number;
  distance: number;
  gap?: number;
  seconds: number;
  cpu: number;
}

const rows: Row[] = [];
let count = 0;
try {
  Deno.statSync(dir);
} catch {
  console.error(`no folder ${dir}: give the instances' folder with --dir`);
  Deno.exit(2);
}
if (outDir) Deno.mkdirSync(outDir, { recursive: true });
console.log(
  `planning every instance under ${dir} with ${seconds} s of ${
    clock === "cpu" ? "CPU" : "wall"
  } time each (seed ${seed})`,
);
console.log(
  "instance".padEnd(16) + "valid".padEnd(7) + "unass".padStart(6) + "veh".padStart(5) + "bks veh".padStart(8) +
    "distance".padStart(12) + "gap %".padStart(9) + "cpu s".padStart(7) + "wall s".padStart(7),
);
for (const path of walk(dir)) {
  const name = path.split("/").pop()!.replace(/\.txt$/, "");
  if (filter && !path.includes(filter)) continue;
  if (count >= limit) break;
  const text = Deno.readTextFileSync(path);
  const read = readVrptw(text) ?? readPdptw(text);
  if (!read) continue;
  count++;
  const instance: Instance = { name, path, folder: path.replace(/\/[^/]*$/, ""), ...read };
  const started = performance.now();
  const cpuStarted = cpuMs();
  const solution = await plan(instance.problem, {
    maxMs: seconds * 1000,
    seed,
    now: clock === "cpu" ? cpuMs : undefined,
  });
  const took = (performance.now() - started) / 1000;
  const cpu = (cpuMs() - cpuStarted) / 1000;
  const check = checkPlan(instance.problem, solution);
  const bks = bksBeside(path);
  const key = instance.format === "vrptw" && bks?.[`${name}_distance`] ? `${name}_distance` : name;
  const known = bks?.[key];
  const distance = check.distance;
  const row: Row = {
    name,
    klass: className(instance),
    folder: instance.folder.split("/").pop() ?? "",
    valid: check.valid,
    assigned: solution.unassigned.length === 0,
    vehicles: solution.routes.length,
    bksVehicles: known?.solved_with_vehicles,
    distance,
    gap: known && solution.unassigned.length === 0 ? (distance / known.best_known_cost - 1) * 100 : undefined,
    seconds: took,
    cpu,
  };
  rows.push(row);
  console.log(
    name.padEnd(16) + (check.valid ? "yes" : "NO").padEnd(7) + String(solution.unassigned.length).padStart(6) +
      String(row.vehicles).padStart(5) + String(row.bksVehicles ?? "").padStart(8) + distance.toFixed(2).padStart(12) +
      (row.gap === undefined ? "" : row.gap.toFixed(2)).padStart(9) + cpu.toFixed(2).padStart(7) +
      took.toFixed(2).padStart(7),
  );
  if (!check.valid) {
    for (const v of check.violations.slice(0, 5)) console.log(`  ${v.kind} ${v.vehicle} #${v.seq}: ${v.detail}`);
  }
  if (outDir) {
    const stopRow = (loc: number) => instance.rows[loc];
    const routes = solution.routes.map((r) =>
      r.steps.filter((s) => s.type !== "start" && s.type !== "end").map((s) => stopRow(s.location))
    );
    Deno.writeTextFileSync(
      `${outDir}/${name}.json`,
      JSON.stringify({ instance: name, routes, distance, seconds: took, cpu_seconds: cpu }) + "\n",
    );
  }
}

function summary(label: string, group: Row[]) {
  const gaps = group.filter((r) => r.gap !== undefined).map((r) => r.gap!);
  const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const sameVehicles = group.filter((r) => r.gap !== undefined && r.bksVehicles === r.vehicles).map((r) => r.gap!);
  console.log(
    label.padEnd(22) + `${group.length}`.padStart(4) +
      `${((100 * group.filter((r) => r.valid).length) / group.length).toFixed(0)} %`.padStart(8) +
      `${group.filter((r) => r.assigned).length}`.padStart(6) +
      avg(group.map((r) => r.vehicles)).toFixed(2).padStart(8) +
      (group.some((r) => r.bksVehicles) ? avg(group.map((r) => r.bksVehicles ?? 0)).toFixed(2) : "").padStart(8) +
      (gaps.length ? `${avg(gaps) >= 0 ? "+" : ""}${avg(gaps).toFixed(2)}` : "").padStart(9) +
      (sameVehicles.length ? `${avg(sameVehicles).toFixed(2)} (${sameVehicles.length})` : "").padStart(14) +
      avg(group.map((r) => r.cpu)).toFixed(2).padStart(7) + avg(group.map((r) => r.seconds)).toFixed(2).padStart(7),
  );
}

if (rows.length > 0) {
  console.log();
  console.log(
    "class".padEnd(22) + "n".padStart(4) + "valid".padStart(8) + "all in".padStart(6) + "veh".padStart(8) +
      "bks veh".padStart(8) + "gap %".padStart(9) + "gap same veh".padStart(14) + "cpu s".padStart(7) +
      "wall s".padStart(7),
  );
  const by = (key: (r: Row) => string) => {
    const groups = new Map<string, Row[]>();
    for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
    return groups;
  };
  for (const [label, group] of by((r) => r.klass)) summary(label, group);
  for (const [label, group] of by((r) => r.folder)) summary(`${label} (all)`, group);
}
// Dispatch into live routes (§11.6: at most 500 ms at p95 through the API): the planner's part alone,
// in-process, one new delivery at a time into 20 routes of 20 stops (10 pickups and their drop-offs each).
{
  const rng = random(seed);
  const ROUTES = 20, PAIRS = 10, NEW = 200;
  const points = Array.from({ length: 1 + 2 * (ROUTES * PAIRS + NEW) }, () => [rng() * 5000, rng() * 5000]);
  const durations = points.map(([x, y]) => points.map(([x2, y2]) => Math.round(Math.hypot(x - x2, y - y2) / 10)));
  const shipments = Array.from({ length: ROUTES * PAIRS + NEW }, (_, i) => ({
    id: `s${i}`,
    amount: 1,
    pickup: { location: 1 + 2 * i, service: 60 },
    delivery: { location: 2 + 2 * i, service: 120, window: [0, 6 * 3600] as [number, number] },
  }));
  const problem: Problem = {
    durations,
    vehicles: Array.from({ length: ROUTES }, (_, v) => ({
      id: `v${v}`,
      start: 0,
      end: null,
      capacity: 4,
      shift: [0, 8 * 3600] as [number, number],
    })),
    shipments,
  };
  const routes = problem.vehicles.map((v, r) => ({
    vehicle: v.id,
    steps: Array.from({ length: PAIRS }, (_, k) => `s${r * PAIRS + k}`).flatMap((id) => [
      { type: "pickup" as const, id },
      { type: "delivery" as const, id },
    ]),
  }));
  const times: number[] = [];
  let inserted = 0;
  const cpuBefore = cpuMs();
  for (let i = 0; i < NEW; i++) {
    const started = performance.now();
    if (insertCheapest(problem, routes, `s${ROUTES * PAIRS + i}`)) inserted++;
    times.push(performance.now() - started);
  }
  const cpuEach = (cpuMs() - cpuBefore) / NEW;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  console.log(
    `\ninsertCheapest into ${ROUTES} live routes of ${2 * PAIRS} stops, ${NEW} times (${inserted} placed): ` +
      `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms (wall clock, in-process); ${
        cpuEach.toFixed(2)
      } ms of CPU each`,
  );
}

if (rows.some((r) => !r.valid)) Deno.exit(1);

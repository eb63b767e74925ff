// The planner's working form of a Problem: flat typed arrays for the matrix, the stops ("nodes") and the
// vehicles, and a route that keeps, for every position, its earliest service start, its latest service
// start that keeps the rest of the route feasible and its load, so that an insertion is checked in O(1)
// (one stop) or O(n) per pickup position (a pair). Shared by plan.ts and insert.ts; the validator
// (../plan-check.ts) deliberately shares none of it.
import type { PlannedRoute, Problem, Step, StepType, UnassignedReason } from "./problem.ts";

export const PICKUP = 0;
export const DELIVERY = 1;
export const JOB = 2;

/** A matrix entry that is not a finite, non-negative number means "cannot travel". */
function travel(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : Infinity;
}

export class Model {
  /** Locations in the matrices; location `L` is a virtual end (zero travel to it) for open routes. */
  readonly L: number;
  readonly W: number;
  readonly dur: Float64Array;
  // Nodes: a shipment is two (pickup, delivery), a job one.
  readonly N: number;
  readonly loc: Int32Array;
  readonly svc: Float64Array;
  readonly open: Float64Array;
  readonly close: Float64Array;
  /** Load change at the node: +amount at a pickup, -amount at a delivery or job. */
  readonly delta: Float64Array;
  readonly kind: Uint8Array;
  readonly taskOf: Int32Array;
  // Tasks: a shipment or a job.
  readonly T: number;
  readonly taskId: string[];
  readonly first: Int32Array;
  /** The delivery node of a shipment, -1 for a job. */
  readonly second: Int32Array;
  readonly amount: Float64Array;
  readonly taskIndex = new Map<string, number>();
  // Vehicles.
  readonly V: number;
  readonly vehicleId: string[];
  readonly vStart: Int32Array;
  readonly vEnd: Int32Array;
  readonly cap: Float64Array;
  readonly shiftStart: Float64Array;
  readonly shiftEnd: Float64Array;
  /** Vehicles that are interchangeable share a class: an empty route of each class is tried once. */
  readonly vClass: Int32Array;
  readonly classes: number;

  /** The problem's location of each of the model's locations. */
  readonly original: Int32Array;

  /**
   * `only`, when given, restricts the model to those of the problem's locations (the rest are
   * unreachable), so that inserting into one short route copies a few matrix entries, not all of them.
   */
  constructor(readonly problem: Problem, only?: Iterable<number>) {
    const size = problem.durations.length;
    const original = only
      ? Int32Array.from(new Set([...only].filter((l) => Number.isInteger(l) && l >= 0 && l < size)))
      : Int32Array.from({ length: size }, (_, i) => i);
    const index = new Map<number, number>();
    original.forEach((l, i) => index.set(l, i));
    this.original = original;
    const L = original.length;
    this.L = L;
    const W = L + 1;
    this.W = W;
    const dur = new Float64Array(W * W).fill(Infinity);
    for (let a = 0; a < L; a++) {
      const row = problem.durations[original[a]] ?? [];
      for (let b = 0; b < L; b++) dur[a * W + b] = travel(row[original[b]]);
      dur[a * W + L] = 0;
    }
    this.dur = dur;
    const at = (location: number | null | undefined) => index.get(location ?? -1) ?? L;

    const jobs = problem.jobs ?? [];
    const T = problem.shipments.length + jobs.length;
    const N = problem.shipments.length * 2 + jobs.length;
    this.T = T;
    this.N = N;
    this.loc = new Int32Array(N);
    this.svc = new Float64Array(N);
    this.open = new Float64Array(N);
    this.close = new Float64Array(N);
    this.delta = new Float64Array(N);
    this.kind = new Uint8Array(N);
    this.taskOf = new Int32Array(N);
    this.taskId = [];
    this.first = new Int32Array(T);
    this.second = new Int32Array(T);
    this.amount = new Float64Array(T);
    let node = 0;
    const setNode = (
      stop: { location: number; service: number; window?: [number, number] },
      kind: number,
      delta: number,
      task: number,
    ) => {
      this.loc[node] = at(stop.location); // an unknown location is unreachable
      this.svc[node] = Math.max(0, stop.service || 0);
      this.open[node] = stop.window ? stop.window[0] : -Infinity;
      this.close[node] = stop.window ? stop.window[1] : Infinity;
      this.delta[node] = delta;
      this.kind[node] = kind;
      this.taskOf[node] = task;
      return node++;
    };
    let t = 0;
    for (const s of problem.shipments) {
      this.taskId.push(s.id);
      this.taskIndex.set(s.id, t);
      this.amount[t] = s.amount;
      this.first[t] = setNode(s.pickup, PICKUP, s.amount, t);
      this.second[t] = setNode(s.delivery, DELIVERY, -s.amount, t);
      t++;
    }
    for (const j of jobs) {
      this.taskId.push(j.id);
      this.taskIndex.set(j.id, t);
      this.amount[t] = j.amount;
      this.first[t] = setNode(j.stop, JOB, -j.amount, t);
      this.second[t] = -1;
      t++;
    }

    const V = problem.vehicles.length;
    this.V = V;
    this.vehicleId = problem.vehicles.map((v) => v.id);
    this.vStart = new Int32Array(V);
    this.vEnd = new Int32Array(V);
    this.cap = new Float64Array(V);
    this.shiftStart = new Float64Array(V);
    this.shiftEnd = new Float64Array(V);
    this.vClass = new Int32Array(V);
    const classKeys = new Map<string, number>();
    problem.vehicles.forEach((v, i) => {
      // An open route ends at the virtual location L, zero travel from anywhere.
      this.vStart[i] = at(v.start);
      this.vEnd[i] = v.end === null || v.end === undefined ? L : at(v.end);
      this.cap[i] = v.capacity;
      this.shiftStart[i] = v.shift[0];
      this.shiftEnd[i] = v.shift[1];
      const key = `${this.vStart[i]}|${this.vEnd[i]}|${v.capacity}|${v.shift[0]}|${v.shift[1]}`;
      let c = classKeys.get(key);
      if (c === undefined) classKeys.set(key, c = classKeys.size);
      this.vClass[i] = c;
    });
    this.classes = classKeys.size;
  }

  d(a: number, b: number): number {
    return this.dur[a * this.W + b];
  }

  /** Why a task cannot be served by any vehicle even alone, or undefined when some vehicle can. */
  impossibility(t: number): UnassignedReason | null | undefined {
    const a = this.amount[t];
    let fitsSome = false;
    let reachable = false;
    let inWindows = false;
    if (this.V === 0) return null;
    const tried = new Uint8Array(this.classes);
    for (let v = 0; v < this.V; v++) {
      if (tried[this.vClass[v]]) continue; // alike vehicles answer alike
      tried[this.vClass[v]] = 1;
      if (a > this.cap[v]) continue;
      fitsSome = true;
      const r = new Route(this, v, this.second[t] < 0 ? [this.first[t]] : [this.first[t], this.second[t]]);
      const n = r.nodes.length;
      let finite = true;
      for (let k = 0; k <= n; k++) if (!Number.isFinite(this.d(r.locs[k], r.locs[k + 1]))) finite = false;
      if (!finite) continue;
      reachable = true;
      let windows = true;
      for (let k = 1; k <= n; k++) if (r.begin[k] > r.closes[k]) windows = false;
      if (!windows) continue;
      inWindows = true;
      if (r.begin[n + 1] <= r.closes[n + 1]) return undefined;
    }
    if (!fitsSome) return "capacity";
    if (!reachable) return "unreachable";
    if (!inWindows) return "window";
    return "shift";
  }
}

/** One vehicle's route: the nodes in order, and per position (0 = start, n+1 = end) its timing and load. */
const EMPTY = new Float64Array(0);
const EMPTY_INT = new Int32Array(0);

export class Route {
  nodes: number[];
  locs: Int32Array = EMPTY_INT;
  svcs: Float64Array = EMPTY;
  closes: Float64Array = EMPTY;
  begin: Float64Array = EMPTY;
  latest: Float64Array = EMPTY;
  load: Float64Array = EMPTY;
  /** Highest load over positions 0..k. */
  pmax: Float64Array = EMPTY;
  cost = 0;

  constructor(readonly m: Model, readonly v: number, nodes: number[], compute = true) {
    this.nodes = nodes;
    if (compute) this.update();
  }

  /** A copy to change: its positions are computed afresh by the `update` that must follow the change. */
  clone(): Route {
    const r = new Route(this.m, this.v, this.nodes.slice(), false);
    r.cost = this.cost;
    return r;
  }

  /** Recomputes every position's timing and load after the nodes changed. */
  update(): void {
    const m = this.m, v = this.v, nodes = this.nodes, n = nodes.length, size = n + 2;
    if (this.locs.length < size) {
      // One allocation for the six number arrays: routes are copied on every search iteration.
      const c = Math.max(size + 4, this.locs.length * 2);
      const all = new Float64Array(6 * c);
      this.locs = new Int32Array(c);
      this.svcs = all.subarray(0, c);
      this.closes = all.subarray(c, 2 * c);
      this.begin = all.subarray(2 * c, 3 * c);
      this.latest = all.subarray(3 * c, 4 * c);
      this.load = all.subarray(4 * c, 5 * c);
      this.pmax = all.subarray(5 * c, 6 * c);
    }
    const { locs, svcs, closes, begin, latest, load, pmax } = this;
    const dur = m.dur, W = m.W;
    let initial = 0;
    for (let k = 0; k < n; k++) if (m.kind[nodes[k]] === JOB) initial -= m.delta[nodes[k]];
    locs[0] = m.vStart[v];
    svcs[0] = 0;
    closes[0] = m.shiftEnd[v];
    begin[0] = m.shiftStart[v];
    load[0] = initial;
    pmax[0] = initial;
    let cost = 0;
    for (let k = 1; k <= n; k++) {
      const node = nodes[k - 1];
      const l = m.loc[node];
      locs[k] = l;
      svcs[k] = m.svc[node];
      closes[k] = m.close[node];
      const leg = dur[locs[k - 1] * W + l];
      cost += leg;
      const arrival = begin[k - 1] + svcs[k - 1] + leg;
      begin[k] = arrival > m.open[node] ? arrival : m.open[node];
      load[k] = load[k - 1] + m.delta[node];
      pmax[k] = pmax[k - 1] > load[k] ? pmax[k - 1] : load[k];
    }
    const e = n + 1;
    locs[e] = m.vEnd[v];
    svcs[e] = 0;
    closes[e] = m.shiftEnd[v];
    const last = dur[locs[n] * W + locs[e]];
    cost += last;
    begin[e] = begin[n] + svcs[n] + last;
    load[e] = load[n];
    pmax[e] = pmax[n];
    latest[e] = closes[e];
    for (let k = n; k >= 0; k--) {
      const l = latest[k + 1] - dur[locs[k] * W + locs[k + 1]] - svcs[k];
      latest[k] = l < closes[k] ? l : closes[k];
    }
    this.cost = n === 0 ? 0 : cost;
  }

  /** True when every window, the shift end and the capacity hold (the planner's own check). */
  feasible(): boolean {
    const n = this.nodes.length;
    for (let k = 1; k <= n + 1; k++) if (!(this.begin[k] <= this.closes[k])) return false;
    return this.pmax[n + 1] <= this.m.cap[this.v];
  }
}

/** The best insertion found by the last `bestInsertion` call: added cost, and the positions after which
 * the first (pickup or job) and second (delivery) nodes go. */
export const found = { cost: Infinity, i: -1, j: -1 };

/**
 * Cheapest feasible insertion of task t into route r, keeping the order of its stops; `skip` (when
 * given) returns true for positions to ignore (SISR's "blinks"). Returns the added cost or Infinity, and
 * leaves the positions in `found`.
 */
export function bestInsertion(r: Route, t: number, limit = Infinity, skip?: () => boolean): number {
  const m = r.m;
  const dur = m.dur, W = m.W;
  const { locs, svcs, closes, begin, latest, load, pmax } = r;
  const n = r.nodes.length;
  const cap = m.cap[r.v];
  const a = m.amount[t];
  // An empty route's cost is its whole travel, not the start-to-end leg it had before.
  const fixed = n === 0 ? dur[locs[0] * W + locs[1]] : 0;
  let best = limit - fixed, bi = -1, bj = -1;
  const p = m.first[t];
  const lp = m.loc[p], sp = m.svc[p], op = m.open[p], cp = m.close[p];
  if (m.second[t] < 0) {
    // A job: its goods are on board from the start until it, so the loads up to it rise by `a`.
    for (let i = 0; i <= n; i++) {
      if (pmax[i] + a > cap) break;
      const leave = begin[i] + svcs[i];
      if (leave > cp) break;
      const li = locs[i], ln = locs[i + 1];
      const toP = dur[li * W + lp];
      const added = toP + dur[lp * W + ln] - dur[li * W + ln];
      if (added >= best) continue;
      const arrival = leave + toP;
      const b = arrival > op ? arrival : op;
      if (b > cp) continue;
      if (b + sp + dur[lp * W + ln] > latest[i + 1]) continue;
      if (skip && skip()) continue;
      best = added;
      bi = i;
    }
  } else {
    const q = m.second[t];
    const lq = m.loc[q], sq = m.svc[q], oq = m.open[q], cq = m.close[q];
    for (let i = 0; i <= n; i++) {
      const leave = begin[i] + svcs[i];
      if (leave > cp) break;
      if (load[i] + a > cap) continue;
      const li = locs[i], ln = locs[i + 1];
      const toP = dur[li * W + lp];
      const arrival = leave + toP;
      const bp = arrival > op ? arrival : op;
      if (bp > cp) continue;
      const addP = toP + dur[lp * W + ln] - dur[li * W + ln];
      if (addP >= best) continue;
      // The delivery right after the pickup.
      {
        const aq = bp + sp + dur[lp * W + lq];
        const bq = aq > oq ? aq : oq;
        if (bq <= cq && bq + sq + dur[lq * W + ln] <= latest[i + 1]) {
          const added = dur[li * W + lp] + dur[lp * W + lq] + dur[lq * W + ln] - dur[li * W + ln];
          if (added < best && !(skip && skip())) {
            best = added;
            bi = i;
            bj = i;
          }
        }
      }
      // The delivery after a later position k: walk forward with the delay the pickup causes.
      let ak = bp + sp + dur[lp * W + ln];
      if (ak > latest[i + 1]) continue;
      for (let k = i + 1; k <= n; k++) {
        const bk = ak > begin[k] ? ak : begin[k];
        if (bk > closes[k]) break;
        if (load[k] + a > cap) break;
        const lk = locs[k], lk1 = locs[k + 1];
        const toQ = dur[lk * W + lq];
        const added = addP + toQ + dur[lq * W + lk1] - dur[lk * W + lk1];
        if (added < best) {
          const aq = bk + svcs[k] + toQ;
          const bq = aq > oq ? aq : oq;
          if (bq <= cq && bq + sq + dur[lq * W + lk1] <= latest[k + 1] && !(skip && skip())) {
            best = added;
            bi = i;
            bj = k;
          }
        }
        ak = bk + svcs[k] + dur[lk * W + lk1];
      }
    }
  }
  if (bi < 0) {
    found.cost = Infinity;
    return Infinity;
  }
  found.cost = best + fixed;
  found.i = bi;
  found.j = bj;
  return best + fixed;
}

/** Puts task t into route r at the positions `bestInsertion` found. */
export function applyInsertion(r: Route, t: number, i: number, j: number): void {
  const m = r.m;
  if (m.second[t] >= 0) r.nodes.splice(j, 0, m.second[t]);
  r.nodes.splice(i, 0, m.first[t]);
  r.update();
}

const STEP_TYPE: StepType[] = ["pickup", "delivery", "job"];

/** The route as the API's steps, with its travel duration and distance. */
export function toPlannedRoute(r: Route): PlannedRoute {
  const m = r.m, n = r.nodes.length;
  const distances = m.problem.distances;
  const steps: Step[] = [];
  let distance = 0;
  let duration = 0;
  const leg = (a: number, b: number) => {
    if (b === m.L) return;
    duration += m.d(a, b);
    const row = distances?.[m.original[a]];
    distance += row ? travel(row[m.original[b]]) : m.d(a, b);
  };
  steps.push({
    type: "start",
    location: m.original[r.locs[0]],
    arrival: r.begin[0],
    begin: r.begin[0],
    load: r.load[0],
  });
  for (let k = 1; k <= n; k++) {
    const node = r.nodes[k - 1];
    leg(r.locs[k - 1], r.locs[k]);
    steps.push({
      type: STEP_TYPE[m.kind[node]],
      id: m.taskId[m.taskOf[node]],
      location: m.original[r.locs[k]],
      arrival: r.begin[k - 1] + r.svcs[k - 1] + m.d(r.locs[k - 1], r.locs[k]),
      begin: r.begin[k],
      load: r.load[k],
    });
  }
  if (r.locs[n + 1] !== m.L) {
    leg(r.locs[n], r.locs[n + 1]);
    steps.push({
      type: "end",
      location: m.original[r.locs[n + 1]],
      arrival: r.begin[n + 1],
      begin: r.begin[n + 1],
      load: r.load[n + 1],
    });
  }
  return { vehicle: m.vehicleId[r.v], steps, distance, duration };
}

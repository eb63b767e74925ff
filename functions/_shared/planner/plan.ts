// The built-in route planner: pickup and delivery with time windows, capacity, shifts and open routes.
// Pure computation, no I/O, so that the routes API, the bench and the tests run the same code.
//
// Objective: first the fewest unassigned shipments and jobs, then the least total travel duration.
// 1. What no vehicle could serve even alone is set aside with its reason (capacity, unreachable,
//    window, shift).
// 2. Construction: regret-2 insertion (the shipment whose best and second-best routes differ most goes
//    first, at its cheapest feasible place), which is the plan returned with no time at all.
// 3. Improvement until the clock runs out: ruin and recreate in the manner of slack induction by string
//    removals (strings of neighbouring stops taken out of a few nearby routes, put back one by one at
//    their cheapest place, skipping a few places at random), accepted by simulated annealing.
// Every insertion is checked against windows, capacity, pickup-before-drop-off and the shift end, so
// every intermediate plan is feasible and the best one can be returned at any moment.
import type { PlanOptions, Problem, Solution } from "./problem.ts";
import { applyInsertion, bestInsertion, found, JOB, Model, PICKUP, Route, toPlannedRoute } from "./model.ts";

/** The pseudo-random generator (mulberry32): small, fast, and repeatable for a seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const now = () => performance.now();
const YIELD_MS = 40;
const PROGRESS_MS = 250;

/** A plan under construction: the routes (one per vehicle, maybe empty), what is not in them, and where
 * each node is. Routes are shared between a plan and its copy until one of them changes them. */
class Plan {
  constructor(
    public routes: Route[],
    public unassigned: number[],
    public where: Int32Array,
    public cost: number,
  ) {}

  copy(): Plan {
    return new Plan(this.routes.slice(), this.unassigned.slice(), this.where.slice(), this.cost);
  }

  better(other: Plan): boolean {
    if (this.unassigned.length !== other.unassigned.length) return this.unassigned.length < other.unassigned.length;
    return this.cost < other.cost - 1e-9;
  }
}

class Clock {
  private lastYield: number;
  private lastProgress: number;
  private readonly read: () => number;
  private readAt = -Infinity;
  private last = 0;
  readonly start: number;
  /** Shipments that no vehicle can serve, counted in every progress report's unassigned. */
  setAside = 0;
  /** The budget; a budget that is not a number is none. */
  readonly maxMs: number;
  constructor(readonly options: PlanOptions) {
    this.maxMs = options.maxMs > 0 ? options.maxMs : 0;
    this.read = options.now ?? now;
    this.start = this.read();
    this.lastYield = now();
    this.lastProgress = this.lastYield;
  }
  /** Milliseconds spent on the plan's clock; a clock other than the wall's is read at most every 1 ms. */
  get elapsed(): number {
    if (this.read !== now) {
      const wall = now();
      if (wall - this.readAt >= 1) {
        this.readAt = wall;
        this.last = this.read();
      }
      return this.last - this.start;
    }
    return now() - this.start;
  }
  get stopped(): boolean {
    return this.options.signal?.aborted === true || this.elapsed >= this.maxMs;
  }
  /** Yields to the event loop when it is time, and reports progress now and then. */
  async tick(report: () => { unassigned: number; duration: number }): Promise<void> {
    const t = now();
    if (t - this.lastYield < YIELD_MS) return;
    this.lastYield = t;
    if (this.options.onProgress && t - this.lastProgress >= PROGRESS_MS) {
      this.lastProgress = t;
      const fraction = this.maxMs > 0 ? Math.min(1, this.elapsed / this.maxMs) : 1;
      const { unassigned, duration } = report();
      await this.options.onProgress({ fraction, unassigned: unassigned + this.setAside, duration });
    }
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    this.lastYield = now();
  }
}

export async function plan(problem: Problem, options: PlanOptions): Promise<Solution> {
  const clock = new Clock(options);
  const m = new Model(problem);
  const rng = random(options.seed ?? 1);

  const reasons = new Map<number, Solution["unassigned"][number]["reason"]>();
  const tasks: number[] = [];
  for (let t = 0; t < m.T; t++) {
    const why = m.impossibility(t);
    if (why === undefined) tasks.push(t);
    else reasons.set(t, why);
  }

  clock.setAside = reasons.size;
  let best = await construct(m, tasks, clock);
  if (!clock.stopped && tasks.length > 0) best = await improve(m, best, tasks, clock, rng);

  const routes = best.routes.filter((r) => r.nodes.length > 0).map(toPlannedRoute);
  const unassigned = [
    ...[...reasons].map(([t, reason]) => ({ t, reason })),
    ...best.unassigned.map((t) => ({ t, reason: null })),
  ].sort((a, b) => a.t - b.t).map(({ t, reason }) => ({ id: m.taskId[t], reason }));
  await options.onProgress?.({ fraction: 1, unassigned: unassigned.length, duration: best.cost });
  return {
    routes,
    unassigned,
    distance: routes.reduce((s, r) => s + r.distance, 0),
    duration: routes.reduce((s, r) => s + r.duration, 0),
  };
}

/** Regret-2 insertion over every vehicle, empty ones of a kind counted once. */
async function construct(m: Model, tasks: number[], clock: Clock): Promise<Plan> {
  const V = m.V;
  const routes: Route[] = [];
  for (let v = 0; v < V; v++) routes.push(new Route(m, v, []));
  const where = new Int32Array(m.N).fill(-1);
  const U = tasks.length;
  const cost = new Float64Array(U * V);
  const posI = new Int32Array(U * V);
  const posJ = new Int32Array(U * V);
  const classRoute = new Int32Array(m.classes).fill(-1);
  for (let r = 0; r < V; r++) if (classRoute[m.vClass[r]] < 0) classRoute[m.vClass[r]] = r;
  const evaluate = (u: number, r: number) => {
    const c = bestInsertion(routes[r], tasks[u]);
    cost[u * V + r] = c;
    posI[u * V + r] = found.i;
    posJ[u * V + r] = found.j;
  };
  for (let u = 0; u < U; u++) {
    for (let r = 0; r < V; r++) {
      const first = classRoute[m.vClass[r]];
      if (first === r) evaluate(u, r);
      else {
        cost[u * V + r] = cost[u * V + first];
        posI[u * V + r] = posI[u * V + first];
        posJ[u * V + r] = posJ[u * V + first];
      }
    }
  }
  const alive: number[] = Array.from({ length: U }, (_, u) => u);
  const unassigned: number[] = [];
  const seen = new Int32Array(m.classes);
  let stamp = 0;
  let total = 0;
  while (alive.length > 0) {
    let pick = -1, pickRoute = -1, pickScore = -Infinity, pickCost = Infinity;
    for (let a = alive.length - 1; a >= 0; a--) {
      const u = alive[a];
      let b1 = Infinity, b2 = Infinity, br = -1;
      stamp++;
      for (let r = 0; r < V; r++) {
        if (routes[r].nodes.length === 0) {
          const c = m.vClass[r];
          if (seen[c] === stamp) continue;
          seen[c] = stamp;
        }
        const c = cost[u * V + r];
        if (c < b1) {
          b2 = b1;
          b1 = c;
          br = r;
        } else if (c < b2) b2 = c;
      }
      if (br < 0) {
        // No route can take it now, and routes only fill up: it stays out.
        unassigned.push(u);
        alive[a] = alive[alive.length - 1];
        alive.pop();
        continue;
      }
      const score = b2 === Infinity ? 1e300 - b1 : b2 - b1;
      if (score > pickScore || (score === pickScore && b1 < pickCost)) {
        pick = a;
        pickRoute = br;
        pickScore = score;
        pickCost = b1;
      }
    }
    if (pick < 0) break;
    const u = alive[pick];
    alive[pick] = alive[alive.length - 1];
    alive.pop();
    const r = pickRoute;
    const route = routes[r];
    const before = route.cost;
    applyInsertion(route, tasks[u], posI[u * V + r], posJ[u * V + r]);
    total += route.cost - before;
    for (const node of route.nodes) where[node] = r;
    for (const w of alive) evaluate(w, r);
    await clock.tick(() => ({ unassigned: alive.length + unassigned.length, duration: total }));
  }
  return new Plan(routes, unassigned.map((u) => tasks[u]).sort((a, b) => a - b), where, total);
}

/** For each node, the other nodes by increasing travel to and from it (the nearest `limit` only). */
async function neighbours(
  m: Model,
  limit: number,
  clock: Clock,
  report: () => { unassigned: number; duration: number },
): Promise<Int32Array[]> {
  const out: Int32Array[] = [];
  const keys = new Float64Array(m.N);
  const k = Math.min(limit, m.N - 1);
  for (let a = 0; a < m.N; a++) {
    const la = m.loc[a];
    for (let b = 0; b < m.N; b++) keys[b] = b === a ? Infinity : m.d(la, m.loc[b]) + m.d(m.loc[b], la);
    // The k-th smallest key by a native numeric sort, then only the nodes within it sorted.
    const threshold = k > 0 ? keys.slice().sort()[k - 1] : -Infinity;
    const near: number[] = [];
    for (let b = 0; b < m.N; b++) if (b !== a && keys[b] <= threshold) near.push(b);
    near.sort((x, y) => keys[x] - keys[y] || x - y);
    out.push(Int32Array.from(near.slice(0, k)));
    await clock.tick(report);
  }
  return out;
}

/** Ruin and recreate (string removals, greedy insertion with blinks) under simulated annealing. */
async function improve(m: Model, initial: Plan, tasks: number[], clock: Clock, rng: () => number): Promise<Plan> {
  const near = await neighbours(m, 100, clock, () => ({
    unassigned: initial.unassigned.length,
    duration: initial.cost,
  }));
  const possible = new Uint8Array(m.T);
  for (const t of tasks) possible[t] = 1;
  const depot = m.V > 0 ? m.vStart[0] : 0;
  const depotDistance = new Float64Array(m.T);
  for (const t of tasks) depotDistance[t] = m.d(depot, m.loc[m.first[t]]);

  const AVERAGE_REMOVED = 10;
  const MAX_STRING = 10;
  const BLINK = 0.01;
  const ROUTE_REMOVAL = 0.02;
  const SPLIT = 0.02;
  let current = initial;
  let best = initial;
  const assignedNodes = () => m.N - current.unassigned.length;
  const edges = Math.max(1, assignedNodes() + current.routes.filter((r) => r.nodes.length > 0).length);
  const averageEdge = initial.cost > 0 ? initial.cost / edges : 1;
  const T0 = 0.5 * averageEdge;
  const Tf = 0.005 * averageEdge;
  const budget = Math.max(1, clock.maxMs - clock.elapsed);
  const startedAt = clock.elapsed;
  const seen = new Int32Array(m.classes);
  let stamp = 0;
  const ruined = new Uint8Array(m.V);
  const owned = new Uint8Array(m.V);
  const removedTask = new Uint8Array(m.T);
  const skip = () => rng() < BLINK;
  const iterations = clock.options.iterations;
  let iteration = 0;

  while (!clock.stopped && (iterations === undefined || iteration < iterations)) {
    iteration++;
    const candidate = current.copy();
    owned.fill(0);
    ruined.fill(0);
    const own = (r: number): Route => {
      if (!owned[r]) {
        candidate.routes[r] = candidate.routes[r].clone();
        owned[r] = 1;
      }
      return candidate.routes[r];
    };

    // Ruin: strings around a random stop, in the routes nearest to it.
    const removed: number[] = [];
    let used = 0, stops = 0;
    for (const r of candidate.routes) {
      if (r.nodes.length > 0) {
        used++;
        stops += r.nodes.length;
      }
    }
    // Now and then a part of a route moves to a vehicle of its own first: the plan shortest in distance
    // may use more vehicles than the one the search holds, and insertions alone rarely open a route.
    if (used > 0 && used < m.V && rng() < SPLIT) split(m, candidate, own, rng);
    if (used > 0) {
      const maxString = Math.min(MAX_STRING, stops / used);
      const maxStrings = (4 * AVERAGE_REMOVED) / (1 + maxString) - 1;
      const strings = Math.floor(rng() * maxStrings) + 1;
      let seed = Math.floor(rng() * m.N);
      for (let tries = 0; candidate.where[seed] < 0 && tries < m.N; tries++) seed = (seed + 1) % m.N;
      let done = 0;
      const list = near[seed];
      for (let k = -1; k < list.length && done < strings; k++) {
        const node = k < 0 ? seed : list[k];
        const r = candidate.where[node];
        if (r < 0 || ruined[r]) continue;
        ruined[r] = 1;
        done++;
        const route = own(r);
        const len = route.nodes.length;
        const at = route.nodes.indexOf(node);
        const maxLen = Math.min(len, maxString);
        const l = Math.floor(rng() * maxLen) + 1;
        let kept = 0;
        if (rng() < 0.5 && l < len) {
          kept = 1;
          while (l + kept < len && rng() < 0.5) kept++;
        }
        const span = l + kept;
        const from = Math.max(0, Math.min(len - span, at - Math.floor(rng() * span)));
        const keepAt = from + Math.floor(rng() * (l + 1));
        for (let x = from; x < from + span; x++) {
          if (kept > 0 && x >= keepAt && x < keepAt + kept) continue;
          const t = m.taskOf[route.nodes[x]];
          if (!removedTask[t]) {
            removedTask[t] = 1;
            removed.push(t);
          }
        }
        route.nodes = route.nodes.filter((nd) => !removedTask[m.taskOf[nd]]);
        route.update();
      }
      // Now and then a whole route too (the shorter of two): strings alone rarely empty a long route,
      // and a plan with one vehicle fewer can be much shorter.
      if (used > 1 && rng() < ROUTE_REMOVAL) {
        const nonEmpty: number[] = [];
        for (let r = 0; r < m.V; r++) if (candidate.routes[r].nodes.length > 0) nonEmpty.push(r);
        const a = nonEmpty[Math.floor(rng() * nonEmpty.length)], b = nonEmpty[Math.floor(rng() * nonEmpty.length)];
        const r = nonEmpty.length === 0
          ? -1
          : candidate.routes[b].nodes.length < candidate.routes[a].nodes.length
          ? b
          : a;
        if (r >= 0) {
          const route = own(r);
          for (const nd of route.nodes) {
            const t = m.taskOf[nd];
            if (!removedTask[t]) {
              removedTask[t] = 1;
              removed.push(t);
            }
          }
          route.nodes = [];
          route.update();
        }
      }
      for (const t of removed) {
        candidate.where[m.first[t]] = -1;
        if (m.second[t] >= 0) candidate.where[m.second[t]] = -1;
      }
    }

    // Recreate: the removed and the unassigned, in one of a few orders, each at its cheapest place.
    const pending = removed.concat(candidate.unassigned.filter((t) => possible[t]));
    for (const t of removed) removedTask[t] = 0;
    const order = rng();
    if (order < 4 / 11) shuffle(pending, rng);
    else if (order < 8 / 11) pending.sort((a, b) => m.amount[b] - m.amount[a]);
    else if (order < 10 / 11) pending.sort((a, b) => depotDistance[b] - depotDistance[a]);
    else pending.sort((a, b) => depotDistance[a] - depotDistance[b]);
    const left: number[] = [];
    for (const t of pending) {
      let bestCost = Infinity, br = -1, bi = -1, bj = -1;
      stamp++;
      for (let r = 0; r < m.V; r++) {
        const route = candidate.routes[r];
        if (route.nodes.length === 0) {
          const c = m.vClass[r];
          if (seen[c] === stamp) continue;
          seen[c] = stamp;
        }
        const c = bestInsertion(route, t, bestCost, skip);
        if (c < bestCost) {
          bestCost = c;
          br = r;
          bi = found.i;
          bj = found.j;
        }
      }
      if (br < 0) {
        left.push(t);
        continue;
      }
      const route = own(br);
      applyInsertion(route, t, bi, bj);
      candidate.where[m.first[t]] = br;
      if (m.second[t] >= 0) candidate.where[m.second[t]] = br;
    }
    candidate.unassigned = left.sort((a, b) => a - b);
    let cost = 0;
    for (const r of candidate.routes) cost += r.cost;
    candidate.cost = cost;

    // Accept: fewer unassigned always; as many, by simulated annealing on the travel.
    const progress = iterations === undefined
      ? Math.min(1, (clock.elapsed - startedAt) / budget)
      : iteration / iterations;
    const temperature = T0 * Math.pow(Tf / T0, progress);
    if (
      candidate.unassigned.length < current.unassigned.length ||
      (candidate.unassigned.length === current.unassigned.length &&
        candidate.cost < current.cost - temperature * Math.log(rng()))
    ) {
      current = candidate;
      if (current.better(best)) best = current;
    }
    await clock.tick(() => ({ unassigned: best.unassigned.length, duration: best.cost }));
  }
  return best;
}

/** Moves the segment of a random route that costs least on its own to an empty vehicle, when feasible. */
function split(m: Model, plan: Plan, own: (r: number) => Route, rng: () => number): void {
  const usedRoutes: number[] = [];
  let empty = -1;
  for (let r = 0; r < m.V; r++) {
    if (plan.routes[r].nodes.length > 1) usedRoutes.push(r);
    else if (plan.routes[r].nodes.length === 0 && empty < 0) empty = r;
  }
  if (usedRoutes.length === 0 || empty < 0) return;
  const r = usedRoutes[Math.floor(rng() * usedRoutes.length)];
  const route = plan.routes[r];
  const n = route.nodes.length, locs = route.locs;
  const position = new Map<number, number>();
  route.nodes.forEach((nd, k) => position.set(nd, k));
  const start = m.vStart[empty], end = m.vEnd[empty];
  let best = Infinity, bi = -1, bj = -1;
  for (let i = 0; i < n; i++) {
    let open = 0;
    for (let j = i; j < n; j++) {
      const nd = route.nodes[j];
      if (m.kind[nd] !== JOB) {
        const partner = m.kind[nd] === PICKUP ? m.second[m.taskOf[nd]] : m.first[m.taskOf[nd]];
        const at = position.get(partner)!;
        open += at >= i && at < j ? -1 : 1;
      }
      if (open !== 0 || (i === 0 && j === n - 1)) continue;
      const f = locs[i + 1], l = locs[j + 1], before = locs[i], after = locs[j + 2];
      const delta = m.d(start, f) + m.d(l, end) + m.d(before, after) - m.d(before, f) - m.d(l, after);
      if (delta < best) {
        best = delta;
        bi = i;
        bj = j;
      }
    }
  }
  if (bi < 0) return;
  const moved = new Route(m, empty, route.nodes.slice(bi, bj + 1));
  const rest = new Route(m, r, route.nodes.slice(0, bi).concat(route.nodes.slice(bj + 1)));
  if (!moved.feasible() || !rest.feasible()) return;
  const a = own(r), b = own(empty);
  a.nodes = rest.nodes;
  a.update();
  b.nodes = moved.nodes;
  b.update();
  for (const nd of b.nodes) plan.where[nd] = empty;
}

function shuffle<T>(items: T[], rng: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
}

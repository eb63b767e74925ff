// An independent check of a route plan against its problem, sharing no code with the planner (only the
// types): every shipment and job exactly once (in a route or unassigned), a pickup before its drop-off on
// the same route, every window (service starts no later than the window's end; waiting is allowed), the
// capacity at every moment (a job's goods are on board from the route's start), the shift end, and the
// routes' travel recomputed from the matrices. The routes API uses it to time a route a dispatcher
// ordered by hand and to tell what it breaks; the tests and the bench check every plan with it.
import type { Problem, StepType } from "./planner/problem.ts";

export type ViolationKind = "window" | "capacity" | "order" | "shift" | "missing" | "duplicate" | "unknown";

export interface Violation {
  vehicle: string;
  /** Position of the offending step in the route's steps as given (start and end steps counted), or -1. */
  seq: number;
  kind: ViolationKind;
  detail: string;
}

export interface CheckedRoute {
  vehicle: string;
  /** Per visited stop (start and end included when the route has them), in order. */
  arrivals: number[];
  begins: number[];
  /** Units on board after each of those stops. */
  loads: number[];
  distance: number;
  duration: number;
}

export interface PlanCheck {
  valid: boolean;
  violations: Violation[];
  routes: CheckedRoute[];
  distance: number;
  duration: number;
}

interface StopSpec {
  location: number;
  service: number;
  window?: [number, number];
}

function leg(matrix: number[][] | undefined, from: number, to: number): number {
  const value = matrix?.[from]?.[to];
  return typeof value === "number" && Number.isFinite(value) ? value : Infinity;
}

function say(n: number): string {
  if (!Number.isFinite(n)) return "never (no travel is possible on the way)";
  return `${Math.round(n * 100) / 100} s`;
}

export function checkPlan(
  problem: Problem,
  plan: {
    routes: { vehicle: string; steps: { type: StepType; id?: string }[] }[];
    unassigned?: { id: string }[];
  },
): PlanCheck {
  const violations: Violation[] = [];
  const shipments = new Map(problem.shipments.map((s) => [s.id, s]));
  const jobs = new Map((problem.jobs ?? []).map((j) => [j.id, j]));
  const vehicles = new Map(problem.vehicles.map((v) => [v.id, v]));
  const distances = problem.distances ?? problem.durations;
  /** Where each id was seen: a route's vehicle or "unassigned". */
  const placed = new Map<string, string>();
  const place = (id: string, where: string, seq: number) => {
    const before = placed.get(id);
    if (before !== undefined) {
      violations.push({
        vehicle: where,
        seq,
        kind: "duplicate",
        detail: `${id} is planned twice (${before === "unassigned" ? "also unassigned" : `also on ${before}`})`,
      });
    } else placed.set(id, where);
  };

  const usedVehicles = new Set<string>();
  const checked: CheckedRoute[] = [];
  for (const route of plan.routes) {
    const vehicle = vehicles.get(route.vehicle);
    const out: CheckedRoute = { vehicle: route.vehicle, arrivals: [], begins: [], loads: [], distance: 0, duration: 0 };
    checked.push(out);
    if (!vehicle) {
      violations.push({ vehicle: route.vehicle, seq: -1, kind: "unknown", detail: `no vehicle ${route.vehicle}` });
      continue;
    }
    if (usedVehicles.has(route.vehicle)) {
      violations.push({
        vehicle: route.vehicle,
        seq: -1,
        kind: "duplicate",
        detail: `vehicle ${route.vehicle} has two routes`,
      });
    }
    usedVehicles.add(route.vehicle);

    // What the route's steps mean, in order; start and end are where the vehicle says, wherever listed.
    const visits: { seq: number; type: StepType; id?: string; stop: StopSpec; change: number }[] = [];
    let onBoard = 0;
    const pickedUp = new Set<string>();
    const delivered = new Set<string>();
    route.steps.forEach((step, seq) => {
      if (step.type === "start" || step.type === "end") return;
      const id = step.id ?? "";
      if (step.type === "job") {
        const job = jobs.get(id);
        if (!job) {
          violations.push({ vehicle: route.vehicle, seq, kind: "unknown", detail: `no job ${id}` });
          return;
        }
        place(id, route.vehicle, seq);
        onBoard += job.amount;
        visits.push({ seq, type: "job", id, stop: job.stop, change: -job.amount });
        return;
      }
      const shipment = shipments.get(id);
      if (!shipment || (step.type !== "pickup" && step.type !== "delivery")) {
        violations.push({ vehicle: route.vehicle, seq, kind: "unknown", detail: `no shipment ${id}` });
        return;
      }
      if (step.type === "pickup") {
        if (pickedUp.has(id)) {
          violations.push({ vehicle: route.vehicle, seq, kind: "duplicate", detail: `${id} is picked up twice` });
          return;
        }
        pickedUp.add(id);
        place(id, route.vehicle, seq);
        visits.push({ seq, type: "pickup", id, stop: shipment.pickup, change: shipment.amount });
      } else {
        if (delivered.has(id)) {
          violations.push({ vehicle: route.vehicle, seq, kind: "duplicate", detail: `${id} is dropped off twice` });
          return;
        }
        delivered.add(id);
        if (!pickedUp.has(id)) {
          violations.push({
            vehicle: route.vehicle,
            seq,
            kind: "order",
            detail: `${id} is dropped off before it is picked up on this route`,
          });
        }
        visits.push({ seq, type: "delivery", id, stop: shipment.delivery, change: -shipment.amount });
      }
    });
    for (const id of pickedUp) {
      if (!delivered.has(id)) {
        violations.push({
          vehicle: route.vehicle,
          seq: -1,
          kind: "order",
          detail: `${id} is picked up but not dropped off on this route`,
        });
      }
    }
    for (const id of delivered) {
      if (!pickedUp.has(id) && !placed.has(id)) place(id, route.vehicle, -1);
    }

    // Time and load along the route.
    const startSeq = route.steps.findIndex((s) => s.type === "start");
    const endSeq = route.steps.findIndex((s) => s.type === "end");
    const [shiftStart, shiftEnd] = vehicle.shift;
    let time = shiftStart;
    let at = vehicle.start;
    out.arrivals.push(time);
    out.begins.push(time);
    out.loads.push(onBoard);
    if (onBoard > vehicle.capacity) {
      violations.push({
        vehicle: route.vehicle,
        seq: Math.max(0, startSeq),
        kind: "capacity",
        detail: `starts with ${onBoard} units on board, capacity is ${vehicle.capacity}`,
      });
    }
    let lastFinish = time;
    for (const visit of visits) {
      const travel = leg(problem.durations, at, visit.stop.location);
      out.duration += travel;
      out.distance += leg(distances, at, visit.stop.location);
      const arrival = time + travel;
      const opens = visit.stop.window?.[0] ?? -Infinity;
      const closes = visit.stop.window?.[1] ?? Infinity;
      const begin = Math.max(arrival, opens);
      if (!(begin <= closes)) {
        violations.push({
          vehicle: route.vehicle,
          seq: visit.seq,
          kind: "window",
          detail: `${visit.type} of ${visit.id} arrives at ${say(arrival)}, its window ends at ${say(closes)}`,
        });
      }
      onBoard += visit.change;
      if (onBoard > vehicle.capacity) {
        violations.push({
          vehicle: route.vehicle,
          seq: visit.seq,
          kind: "capacity",
          detail: `${onBoard} units on board after the ${visit.type} of ${visit.id}, capacity is ${vehicle.capacity}`,
        });
      }
      out.arrivals.push(arrival);
      out.begins.push(begin);
      out.loads.push(onBoard);
      time = begin + Math.max(0, visit.stop.service);
      lastFinish = time;
      at = visit.stop.location;
    }
    if (vehicle.end !== null && vehicle.end !== undefined) {
      const travel = leg(problem.durations, at, vehicle.end);
      out.duration += travel;
      out.distance += leg(distances, at, vehicle.end);
      const arrival = time + travel;
      out.arrivals.push(arrival);
      out.begins.push(arrival);
      out.loads.push(onBoard);
      if (!(arrival <= shiftEnd)) {
        violations.push({
          vehicle: route.vehicle,
          seq: endSeq >= 0 ? endSeq : route.steps.length,
          kind: "shift",
          detail: `back at the end at ${say(arrival)}, the shift ends at ${say(shiftEnd)}`,
        });
      }
    } else if (!(lastFinish <= shiftEnd)) {
      violations.push({
        vehicle: route.vehicle,
        seq: visits.length > 0 ? visits[visits.length - 1].seq : -1,
        kind: "shift",
        detail: `the last stop is done at ${say(lastFinish)}, the shift ends at ${say(shiftEnd)}`,
      });
    }
  }

  for (const u of plan.unassigned ?? []) {
    if (!shipments.has(u.id) && !jobs.has(u.id)) {
      violations.push({ vehicle: "", seq: -1, kind: "unknown", detail: `unassigned ${u.id} is not in the problem` });
    } else place(u.id, "unassigned", -1);
  }
  for (const id of [...shipments.keys(), ...jobs.keys()]) {
    if (!placed.has(id)) {
      violations.push({ vehicle: "", seq: -1, kind: "missing", detail: `${id} is neither in a route nor unassigned` });
    }
  }
  const distance = checked.reduce((s, r) => s + r.distance, 0);
  const duration = checked.reduce((s, r) => s + r.duration, 0);
  return { valid: violations.length === 0, violations, routes: checked, distance, duration };
}

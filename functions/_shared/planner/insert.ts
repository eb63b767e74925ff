// Inserting one shipment (or job) into routes already planned, for dispatch into live routes: each route's
// vehicle starts where the driver is, at "now" (its shift start), and what it already carries is a job.
// The existing order is kept; the new stops go where they add the least travel duration while every
// window, the capacity and the shift end still hold. Pure computation, no I/O.
import type { Problem, Step, StepType } from "./problem.ts";
import { applyInsertion, bestInsertion, DELIVERY, found, JOB, Model, PICKUP, Route, toPlannedRoute } from "./model.ts";

const KIND_OF: Partial<Record<StepType, number>> = { pickup: PICKUP, delivery: DELIVERY, job: JOB };

export function insertCheapest(
  problem: Problem,
  routes: { vehicle: string; steps: { type: StepType; id?: string }[] }[],
  id: string,
): { vehicle: string; steps: Step[]; added_duration: number } | null {
  // Each route is modelled alone, over its own shipments and places only: no copy of the whole problem.
  const shipments = new Map(problem.shipments.map((s) => [s.id, s]));
  const jobs = new Map((problem.jobs ?? []).map((j) => [j.id, j]));
  const newShipment = shipments.get(id), newJob = jobs.get(id);
  if (!newShipment && !newJob) return null;
  const vehicles = new Map(problem.vehicles.map((v) => [v.id, v]));
  let best: { route: Route; cost: number; i: number; j: number } | null = null;
  for (const given of routes) {
    const vehicle = vehicles.get(given.vehicle);
    if (!vehicle) continue;
    const sub: Problem = {
      durations: problem.durations,
      distances: problem.distances,
      vehicles: [vehicle],
      shipments: newShipment ? [newShipment] : [],
      jobs: newJob ? [newJob] : [],
    };
    const only = [vehicle.start];
    if (vehicle.end !== null && vehicle.end !== undefined) only.push(vehicle.end);
    const taken = new Set([id]);
    let known = true;
    for (const step of given.steps) {
      if (step.type === "start" || step.type === "end" || taken.has(step.id ?? "")) continue;
      const s = step.type === "job" ? undefined : shipments.get(step.id ?? "");
      const j = step.type === "job" ? jobs.get(step.id ?? "") : undefined;
      if (s) sub.shipments.push(s);
      else if (j) sub.jobs!.push(j);
      else known = false;
      taken.add(step.id ?? "");
    }
    if (!known) continue;
    for (const s of sub.shipments) only.push(s.pickup.location, s.delivery.location);
    for (const j of sub.jobs!) only.push(j.stop.location);
    const m = new Model(sub, only);
    const t = m.taskIndex.get(id)!;
    const nodes: number[] = [];
    for (const step of given.steps) {
      const kind = KIND_OF[step.type];
      const task = m.taskIndex.get(step.id ?? "");
      if (kind === undefined || task === undefined || task === t) continue; // start, end, or the new one again
      const node = kind === DELIVERY ? m.second[task] : m.first[task];
      if (node < 0 || m.kind[node] !== kind) known = false;
      else nodes.push(node);
    }
    if (!known) continue;
    const route = new Route(m, 0, nodes);
    const cost = bestInsertion(route, t, best ? best.cost : Infinity);
    if (cost < (best ? best.cost : Infinity)) best = { route, cost, i: found.i, j: found.j };
  }
  if (!best) return null;
  applyInsertion(best.route, best.route.m.taskIndex.get(id)!, best.i, best.j);
  const planned = toPlannedRoute(best.route);
  return { vehicle: planned.vehicle, steps: planned.steps, added_duration: best.cost };
}

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
  // Each route gets a model of its own over its few places only: no copy of the whole matrix.
  const places = new Map<string, number[]>();
  for (const s of problem.shipments) places.set(s.id, [s.pickup.location, s.delivery.location]);
  for (const j of problem.jobs ?? []) places.set(j.id, [j.stop.location]);
  const mine = places.get(id);
  if (!mine) return null;
  const vehicles = new Map(problem.vehicles.map((v) => [v.id, v]));
  let best: { route: Route; cost: number; i: number; j: number } | null = null;
  for (const given of routes) {
    const vehicle = vehicles.get(given.vehicle);
    if (!vehicle) continue;
    const only = [vehicle.start, ...mine];
    if (vehicle.end !== null && vehicle.end !== undefined) only.push(vehicle.end);
    for (const step of given.steps) only.push(...(places.get(step.id ?? "") ?? []));
    const m = new Model(problem, only);
    const t = m.taskIndex.get(id)!;
    const nodes: number[] = [];
    let known = true;
    for (const step of given.steps) {
      const kind = KIND_OF[step.type];
      if (kind === undefined) continue; // start, end
      const task = step.id === undefined ? undefined : m.taskIndex.get(step.id);
      if (task === undefined || task === t) {
        known = known && task === t; // the task itself already in a route: it is inserted afresh
        continue;
      }
      const node = kind === DELIVERY ? m.second[task] : m.first[task];
      if (node < 0 || m.kind[node] !== kind) {
        known = false;
        continue;
      }
      nodes.push(node);
    }
    if (!known) continue;
    const route = new Route(m, problem.vehicles.indexOf(vehicle), nodes);
    const cost = bestInsertion(route, t, best ? best.cost : Infinity);
    if (cost < (best ? best.cost : Infinity)) best = { route, cost, i: found.i, j: found.j };
  }
  if (!best) return null;
  applyInsertion(best.route, best.route.m.taskIndex.get(id)!, best.i, best.j);
  const planned = toPlannedRoute(best.route);
  return { vehicle: planned.vehicle, steps: planned.steps, added_duration: best.cost };
}

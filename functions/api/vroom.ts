// VROOM's HTTP API (vroom-express, docs/routes.md): `POST {OPTIMIZATION_URL}/` with VROOM's JSON input, answered
// with its output. The input is built from the planner's problem (functions/_shared/planner/problem.ts): vehicles
// with their start and end indices, capacity and shift, shipments (a pickup and its delivery, each with its
// service time and time windows), and the matrix of the routing service's one table call; VROOM's ids are
// integers, so vehicles and shipments are numbered from 1 in the problem's order. Its `routes[].steps[]` and
// `unassigned` are read back into the planner's ids. Runtime-neutral (fetch only), so vitest exercises it too.
import type { Problem } from "../_shared/planner/problem.ts";
import { isTimeout, timeoutSignal } from "../_shared/timeout.ts";

export interface VroomInput {
  vehicles: {
    id: number;
    start_index: number;
    end_index?: number;
    capacity: number[];
    time_window: [number, number];
  }[];
  shipments: {
    amount: number[];
    pickup: { id: number; location_index: number; service: number; time_windows?: [number, number][] };
    delivery: { id: number; location_index: number; service: number; time_windows?: [number, number][] };
  }[];
  matrices: { car: { durations: number[][]; distances: number[][] } };
}

/** A plan as VROOM answered it, in the problem's ids: each vehicle's pickups and deliveries in order. */
export interface VroomPlan {
  routes: { vehicle: string; steps: { type: "pickup" | "delivery"; id: string; arrival: number }[] }[];
  unassigned: string[];
}

export class VroomFailed extends Error {}

const windows = (window: [number, number] | undefined) => window ? { time_windows: [window] } : {};

/** VROOM's input for a problem (jobs, the goods already on board, are not sent: VROOM plans new work only). */
export function vroomInput(problem: Problem): VroomInput {
  return {
    vehicles: problem.vehicles.map((vehicle, i) => ({
      id: i + 1,
      start_index: vehicle.start,
      ...(vehicle.end === null || vehicle.end === undefined ? {} : { end_index: vehicle.end }),
      capacity: [vehicle.capacity],
      time_window: vehicle.shift,
    })),
    shipments: problem.shipments.map((shipment, i) => ({
      amount: [shipment.amount],
      pickup: {
        id: i + 1,
        location_index: shipment.pickup.location,
        service: shipment.pickup.service,
        ...windows(shipment.pickup.window),
      },
      delivery: {
        id: i + 1,
        location_index: shipment.delivery.location,
        service: shipment.delivery.service,
        ...windows(shipment.delivery.window),
      },
    })),
    matrices: { car: { durations: problem.durations, distances: problem.distances ?? problem.durations } },
  };
}

/** VROOM's output read back into the problem's ids; VroomFailed for anything that is not a plan of this problem. */
export function planFromVroom(problem: Problem, answer: unknown): VroomPlan {
  const body = answer as {
    code?: unknown;
    error?: unknown;
    routes?: { vehicle?: unknown; steps?: { type?: unknown; id?: unknown; arrival?: unknown }[] }[];
    unassigned?: { id?: unknown; type?: unknown }[];
  } | null;
  if (body?.code !== 0) {
    throw new VroomFailed(
      typeof body?.error === "string" ? `answered code ${body?.code}: ${body.error}` : `answered code ${body?.code}`,
    );
  }
  if (!Array.isArray(body.routes)) throw new VroomFailed("answered without routes");
  const shipment = (id: unknown) => {
    const found = typeof id === "number" ? problem.shipments[id - 1] : undefined;
    if (!found) throw new VroomFailed(`answered a step of an unknown shipment: ${id}`);
    return found.id;
  };
  const routes = body.routes.map((route) => {
    const vehicle = typeof route.vehicle === "number" ? problem.vehicles[route.vehicle - 1] : undefined;
    if (!vehicle || !Array.isArray(route.steps)) throw new VroomFailed(`answered a route of an unknown vehicle`);
    const steps = route.steps.filter((step) => step.type === "pickup" || step.type === "delivery").map((step) => {
      if (typeof step.arrival !== "number") throw new VroomFailed("answered a step without its arrival");
      return { type: step.type as "pickup" | "delivery", id: shipment(step.id), arrival: step.arrival };
    });
    return { vehicle: vehicle.id, steps };
  });
  const unassigned = [
    ...new Set((body.unassigned ?? []).map((step) => shipment(step.id))),
  ];
  return { routes: routes.filter((route) => route.steps.length > 0), unassigned };
}

/** Asks VROOM within `timeoutMs` (the body included); VroomFailed saying why when it gives no plan. */
export async function askVroom(baseUrl: string, problem: Problem, timeoutMs: number): Promise<VroomPlan> {
  const timeout = timeoutSignal(timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(`${baseUrl.replace(/\/+$/, "")}/`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(vroomInput(problem)),
        signal: timeout.signal,
      });
    } catch (error) {
      throw new VroomFailed(isTimeout(error) ? "timed out" : "unreachable");
    }
    let answer: unknown;
    try {
      answer = await res.json();
    } catch (error) {
      throw new VroomFailed(isTimeout(error) ? "timed out" : `HTTP ${res.status} without a JSON body`);
    }
    if (!res.ok && (answer as { code?: unknown } | null)?.code === undefined) {
      throw new VroomFailed(`HTTP ${res.status}`);
    }
    return planFromVroom(problem, answer);
  } finally {
    timeout.clear();
  }
}

// The route planner's problem and solution, shared by the built-in planner (`./plan.ts`), the
// independent validator (`../plan-check.ts`), the VROOM client and the benchmark. Pure data: no I/O.
//
// Times are seconds from the plan's origin (the earliest shift start); travel comes from the
// matrices, indexed by location. Every delivery is a shipment: a pickup, then its drop-off on the same
// route. A `job` is a drop-off whose goods are on board from the route's start (Solomon's customers,
// or what a live route already carries).

/** A place a vehicle stops, with how long it stays and when its service may start. */
export interface Stop {
  /** Index into the matrices. */
  location: number;
  /** Seconds spent at the stop. */
  service: number;
  /** [earliest, latest] start of service; arriving early waits, arriving after `latest` is not allowed. */
  window?: [number, number];
}

export interface Shipment {
  id: string;
  /** Units carried from the pickup to the drop-off. */
  amount: number;
  pickup: Stop;
  delivery: Stop;
}

/** A drop-off whose goods are on board from the vehicle's start. */
export interface Job {
  id: string;
  amount: number;
  stop: Stop;
}

export interface Vehicle {
  id: string;
  /** Location index where the route starts. */
  start: number;
  /** Location index where the route must end, or null/undefined for an open route. */
  end?: number | null;
  /** Units the vehicle carries at most at any moment. */
  capacity: number;
  /** [start, end] of the shift: the route leaves no earlier than start, and ends (at `end`, or its last service) by end. */
  shift: [number, number];
}

export interface Problem {
  /** Travel seconds, durations[from][to]. */
  durations: number[][];
  /** Travel metres, distances[from][to]; defaults to durations when absent (Solomon's Euclidean instances). */
  distances?: number[][];
  vehicles: Vehicle[];
  shipments: Shipment[];
  jobs?: Job[];
}

export type StepType = "start" | "pickup" | "delivery" | "job" | "end";

export interface Step {
  type: StepType;
  /** The shipment's or job's id; absent for start and end. */
  id?: string;
  location: number;
  /** When the vehicle arrives. */
  arrival: number;
  /** When service starts (arrival, or the window's opening when early). */
  begin: number;
  /** Units on board after this step. */
  load: number;
}

export interface PlannedRoute {
  vehicle: string;
  steps: Step[];
  /** Travel metres and seconds of the whole route (waiting and service not included in distance). */
  distance: number;
  duration: number;
}

export type UnassignedReason = "window" | "capacity" | "shift" | "unreachable";

export interface Solution {
  routes: PlannedRoute[];
  unassigned: { id: string; reason: UnassignedReason | null }[];
  /** Sum of the routes' distance and duration. */
  distance: number;
  duration: number;
}

export interface PlanOptions {
  /** Wall-clock budget; the planner returns its best plan by then, valid whatever the budget. */
  maxMs: number;
  /** Seed of the pseudo-random choices, so that a run can be repeated. */
  seed?: number;
  /** Called now and then (at least once a second) while the search runs. */
  onProgress?: (progress: { fraction: number; unassigned: number; duration: number }) => void | Promise<void>;
  signal?: AbortSignal;
  /** Stop the search after this many ruin-and-recreate iterations (or at `maxMs`, whichever comes
   * first). With it the annealing follows the iterations, not the clock, so that a seed gives the same
   * plan on any machine. */
  iterations?: number;
  /** The clock `maxMs` is counted on, in milliseconds (default: the wall clock, `performance.now`). The
   * bench passes the process's CPU time, so that its figures are one core's seconds on a busy machine. */
  now?: () => number;
}

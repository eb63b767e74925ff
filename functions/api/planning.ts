// Route planning at the edge (docs/routes.md): the deliveries and drivers the database handed over become the
// planner's problem (functions/_shared/planner/problem.ts), with the matrix of ONE routing table call; the engine
// solves it (VROOM over HTTP when OPTIMIZATION_URL is set, and the built-in planner when it is not, fails, answers
// something that is not a valid plan, or is too slow); the independent validator (functions/_shared/plan-check.ts)
// times every plan and finds what it breaks; the result becomes the rows public.create_routes and
// public.set_route_stops write. No database access here: the route handlers call the database around it.
import { env } from "../_shared/env.ts";
import { type Matrix, osrmMatrix } from "../_shared/osrm.ts";
import { checkPlan } from "../_shared/plan-check.ts";
import { plan } from "../_shared/planner/plan.ts";
import type { Problem } from "../_shared/planner/problem.ts";
import {
  type Built,
  type Places,
  type Planned,
  type Reason,
  reasonFor,
  type RouteRow,
  seconds,
  type Steps,
  TABLE_TIMEOUT_MS,
  type Violation,
} from "./plan-problem.ts";
import { RoutingUnavailable } from "./routing.ts";
import { askVroom } from "./vroom.ts";

export * from "./plan-problem.ts";

/** The built-in planner is always left at least this much after VROOM failed or ran out of time. */
const BUILTIN_RESERVE_MS = 1_000;

/** The matrix of the plan's places from one table call; 502 when the routing service gives none. */
export async function matrixOf(places: Places): Promise<Matrix> {
  const got = await osrmMatrix(env().ROUTING_URL, places.points, TABLE_TIMEOUT_MS);
  if ("error" in got) throw new RoutingUnavailable(got.error);
  return got.matrix;
}

/**
 * Solves within `budgetMs`: VROOM first when OPTIMIZATION_URL is set (its plan checked by the validator), else, or
 * when it fails, answers an invalid plan or runs out of time, the built-in planner with what is left (at least
 * BUILTIN_RESERVE_MS).
 */
export async function solve(
  problem: Problem,
  budgetMs: number,
  onProgress?: (fraction: number) => void | Promise<void>,
): Promise<
  {
    steps: Steps;
    unassigned: { delivery_id: string; reason: Reason }[];
    engine: Planned["engine"];
    engine_error?: string;
  }
> {
  const started = Date.now();
  const url = env().OPTIMIZATION_URL;
  let engineError: string | undefined;
  if (url && problem.shipments.length > 0) {
    try {
      const answer = await askVroom(url, problem, Math.max(budgetMs - BUILTIN_RESERVE_MS, budgetMs / 2));
      const checked = checkPlan(problem, {
        routes: answer.routes.map((r) => ({
          vehicle: r.vehicle,
          steps: r.steps.map((s) => ({ type: s.type, id: s.id })),
        })),
        unassigned: answer.unassigned.map((id) => ({ id })),
      });
      if (!checked.valid) {
        const first = checked.violations[0];
        throw new Error(`answered a plan that breaks a constraint (${first?.kind}: ${first?.detail})`);
      }
      return {
        steps: answer.routes.map((r) => ({
          vehicle: r.vehicle,
          steps: r.steps.map((s) => ({ type: s.type, id: s.id })),
        })),
        unassigned: answer.unassigned.map((id) => ({ delivery_id: id, reason: reasonFor(problem, id) })),
        engine: "vroom",
      };
    } catch (error) {
      engineError = (error as Error).message;
      console.error(JSON.stringify({ event: "optimization_failed", error: engineError }));
    }
  }
  const left = Math.max(budgetMs - (Date.now() - started), BUILTIN_RESERVE_MS);
  const solution = await plan(problem, {
    maxMs: left,
    seed: 1,
    onProgress: onProgress ? (p) => onProgress(p.fraction) : undefined,
  });
  return {
    steps: solution.routes.map((r) => ({
      vehicle: r.vehicle,
      steps: r.steps.filter((s) => s.type === "pickup" || s.type === "delivery").map((s) => ({
        type: s.type as "pickup" | "delivery",
        id: s.id!,
      })),
    })).filter((r) => r.steps.length > 0),
    unassigned: solution.unassigned.map((u) => ({ delivery_id: u.id, reason: u.reason ?? reasonFor(problem, u.id) })),
    engine: "builtin",
    ...(engineError ? { engine_error: engineError } : {}),
  };
}

const iso = (origin: number, s: number) => new Date(origin + s * 1000).toISOString();

/** Per step, the value of a validator's list that may also hold the route's start (and end). */
function perStep<T>(values: T[], count: number): T[] {
  if (values.length === count) return values;
  if (values.length === count + 1 || values.length === count + 2) return values.slice(1, 1 + count);
  return values.slice(0, count);
}

/**
 * The routes of a solution, timed by the validator: each stop's arrival, the route's distance and duration, the
 * end of its last service, and what it breaks ({seq, kind, detail}, seq as the route's stops count from 1).
 */
export function routeRows(built: Built, steps: Steps): RouteRow[] {
  const checked = checkPlan(built.problem, { routes: steps });
  return steps.map((route, r) => {
    const vehicle = built.vehicles.find((v) => v.driver_id === route.vehicle)!;
    const timed = checked.routes.find((t) => t.vehicle === route.vehicle) ?? checked.routes[r];
    const arrivals = perStep(timed?.arrivals ?? [], route.steps.length);
    const begins = perStep(timed?.begins ?? arrivals, route.steps.length);
    const last = route.steps.length - 1;
    const lastService = last < 0 ? 0 : serviceOf(built.problem, route.steps[last]);
    const endsAt = last < 0 ? seconds(vehicle.shift_start - built.origin) : (begins[last] ?? 0) + lastService;
    return {
      driver_id: vehicle.driver_id,
      start: vehicle.start,
      end: vehicle.end,
      starts_at: new Date(vehicle.shift_start).toISOString(),
      ends_at: iso(built.origin, endsAt),
      shift_end: new Date(vehicle.shift_end).toISOString(),
      capacity: vehicle.capacity,
      distance_m: Math.round(timed?.distance ?? 0),
      duration_s: Math.round(timed?.duration ?? 0),
      violations: violationsOf(checked.violations.filter((v) => v.vehicle === route.vehicle), route.steps.length),
      stops: route.steps.map((step, i) => ({
        delivery_id: step.id,
        kind: step.type === "pickup" ? "pickup" : "dropoff",
        arrival_at: iso(built.origin, arrivals[i] ?? 0),
      })),
    };
  });
}

function serviceOf(problem: Problem, step: { type: string; id: string }): number {
  const shipment = problem.shipments.find((s) => s.id === step.id);
  return shipment ? (step.type === "pickup" ? shipment.pickup.service : shipment.delivery.service) : 0;
}

const KINDS = new Set(["window", "capacity", "order", "shift"]);

function violationsOf(found: { seq: number; kind: string; detail: string }[], count: number): Violation[] {
  return found.filter((v) => KINDS.has(v.kind)).map((v) => ({
    // The validator counts a route's steps from 0; a route's stops count from 1 (a violation of the route's end,
    // past its last stop, is told on its last stop).
    seq: Math.min(Math.max(v.seq + 1, 1), Math.max(count, 1)),
    kind: v.kind as Violation["kind"],
    detail: v.detail,
  }));
}

// A loopback stand-in of VROOM's HTTP API (vroom-express: `POST /` with VROOM's input, answered with its output), for
// the route plans' engine (functions/api/vroom.ts). It does not optimize: `sequential` answers every shipment on the
// first vehicle, each pickup followed by its delivery, in the order sent, with the arrivals of its matrix; `wrong`
// answers a delivery before its pickup (a plan the validator refuses); `error` answers VROOM's `code: 3`; `fail`
// (the default) an HTTP 500 without a body. `state()` gives the number of requests and the last input.
import type { Controllable } from "./fake-server.ts";

interface Input {
  vehicles: { id: number; start_index: number; time_window: [number, number] }[];
  shipments: {
    pickup: { id: number; location_index: number; service: number; time_windows?: [number, number][] };
    delivery: { id: number; location_index: number; service: number; time_windows?: [number, number][] };
  }[];
  matrices: { car: { durations: number[][] } };
}

export interface VroomFake extends Controllable {
  mode: "sequential" | "wrong" | "error" | "fail";
  requests: number;
  last: unknown;
}

function sequential(input: Input) {
  const vehicle = input.vehicles[0];
  const d = input.matrices.car.durations;
  let time = vehicle.time_window[0];
  let at = vehicle.start_index;
  const steps: { type: string; id?: number; arrival: number; location_index: number }[] = [
    { type: "start", arrival: time, location_index: at },
  ];
  for (const shipment of input.shipments) {
    for (const [type, stop] of [["pickup", shipment.pickup], ["delivery", shipment.delivery]] as const) {
      time += d[at][stop.location_index];
      at = stop.location_index;
      steps.push({ type, id: stop.id, arrival: time, location_index: at });
      time = Math.max(time, stop.time_windows?.[0]?.[0] ?? 0) + stop.service;
    }
  }
  steps.push({ type: "end", arrival: time, location_index: at });
  return {
    code: 0,
    summary: { cost: time, routes: 1, unassigned: 0 },
    unassigned: [],
    routes: [{ vehicle: vehicle.id, cost: time, steps, duration: time }],
  };
}

export function createVroomFake(): VroomFake {
  const fake: VroomFake = {
    mode: "fail",
    delayMs: 0,
    requests: 0,
    last: null,
    async fetch(req) {
      fake.requests++;
      const input = await req.json() as Input;
      fake.last = input;
      if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
      if (fake.mode === "fail") return new Response(null, { status: 500 });
      if (fake.mode === "error") return Response.json({ code: 3, error: "Invalid shipment" }, { status: 400 });
      const answer = sequential(input);
      if (fake.mode === "wrong") {
        const steps = answer.routes[0].steps;
        [steps[1], steps[2]] = [steps[2], steps[1]];
      }
      return Response.json(answer);
    },
  };
  return fake;
}

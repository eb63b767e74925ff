// Test-side control of the loopback fakes of the payment gateway, the routing
// service, the postcode service, the geocoding service, the WhatsApp Cloud API and the SMTP relay (started once by
// tests/setup/global.ts).
import { inject } from "vitest";
import type { GatewayObject } from "../../local/simulators/gateway.ts";
import type { ReceivedMail } from "../../local/simulators/smtp.ts";
import type { WhatsAppMessage } from "../../local/simulators/whatsapp.ts";

async function control<T>(
  base: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined && path === "/state" ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`fake control ${path}: ${res.status}`);
  return (await res.json()) as T;
}

export interface GatewayState {
  customers: GatewayObject[];
  payments: GatewayObject[];
  transfers: GatewayObject[];
  log: {
    method: string;
    path: string;
    accessToken: string | null;
    body: unknown;
  }[];
}

function fake<State>(which: "gateway" | "routing" | "cep" | "geocoding" | "whatsapp" | "smtp" | "optimization") {
  const base = () => inject("stack").fakes[which].controlUrl;
  return {
    /**
     * "ok" | "fail" (500) | "reject" (gateway 400) | "fail-after-create" (does the work, then 500) for the
     * gateway; "ok" | "error" for routing, the postcode and the geocoding services; "ok" | "fail" (Meta's 500) for
     * WhatsApp; "ok" | "fail" (451 to every message) | "reject" (550 to every recipient) for SMTP.
     */
    set: (mode: string, delayMs = 0) => control(base(), "/mode", { mode, delayMs }),
    slow: (delayMs: number) => control(base(), "/mode", { delayMs }),
    /** Does the work at once but holds the answer `answerDelayMs` (an answer that is late, not a slow service). */
    lateAnswer: (answerDelayMs: number) => control(base(), "/mode", { answerDelayMs }),
    /** Sends the answer's head at once and holds its body `bodyDelayMs` (a body that stalls). */
    stalledBody: (bodyDelayMs: number) => control(base(), "/mode", { bodyDelayMs }),
    down: () => control(base(), "/down", {}),
    up: () => control(base(), "/up", {}),
    reset: () => control(base(), "/reset", {}),
    state: async () => (await control<{ state: State }>(base(), "/state")).state,
  };
}

export const gateway = {
  ...fake<GatewayState>("gateway"),
  /** How refunds are answered: at once (`REFUNDED`, the default) or `REFUND_IN_PROGRESS`, until setStatus. */
  refunds: (mode: "immediate" | "in_progress") =>
    control(inject("stack").fakes.gateway.controlUrl, "/mode", {
      refunds: mode,
    }),
  /** Moves a stored payment or transfer to `status` (e.g. "DONE", "RECEIVED"), as the gateway would over time. */
  setStatus: (id: string, status: string) =>
    control(
      inject("stack").fakes.gateway.controlUrl,
      `/objects/${encodeURIComponent(id)}`,
      { status },
    ),
  /** Stores a payment or transfer the gateway made without the fake's API having been called for it. */
  put: async (
    kind: "payment" | "transfer",
    object: { id: string; status: string; [key: string]: unknown },
  ) => {
    const res = await fetch(
      `${inject("stack").fakes.gateway.controlUrl}/objects/${kind}`,
      {
        method: "PUT",
        body: JSON.stringify(object),
      },
    );
    if (!res.ok) {
      throw new Error(`fake control PUT /objects/${kind}: ${res.status}`);
    }
  },
};
/** The routing service: `state()` counts requests, and gives the number of points of each table request. */
export const routing = fake<{ requests: number; tables: number[] }>("routing");
export const cep = fake<{ requests: number }>("cep");
export const geocoding = fake<{ requests: number; queries: string[] }>(
  "geocoding",
);
/** The WhatsApp Cloud API: `state()` lists the messages it accepted, newest first. */
export const whatsapp = fake<{ messages: WhatsAppMessage[] }>("whatsapp");
/** The SMTP relay (lateAnswer and stalledBody do not apply): `state()` lists the mails it accepted, oldest first. */
export const smtp = fake<{ mails: ReceivedMail[] }>("smtp");
/** VROOM's HTTP API (tests/support/vroom-fake.ts): "fail" (the default), "sequential", "wrong", "error". */
export const optimization = fake<{ requests: number; last: unknown }>("optimization");

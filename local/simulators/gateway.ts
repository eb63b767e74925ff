// A payment gateway sandbox simulator (docs/contract.md, External services): customers, Pix charges
// and Pix transfers in memory, answering as the gateway does. Runtime-neutral
// (a fetch handler), so the local stack serves it and the test suite wraps it
// in its loopback fake, where tests make it slow or failing.
import { Hono } from "hono";
import { qrPngBase64 } from "./qr-png.ts";

// The object shape of functions/_shared/gateway.ts, restated: that module reads
// the Edge Functions' configuration, which the Node test harness cannot load.
export interface GatewayObject {
  id: string;
  status: string;
  value?: number;
  externalReference?: string | null;
  [key: string]: unknown;
}

export interface GatewaySimulator {
  fetch(req: Request): Promise<Response>;
  /**
   * "ok"; "fail" answers 500; "reject" answers 400 with a gateway error body;
   * "fail-after-create" does the work (creates the object) and then answers 500,
   * as a gateway whose answer is lost after it made the transfer.
   */
  mode: "ok" | "fail" | "reject" | "fail-after-create";
  delayMs: number;
  /**
   * How a refund is answered: "immediate" (the default) refunds at once (`REFUNDED`); "in_progress" answers
   * `REFUND_IN_PROGRESS`, left for `setStatus` (and the PAYMENT_REFUNDED event) to finish, as a Pix refund the
   * receiving bank has not yet confirmed.
   */
  refunds: "immediate" | "in_progress";
  customers: Map<string, GatewayObject>;
  payments: Map<string, GatewayObject>;
  transfers: Map<string, GatewayObject>;
  /** Every request seen: method, path, access_token header and JSON body. */
  log: {
    method: string;
    path: string;
    accessToken: string | null;
    body: unknown;
  }[];
  /** Moves a stored payment or transfer to `status`, as the gateway's own processing would; false if unknown. */
  setStatus(id: string, status: string): boolean;
  /** Stores a payment or transfer made outside the simulator's API (another system, an earlier run). */
  put(kind: "payment" | "transfer", object: GatewayObject): void;
}

const json = (body: unknown, status = 200) => Response.json(body, { status });
const gatewayError = (status: number, code: string, description: string) =>
  json({ errors: [{ code, description }] }, status);
const internalError = () => gatewayError(500, "internal_error", "Internal error");

function today(offsetDays = 0): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(
    0,
    10,
  );
}

export interface GatewaySimulatorOptions {
  /**
   * Answer pixQrCode with a real, scannable PNG of the Pix payload (the local
   * stack, so the panel shows a code a phone reads); otherwise a short
   * placeholder, which the test suite's fake asserts byte for byte.
   */
  pngQrCodes?: boolean;
}

export function createGatewaySimulator(
  options: GatewaySimulatorOptions = {},
): GatewaySimulator {
  let sequence = 0;
  const nextId = (prefix: string) =>
    `${prefix}_${(++sequence).toString().padStart(6, "0")}${crypto.randomUUID().slice(0, 8)}`;

  const sim: GatewaySimulator = {
    mode: "ok",
    delayMs: 0,
    refunds: "immediate",
    customers: new Map(),
    payments: new Map(),
    transfers: new Map(),
    log: [],
    setStatus(id: string, status: string): boolean {
      const object = sim.payments.get(id) ?? sim.transfers.get(id);
      if (!object) return false;
      object.status = status;
      return true;
    },
    put(kind, object) {
      (kind === "payment" ? sim.payments : sim.transfers).set(object.id, {
        object: kind,
        dateCreated: today(),
        ...object,
      });
    },
    async fetch(req: Request): Promise<Response> {
      const url = new URL(req.url);
      const path = url.pathname.replace(/^.*?(\/v3\/)/, "$1");
      const body = req.method === "GET" ? undefined : await req.json().catch(() => undefined);
      sim.log.push({
        method: req.method,
        path,
        accessToken: req.headers.get("access_token"),
        body,
      });
      if (sim.delayMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, sim.delayMs));
      }
      if (sim.mode === "fail") return internalError();
      if (sim.mode === "reject") {
        return gatewayError(
          400,
          "invalid_action",
          "Operation rejected by the gateway",
        );
      }
      const inner = new Request(
        new URL(`${path}${url.search}`, "http://gateway"),
        { method: req.method },
      );
      const input = typeof body === "object" && body !== null ? body as Record<string, unknown> : {};
      const answer = await api.fetch(inner, {
        body: input,
        accessToken: req.headers.get("access_token"),
      });
      return sim.mode === "fail-after-create" ? internalError() : answer;
    },
  };

  /** The gateway's API, from /v3 on; `env` carries what fetch already read of the request. */
  const api = new Hono<
    { Bindings: { body: Record<string, unknown>; accessToken: string | null } }
  >();
  api.use("*", async (c, next) => {
    if (!c.env.accessToken) {
      return gatewayError(401, "invalid_access_token", "Missing access token");
    }
    await next();
  });
  api.post("/v3/customers", (c) => {
    const input = c.env.body;
    if (!input.name || !input.cpfCnpj) {
      return gatewayError(
        400,
        "invalid_object",
        "name and cpfCnpj are required",
      );
    }
    const customer = {
      object: "customer",
      id: nextId("cus"),
      status: "ACTIVE",
      ...input,
    };
    sim.customers.set(customer.id, customer);
    return json(customer);
  });
  api.post("/v3/payments", (c) => {
    const input = c.env.body;
    if (!sim.customers.has(String(input.customer))) {
      return gatewayError(400, "invalid_customer", "Customer not found");
    }
    if (typeof input.value !== "number" || input.value <= 0) {
      return gatewayError(400, "invalid_value", "Invalid value");
    }
    const payment: GatewayObject = {
      object: "payment",
      id: nextId("pay"),
      status: "PENDING",
      dateCreated: today(),
      ...input,
      value: input.value as number,
    };
    sim.payments.set(payment.id, payment);
    return json(payment);
  });
  api.get("/v3/payments/:id/pixQrCode", async (c) => {
    const id = c.req.param("id");
    if (!sim.payments.has(id)) {
      return gatewayError(404, "not_found", "Payment not found");
    }
    const payload = `00020101021226800014br.gov.bcb.pix2558pix.example/qr/v2/${id}5204000053039865802BR6304ABCD`;
    return json({
      encodedImage: options.pngQrCodes ? await qrPngBase64(payload) : btoa(`qr:${id}`),
      payload,
      expirationDate: `${today(1)} 23:59:59`,
    });
  });
  api.post("/v3/transfers", (c) => {
    const input = c.env.body;
    if (typeof input.value !== "number" || input.value <= 0) {
      return gatewayError(400, "invalid_value", "Invalid value");
    }
    if (!input.pixAddressKey) {
      return gatewayError(400, "invalid_pix_key", "Pix key is required");
    }
    const transfer: GatewayObject = {
      object: "transfer",
      id: nextId("tra"),
      status: "PENDING",
      dateCreated: today(),
      ...input,
      value: input.value as number,
    };
    sim.transfers.set(transfer.id, transfer);
    return json(transfer);
  });
  api.delete("/v3/payments/:id", (c) => {
    const payment = sim.payments.get(c.req.param("id"));
    if (!payment) return gatewayError(404, "not_found", "Payment not found");
    if (payment.status !== "PENDING" && payment.status !== "OVERDUE") {
      return gatewayError(
        400,
        "invalid_action",
        `A payment with status ${payment.status} cannot be removed`,
      );
    }
    payment.deleted = true;
    payment.status = "DELETED";
    return json({ deleted: true, id: payment.id });
  });
  api.post("/v3/payments/:id/refund", (c) => {
    // A full refund of a received payment; `value` (a partial refund) and `description` are optional.
    const payment = sim.payments.get(c.req.param("id"));
    if (!payment) return gatewayError(404, "not_found", "Payment not found");
    if (
      !["RECEIVED", "CONFIRMED", "RECEIVED_IN_CASH"].includes(payment.status)
    ) {
      return gatewayError(
        400,
        "invalid_action",
        `A payment with status ${payment.status} cannot be refunded`,
      );
    }
    const input = c.env.body;
    const value = typeof input.value === "number" ? input.value : payment.value;
    payment.status = sim.refunds === "immediate" ? "REFUNDED" : "REFUND_IN_PROGRESS";
    payment.refunds = [
      ...(Array.isArray(payment.refunds) ? payment.refunds : []),
      {
        dateCreated: today(),
        status: payment.status === "REFUNDED" ? "DONE" : "PENDING",
        value,
        description: input.description ?? null,
      },
    ];
    return json(payment);
  });
  api.get("/v3/transfers", (c) => {
    // The list, oldest first, filtered by creation day as the gateway's list is.
    const from = c.req.query("dateCreated[ge]") ?? "";
    const offset = Math.max(0, Number(c.req.query("offset") ?? 0) || 0);
    const limit = Math.min(
      100,
      Math.max(1, Number(c.req.query("limit") ?? 10) || 10),
    );
    const all = [...sim.transfers.values()].filter((t) => String(t.dateCreated ?? "") >= from);
    const data = all.slice(offset, offset + limit);
    return json({
      object: "list",
      hasMore: offset + data.length < all.length,
      totalCount: all.length,
      limit,
      offset,
      data,
    });
  });
  api.get("/v3/:kind{payments|transfers}/:id", (c) => {
    const object = (c.req.param("kind") === "payments" ? sim.payments : sim.transfers).get(
      c.req.param("id"),
    );
    return object ? json(object) : gatewayError(404, "not_found", "Object not found");
  });
  api.notFound((c) =>
    gatewayError(
      404,
      "not_found",
      `No route ${c.req.method} ${new URL(c.req.url).pathname}`,
    )
  );

  return sim;
}

// Deliveries through the public API: a request body, creation by payment
// method, a move, and a delivery brought to a given state.
import { generateCpf } from "@brazilian-utils/brazilian-utils";
import { expect } from "vitest";
import { api, type Member, type TestCompany } from "./api.ts";

export const SE = { lat: -23.5505, lng: -46.6333 };
export const PAULISTA = { lat: -23.5614, lng: -46.6559 };

/** A valid CPF of its own (random digits, right check digits), so that no test reuses another's gateway customer. */
export const newDocument = () => generateCpf();

/** A Pix delivery request from Sé to Paulista, with every optional field set; `overrides` replace fields. */
export function deliveryBody(overrides: Record<string, unknown> = {}) {
  return {
    origin_address: "Praça da Sé, São Paulo",
    origin: SE,
    destination_address: "Av. Paulista, 1000",
    destination: PAULISTA,
    customer: { name: "Cliente Teste", document: newDocument(), email: "cliente@example.com" },
    recipient_name: "Ana",
    recipient_phone: "+55 11 99999-0000",
    notes: "Portaria",
    ...overrides,
  };
}

/** POST /api/v1/deliveries for a Pix delivery (the raw answer). */
export const createPixDelivery = (
  company: TestCompany,
  overrides: Record<string, unknown> = {},
  who: Member = company.owner,
) => api("/api/v1/deliveries", { token: who.token, body: deliveryBody(overrides) });

/** An invoice delivery, created by `who` (the owner by default); answers the created delivery. */
export async function createInvoiceDelivery(
  company: TestCompany,
  overrides: Record<string, unknown> = {},
  who: Member = company.owner,
) {
  const res = await api("/api/v1/deliveries", {
    token: who.token,
    body: deliveryBody({ payment_method: "invoice", customer: undefined, ...overrides }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** POST /api/v1/deliveries/{id}/{action} as `who`. */
export const moveDelivery = (who: Member, id: string, action: string, body?: unknown) =>
  api(`/api/v1/deliveries/${id}/${action}`, { method: "POST", token: who.token, body });

export type DeliveryState = "awaiting_payment" | "pending" | "accepted" | "in_progress" | "completed" | "cancelled";

/** A delivery of `company` brought to `state` through the API, `driver` (the company's first) carrying it. */
export async function deliveryIn(company: TestCompany, state: DeliveryState, driver: Member = company.driver) {
  if (state === "awaiting_payment") {
    const res = await createPixDelivery(company);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  }
  const { id } = await createInvoiceDelivery(company);
  const path: Record<DeliveryState, [Member, string][]> = {
    awaiting_payment: [],
    pending: [],
    accepted: [[driver, "accept"]],
    in_progress: [[driver, "accept"], [driver, "start"]],
    completed: [[driver, "accept"], [driver, "start"], [driver, "complete"]],
    cancelled: [[company.owner, "cancel"]],
  };
  for (const [who, action] of path[state]) expect((await moveDelivery(who, id, action)).status).toBe(200);
  return id as string;
}

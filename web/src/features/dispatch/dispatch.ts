// Dispatch as the screens show it (docs/dispatch.md): whether a pending delivery is the driver's to see (a live
// offer with its deadline, or one open to every driver), where a delivery stands on the dispatcher's board, each
// driver's load, and the board's filters. Pure: tests/web/web-dispatch.test.ts.
// Types from the OpenAPI document itself, not the client: this module is pure.
import type { components } from "../../api/schema";

type Delivery = components["schemas"]["Delivery"];

/**
 * How the driver app shows a pending delivery: `offer` while the driver holds a live offer of it (until
 * `offer_expires_at`, on this device's clock), `open` when every driver of the company may take it (the company
 * broadcasts, or dispatch found nobody: `unassigned`), `gone` otherwise (an offer that expired, was declined or
 * withdrawn: the server no longer lets this driver take it).
 */
export function offerView(delivery: Delivery, now: number): "offer" | "open" | "gone" {
  if (delivery.offer_expires_at) return Date.parse(delivery.offer_expires_at) > now ? "offer" : "gone";
  const status = delivery.dispatch_status;
  return status === "queued" || status === "offered" ? "gone" : "open";
}

/** Whole seconds left until `iso`, never below zero. */
export const secondsLeft = (iso: string, now: number) => Math.max(0, Math.ceil((Date.parse(iso) - now) / 1000));

/** A countdown as a clock reads it: 0:45, 1:05, 10:00. */
export function countdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Where an open delivery stands on the dispatcher's board. */
export type Lane = "unassigned" | "queued" | "offered" | "open" | "accepted" | "in_progress";
export const LANES: Lane[] = ["unassigned", "queued", "offered", "open", "accepted", "in_progress"];
/** The statuses the board shows: the deliveries out in the field or waiting for a driver. */
export const BOARD_STATUSES = ["pending", "accepted", "in_progress"] as const;

export function laneOf(delivery: Delivery): Lane | null {
  if (delivery.status === "accepted" || delivery.status === "in_progress") return delivery.status;
  if (delivery.status !== "pending") return null;
  if (delivery.dispatch_status === "unassigned") return "unassigned";
  if (delivery.dispatch_status === "queued") return "queued";
  if (delivery.dispatch_status === "offered") return "offered";
  // Pending and open to every driver: the company broadcasts (or the delivery went back to broadcast).
  return "open";
}

/** Each driver's accepted and in-progress deliveries among `deliveries`: what dispatch counts against the limit. */
export function loads(deliveries: Delivery[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const d of deliveries) {
    if (d.driver_id && (d.status === "accepted" || d.status === "in_progress")) {
      counts.set(d.driver_id, (counts.get(d.driver_id) ?? 0) + 1);
    }
  }
  return counts;
}

/** Lower case, accents gone: `José` finds `jose`, as the API's search does. */
export const folded = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** The board's filters, as its address holds them. */
export interface BoardFilters {
  status?: string;
  driver_id?: string;
  q?: string;
}

/**
 * Whether a delivery passes the board's filters: its lane, its driver, and text found in its addresses, its
 * recipient's name or phone (digits compared), its order number or the first characters of its id, accents and
 * case ignored.
 */
export function onBoard(delivery: Delivery, filters: BoardFilters): boolean {
  if (filters.status && laneOf(delivery) !== filters.status) return false;
  if (filters.driver_id && delivery.driver_id !== filters.driver_id) return false;
  const q = folded(filters.q?.trim() ?? "");
  if (!q) return true;
  const texts = [
    delivery.origin_address,
    delivery.destination_address,
    delivery.recipient_name ?? "",
    delivery.external_id ?? "",
  ];
  if (texts.some((text) => folded(text).includes(q))) return true;
  if (delivery.id.startsWith(q)) return true;
  const digits = q.replace(/\D/g, "");
  return digits.length >= 3 && /^[\d\s()+-]+$/.test(q) && (delivery.recipient_phone ?? "").includes(digits);
}

/**
 * How many minutes, begun, a delivery still open is past the end of its window at `now` (a delivery not yet due,
 * without a window or no longer open: null). The board says it on the row ("atrasada 12 min").
 */
export function minutesLate(delivery: Pick<Delivery, "status" | "window_end">, now: number): number | null {
  if (!delivery.window_end || !["pending", "accepted", "in_progress"].includes(delivery.status)) return null;
  const past = now - Date.parse(delivery.window_end);
  return past > 0 ? Math.ceil(past / 60_000) : null;
}

/** The order number a dispatcher reads on a row: the company's own (`external_id`), else the id's first characters. */
export const orderNumber = (delivery: Pick<Delivery, "id" | "external_id">) =>
  delivery.external_id?.trim() || `#${delivery.id.slice(0, 8)}`;

/** One pickup place on the board's map: every open delivery picked up there, and the most urgent lane among them. */
export interface PickupGroup {
  key: string;
  lat: number;
  lng: number;
  address: string;
  ids: string[];
  lane: Lane;
}

/**
 * The open deliveries' pickups, one per place (a shop's 20 deliveries are one pin that says 20, not 20 pins drawn on
 * top of each other): places within about a metre are one, and the pin takes the lane that needs the dispatcher most
 * (LANES' order: nobody's first).
 */
export function pickupGroups(deliveries: Delivery[]): PickupGroup[] {
  const groups = new Map<string, PickupGroup>();
  for (const d of deliveries) {
    const lane = laneOf(d);
    if (!lane) continue;
    const key = `${d.origin.lat.toFixed(5)},${d.origin.lng.toFixed(5)}`;
    const group = groups.get(key);
    if (!group) {
      groups.set(key, { key, lat: d.origin.lat, lng: d.origin.lng, address: d.origin_address, ids: [d.id], lane });
    } else {
      group.ids.push(d.id);
      if (LANES.indexOf(lane) < LANES.indexOf(group.lane)) group.lane = lane;
    }
  }
  return [...groups.values()];
}

/** Colours told apart on the map, one per live route (and the same colour for a route while the board is open). */
export const ROUTE_LINE_COLOURS = ["#7c3aed", "#0891b2", "#c2410c", "#be185d", "#4d7c0f", "#1d4ed8", "#a16207"];

/** A live route as a line: from the driver's position, if known, through the stops still to do, in their order. */
export function routeLine(
  route: { stops: { seq: number; status: string; lat: number; lng: number }[] },
  driverAt?: { lat: number; lng: number } | null,
): [number, number][] {
  const ahead = route.stops.filter((s) => s.status === "pending").sort((a, b) => a.seq - b.seq);
  const points: [number, number][] = ahead.map((s) => [s.lat, s.lng]);
  return driverAt && points.length > 0 ? [[driverAt.lat, driverAt.lng], ...points] : points;
}

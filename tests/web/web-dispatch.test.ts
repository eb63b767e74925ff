// Dispatch as the web app shows it (web/src/features/dispatch/dispatch.ts): which pending deliveries a driver sees and how (a
// live offer with its countdown, one open to everyone, or none), where a delivery stands on the dispatcher's
// board, each driver's load, and the board's filters. The browser journeys (tests/e2e/offers.spec.ts) watch the
// same on screen.
import { describe, expect, it } from "vitest";
import type { components } from "../../web/src/api/schema";
import {
  countdown,
  laneOf,
  loads,
  minutesLate,
  offerView,
  onBoard,
  orderNumber,
  pickupGroups,
  routeLine,
  secondsLeft,
} from "../../web/src/features/dispatch/dispatch.ts";

type Delivery = components["schemas"]["Delivery"];

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const inSeconds = (s: number) => new Date(NOW + s * 1000).toISOString();
const delivery = (extra: Partial<Delivery> = {}) =>
  ({
    id: "3f0c9a52-0000-4000-8000-000000000001",
    status: "pending",
    driver_id: null,
    dispatch_status: null,
    offer_expires_at: null,
    origin_address: "Praça da Sé, 1 - Sé, São Paulo",
    destination_address: "Rua José Bonifácio, 12 - Centro",
    recipient_name: "Conceição Araújo",
    recipient_phone: "+5511988887777",
    external_id: "PED-4471",
    ...extra,
  }) as unknown as Delivery;

describe("offerView", () => {
  it("is a live offer until its deadline, and gone from that moment", () => {
    const offered = delivery({ dispatch_status: "offered", offer_expires_at: inSeconds(30) });
    expect(offerView(offered, NOW)).toBe("offer");
    expect(offerView(offered, NOW + 29_999)).toBe("offer");
    expect(offerView(offered, NOW + 30_000)).toBe("gone");
  });

  it("is open to the driver when every driver may take it: broadcast, or nobody left for dispatch", () => {
    expect(offerView(delivery(), NOW)).toBe("open");
    expect(offerView(delivery({ dispatch_status: "unassigned" }), NOW)).toBe("open");
  });

  it("is gone when dispatch holds it and the driver holds no live offer (declined, or offered to others)", () => {
    expect(offerView(delivery({ dispatch_status: "offered" }), NOW)).toBe("gone");
    expect(offerView(delivery({ dispatch_status: "queued" }), NOW)).toBe("gone");
  });
});

describe("the countdown", () => {
  it("counts whole seconds up, never below zero, and reads as a clock", () => {
    expect(secondsLeft(inSeconds(44.2), NOW)).toBe(45);
    expect(secondsLeft(inSeconds(-3), NOW)).toBe(0);
    expect(countdown(45)).toBe("0:45");
    expect(countdown(65)).toBe("1:05");
    expect(countdown(600)).toBe("10:00");
    expect(countdown(0)).toBe("0:00");
  });
});

describe("the board", () => {
  it("puts each open delivery in its lane, and leaves finished ones off", () => {
    expect(laneOf(delivery({ dispatch_status: "unassigned" }))).toBe("unassigned");
    expect(laneOf(delivery({ dispatch_status: "queued" }))).toBe("queued");
    expect(laneOf(delivery({ dispatch_status: "offered" }))).toBe("offered");
    expect(laneOf(delivery())).toBe("open");
    expect(laneOf(delivery({ status: "accepted", dispatch_status: "assigned", driver_id: "d1" }))).toBe("accepted");
    expect(laneOf(delivery({ status: "in_progress", driver_id: "d1" }))).toBe("in_progress");
    expect(laneOf(delivery({ status: "completed", driver_id: "d1" }))).toBeNull();
    expect(laneOf(delivery({ status: "awaiting_payment" }))).toBeNull();
  });

  it("counts each driver's accepted and in-progress deliveries as its load", () => {
    const counted = loads([
      delivery({ status: "accepted", driver_id: "dora" }),
      delivery({ status: "in_progress", driver_id: "dora" }),
      delivery({ status: "accepted", driver_id: "dino" }),
      delivery({ status: "completed", driver_id: "dino" }),
      delivery(),
    ]);
    expect(Object.fromEntries(counted)).toEqual({ dora: 2, dino: 1 });
  });

  it("filters by lane, driver and text, accents and case ignored, phones by their digits", () => {
    const d = delivery({ status: "accepted", driver_id: "dora" });
    expect(onBoard(d, {})).toBe(true);
    expect(onBoard(d, { status: "accepted" })).toBe(true);
    expect(onBoard(d, { status: "offered" })).toBe(false);
    expect(onBoard(d, { driver_id: "dora" })).toBe(true);
    expect(onBoard(d, { driver_id: "dino" })).toBe(false);
    expect(onBoard(d, { q: "jose bonifacio" })).toBe(true);
    expect(onBoard(d, { q: "CONCEICAO" })).toBe(true);
    expect(onBoard(d, { q: "sé" })).toBe(true);
    expect(onBoard(d, { q: "ped-4471" })).toBe(true);
    expect(onBoard(d, { q: "3f0c9a52" })).toBe(true);
    expect(onBoard(d, { q: "(11) 98888-7777" })).toBe(true);
    expect(onBoard(d, { q: "98888" })).toBe(true);
    expect(onBoard(d, { q: "paulista" })).toBe(false);
    expect(onBoard(d, { q: "  " })).toBe(true);
  });
});

describe("the board's rows and map", () => {
  it("says how late an open delivery is, in minutes begun, and nothing before its window ends or once it is done", () => {
    const due = delivery({ window_end: inSeconds(0) });
    expect(minutesLate(due, NOW)).toBeNull();
    expect(minutesLate(due, NOW + 1)).toBe(1);
    expect(minutesLate(due, NOW + 60_000)).toBe(1);
    expect(minutesLate(due, NOW + 12 * 60_000 + 1)).toBe(13);
    expect(minutesLate(delivery({ status: "in_progress", window_end: inSeconds(-90) }), NOW)).toBe(2);
    expect(minutesLate(delivery({ status: "completed", window_end: inSeconds(-90) }), NOW)).toBeNull();
    expect(minutesLate(delivery(), NOW)).toBeNull();
  });

  it("names a delivery by the company's order number, else by its id's first characters", () => {
    expect(orderNumber(delivery())).toBe("PED-4471");
    expect(orderNumber(delivery({ external_id: null }))).toBe("#3f0c9a52");
    expect(orderNumber(delivery({ external_id: "  " }))).toBe("#3f0c9a52");
  });

  it("draws a shop's deliveries as one pickup pin with their count, in the lane that needs the dispatcher most", () => {
    const shop = { lat: -23.5503, lng: -46.6339 };
    const other = { lat: -23.6203, lng: -46.6339 };
    const groups = pickupGroups([
      delivery({ id: "a", origin: shop, status: "accepted", driver_id: "d1" }),
      delivery({ id: "b", origin: { lat: shop.lat + 0.000001, lng: shop.lng }, dispatch_status: "unassigned" }),
      delivery({ id: "c", origin: shop }),
      delivery({ id: "d", origin: other, origin_address: "Loja 2" }),
      delivery({ id: "e", origin: other, status: "completed" }),
    ]);
    expect(groups.map((g) => [g.ids, g.lane])).toEqual([[["a", "b", "c"], "unassigned"], [["d"], "open"]]);
    expect(groups[1]).toMatchObject({ lat: other.lat, lng: other.lng, address: "Loja 2" });
  });

  it("draws a live route from the driver through the stops still to do, in their order", () => {
    const stops = [
      { seq: 2, status: "pending", lat: 2, lng: 2 },
      { seq: 1, status: "done", lat: 1, lng: 1 },
      { seq: 3, status: "pending", lat: 3, lng: 3 },
    ];
    expect(routeLine({ stops }, { lat: 0, lng: 0 })).toEqual([[0, 0], [2, 2], [3, 3]]);
    expect(routeLine({ stops })).toEqual([[2, 2], [3, 3]]);
    expect(routeLine({ stops: stops.map((s) => ({ ...s, status: "done" })) }, { lat: 0, lng: 0 })).toEqual([]);
  });
});

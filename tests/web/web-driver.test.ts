// The driver app's pure rules: the driver's pay (web/src/features/money/pay.ts), rounded as the server credits it, and how a
// changed delivery updates every cached list (web/src/features/deliveries/api/cache.ts), which the browser journeys
// (tests/e2e/shift.spec.ts) watch on screen.
import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { describe, expect, it, vi } from "vitest";
import type { components } from "../../web/src/api/schema";
import { applyDelivery, dropUnavailable, fits, newestById } from "../../web/src/features/deliveries/api/cache.ts";
import { driverPay } from "../../web/src/features/money/pay.ts";

type Delivery = components["schemas"]["Delivery"];
type Page<T> = { items: T[]; next_cursor: string | null };

describe("driverPay", () => {
  it("is price × share rounded to cents, half away from zero, as numeric round does", () => {
    expect(driverPay(9.99, 0.8)).toBe(7.99);
    expect(driverPay(12.35, 0.8)).toBe(9.88);
    // 10.13 × 0.5 = 5.065: a float product is 5.0649999…; in cents it rounds up, as the server does.
    expect(driverPay(10.13, 0.5)).toBe(5.07);
    expect(driverPay(1.01, 0.0001)).toBe(0);
    expect(driverPay(100, 1)).toBe(100);
    expect(driverPay(8, 0)).toBe(0);
  });
});

const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 12, minute)).toISOString();
const delivery = (id: string, status: string, extra: Partial<Delivery> = {}) =>
  ({ id, status, payment_status: "invoiced", driver_id: null, updated_at: at(0), ...extra }) as unknown as Delivery;
const page = (...items: Delivery[]): Page<Delivery> => ({ items, next_cursor: null });
const ME = "driver-me";

function cache() {
  const client = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity } } });
  const keys = {
    offers: ["deliveries", { status: "pending" }],
    accepted: ["deliveries", { driver_id: ME, status: "accepted" }],
    panel: ["deliveries", { status: undefined, payment_status: undefined, cursor: undefined }],
  };
  return { client, keys };
}

describe("applyDelivery", () => {
  it("moves an offer assigned to this driver out of the offers and marks the driver's list to fetch again", () => {
    const { client, keys } = cache();
    client.setQueryData(keys.offers, page(delivery("a", "pending")));
    client.setQueryData(keys.accepted, page());
    applyDelivery(client, delivery("a", "accepted", { driver_id: ME, updated_at: at(1) }));
    expect(client.getQueryData<Page<Delivery>>(keys.offers)!.items).toEqual([]);
    expect(client.getQueryState(keys.accepted)!.isInvalidated).toBe(true);
  });

  it("removes an offer taken by another driver or cancelled, and keeps it in an unfiltered list", () => {
    const { client, keys } = cache();
    client.setQueryData(keys.offers, page(delivery("a", "pending"), delivery("b", "pending")));
    client.setQueryData(keys.panel, page(delivery("a", "pending")));
    applyDelivery(client, delivery("a", "accepted", { driver_id: "someone-else", updated_at: at(1) }));
    applyDelivery(client, delivery("b", "cancelled", { updated_at: at(1) }));
    expect(client.getQueryData<Page<Delivery>>(keys.offers)!.items).toEqual([]);
    expect(client.getQueryData<Page<Delivery>>(keys.panel)!.items.map((d) => d.status)).toEqual(["accepted"]);
    expect(client.getQueryState(keys.accepted)).toBeUndefined();
  });

  it("drops a delivery no longer open to this driver from the offers, even while it stays pending for others", () => {
    const { client, keys } = cache();
    client.setQueryData(keys.offers, page(delivery("a", "pending"), delivery("b", "pending")));
    // An offer withdrawn or expired: still pending, now offered to somebody else.
    dropUnavailable(client, delivery("a", "pending", { dispatch_status: "offered", offer_expires_at: null }));
    expect(client.getQueryData<Page<Delivery>>(keys.offers)!.items.map((d) => d.id)).toEqual(["b"]);
    expect(client.getQueryData<Delivery>(["delivery", "a"])!.offer_expires_at).toBeNull();
  });

  it("never lets an older version replace a newer one", () => {
    const { client, keys } = cache();
    client.setQueryData(keys.accepted, page(delivery("a", "in_progress", { driver_id: ME, updated_at: at(2) })));
    applyDelivery(client, delivery("a", "accepted", { driver_id: ME, updated_at: at(1) }));
    expect(client.getQueryData<Page<Delivery>>(keys.accepted)!.items[0].status).toBe("in_progress");
  });

  it("reads again a list whose read started before the change, so its answer cannot put the older version back", async () => {
    const { client } = cache();
    const key = ["deliveries", { driver_id: ME, status: "in_progress" }];
    // The server's list, read when a request starts; each answer is held until the test lets it go.
    let server = page(delivery("a", "in_progress", { driver_id: ME }));
    const held: Array<() => void> = [];
    const observer = new QueryObserver(client, {
      queryKey: key,
      queryFn: () => {
        const snapshot = server;
        return new Promise<Page<Delivery>>((resolve) => held.push(() => resolve(snapshot)));
      },
    });
    const items = () => client.getQueryData<Page<Delivery>>(key)?.items.map((d) => `${d.id} ${d.status}`);
    const unsubscribe = observer.subscribe(() => {});
    for (const first of [true, false]) {
      // A read under way (the first one, or one a reconnect started), then the completion goes through and its
      // answer is applied before the read answers with what it found: the delivery still in progress.
      if (!first) void client.invalidateQueries({ queryKey: key });
      await vi.waitFor(() => expect(held).toHaveLength(first ? 1 : 3));
      server = page();
      applyDelivery(client, delivery("a", "completed", { driver_id: ME, updated_at: at(1) }));
      held[held.length - 1]();
      // The list is read again, and that read finds it gone.
      await vi.waitFor(() => expect(held).toHaveLength(first ? 2 : 4));
      held[held.length - 1]();
      await vi.waitFor(() => expect(client.getQueryState(key)?.fetchStatus).toBe("idle"));
      expect(items()).toEqual([]);
      server = page(delivery("a", "in_progress", { driver_id: ME }));
    }
    unsubscribe();
  });

  it("fits a list by every filter it was asked with", () => {
    const d = delivery("a", "accepted", { driver_id: ME });
    expect(fits(d, { status: "accepted", driver_id: ME })).toBe(true);
    expect(fits(d, { status: "accepted", driver_id: "other" })).toBe(false);
    expect(fits(d, { payment_status: "received" })).toBe(false);
    expect(fits(d, undefined)).toBe(true);
  });
});

describe("newestById", () => {
  it("keeps each delivery once, in its newest version, whichever list read it last", () => {
    const before = delivery("a", "accepted", { updated_at: at(1) });
    const after = delivery("a", "in_progress", { updated_at: at(2) });
    const other = delivery("b", "accepted", { updated_at: at(0) });
    // The accepted list kept from before the start, the in-progress list read after it: either order.
    expect([...newestById([before, other], [after]).values()]).toEqual([after, other]);
    expect(newestById([after], [before, other]).get("a")).toBe(after);
    expect(newestById(undefined, [other], undefined).get("b")).toBe(other);
  });

  it("gives a tie to the later list (a delivery only moves on: accepted, in progress, returning)", () => {
    const accepted = delivery("a", "accepted", { updated_at: at(3) });
    const started = delivery("a", "in_progress", { updated_at: at(3) });
    expect(newestById([accepted], [started]).get("a")).toBe(started);
  });
});

// One home for "a delivery changed": a Realtime event (delivery_updated, delivery_available, delivery_offered,
// delivery_unavailable), the answer to an
// action, or a queued action sent from another tab all go through `applyDelivery`, which brings every cached list
// and page of deliveries up to date: the delivery replaces its older version where it still belongs, leaves the
// lists whose filter it no longer fits (an offer another driver took, a delivery cancelled), and the lists it now
// fits but is not in are fetched again (a delivery assigned to this driver appears). A list or page being read when
// the change arrives is read again: the read may have started before the change and would put the older version
// back when it answers (a reconnect reads everything again while a queued completion goes through).
import type { QueryClient, QueryKey } from "@tanstack/react-query";
// Types from the OpenAPI document itself, not the client: this module is pure (tests/web/web-driver.test.ts).
import type { components } from "../../../api/schema";
import { deliveryKeys, type DeliveryListFilter } from "./keys.ts";
import { walletKeys } from "../../money/api/keys.ts";

type Delivery = components["schemas"]["Delivery"];
type Page<T> = { items: T[]; next_cursor: string | null };

type Versioned = { id: string; updated_at: string };

/** A broadcast may arrive after the answer to a later move: an older version never replaces a newer one. */
export const newest = <T extends Versioned>(cached: T | undefined, item: T): T =>
  cached && new Date(cached.updated_at) > new Date(item.updated_at) ? cached : item;

/** The items of several lists by id, each in its newest version (on a tie, the one in the later list). */
export function newestById<T extends Versioned>(...lists: (T[] | undefined)[]): Map<string, T> {
  const byId = new Map<string, T>();
  for (const item of lists.flatMap((list) => list ?? [])) byId.set(item.id, newest(byId.get(item.id), item));
  return byId;
}

/** The filters a list of deliveries is asked with (its query key's second part). */
export type DeliveryFilter = Pick<DeliveryListFilter, "status" | "payment_status" | "driver_id">;

export function fits(delivery: Delivery, filter: unknown): boolean {
  const { status, payment_status, driver_id } = (filter ?? {}) as DeliveryFilter;
  return (!status || status === delivery.status) && (!payment_status || payment_status === delivery.payment_status) &&
    (!driver_id || driver_id === delivery.driver_id);
}

export function applyDelivery(client: QueryClient, delivery: Delivery) {
  const stale: QueryKey[] = [];
  const reading: QueryKey[] = [];
  const one = client.getQueryCache().find({ queryKey: deliveryKeys.one(delivery.id), exact: true });
  client.setQueryData<Delivery>(deliveryKeys.one(delivery.id), (cached) => newest(cached, delivery));
  if (one?.state.fetchStatus === "fetching") reading.push(one.queryKey);
  for (const query of client.getQueryCache().findAll({ queryKey: deliveryKeys.lists() })) {
    const page = query.state.data as Page<Delivery> | undefined;
    const filter = query.queryKey[1];
    const index = page?.items?.findIndex((d) => d.id === delivery.id) ?? -1;
    if (query.state.fetchStatus === "fetching") reading.push(query.queryKey);
    else if (index < 0 && fits(delivery, filter)) stale.push(query.queryKey);
    if (!page?.items || index < 0) continue;
    const kept = newest(page.items[index], delivery);
    if (kept !== delivery) continue;
    const items = fits(delivery, filter)
      ? page.items.map((d, i) => (i === index ? delivery : d))
      : page.items.filter((_, i) => i !== index);
    client.setQueryData<Page<Delivery>>(query.queryKey, { ...page, items });
  }
  for (const queryKey of stale) void client.invalidateQueries({ queryKey, exact: true });
  // A read under way is dropped (a first read too, which invalidating alone would wait for) and made again.
  for (const queryKey of reading) {
    void client.cancelQueries({ queryKey, exact: true }).then(() =>
      client.invalidateQueries({ queryKey, exact: true })
    );
  }
  if (delivery.status === "completed" || delivery.status === "cancelled") {
    void client.invalidateQueries({ queryKey: walletKeys.all() });
  }
}

/**
 * `delivery_unavailable`: a delivery this driver could take no longer is open to it (another driver took it, the
 * company assigned or cancelled it, or the driver's offer ended). It leaves every list of open deliveries at once,
 * whatever its status now (an offer withdrawn from this driver is still pending for others).
 */
export function dropUnavailable(client: QueryClient, delivery: Delivery) {
  applyDelivery(client, delivery);
  for (const query of client.getQueryCache().findAll({ queryKey: deliveryKeys.lists() })) {
    const page = query.state.data as Page<Delivery> | undefined;
    if ((query.queryKey[1] as DeliveryFilter | undefined)?.status !== "pending" || !page?.items) continue;
    if (!page.items.some((d) => d.id === delivery.id)) continue;
    client.setQueryData<Page<Delivery>>(query.queryKey, {
      ...page,
      items: page.items.filter((d) => d.id !== delivery.id),
    });
  }
}

// Every read about drivers, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call, type Driver, type Page } from "../../../api/client.ts";
import { driverKeys } from "./keys.ts";

/** The most pages of 100 drivers the dispatch board reads. */
const MAX_PAGES = 10;

/** A page of the company's drivers. */
export const driversPageQuery = (cursor: string | undefined) =>
  queryOptions({
    queryKey: driverKeys.page(cursor),
    queryFn: () => call(api.GET("/api/v1/drivers", { params: { query: { cursor, limit: 20 } } })),
  });

/** The company's first 100 drivers: how lists name a driver and forms offer one. */
export const driverNamesQuery = () =>
  queryOptions({
    queryKey: driverKeys.names(),
    queryFn: () => call(api.GET("/api/v1/drivers", { params: { query: { limit: 100 } } })),
  });

/** Every driver of the company (a company with more than one page of drivers has them all on the board). */
export const everyDriverQuery = () =>
  queryOptions({
    queryKey: driverKeys.every(),
    queryFn: async (): Promise<Page<Driver>> => {
      const items: Driver[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const answer = await call(api.GET("/api/v1/drivers", { params: { query: { limit: 100, cursor } } }));
        items.push(...answer.items);
        if (!answer.next_cursor) break;
        cursor = answer.next_cursor;
      }
      return { items, next_cursor: null };
    },
  });

/** One driver. */
export const driverQuery = (id: string) =>
  queryOptions({
    queryKey: driverKeys.one(id),
    queryFn: () => call(api.GET("/api/v1/drivers/{id}", { params: { path: { id } } })),
  });

/** A driver's day: deliveries, distance, money. */
export const driverDayQuery = (id: string, date: string) =>
  queryOptions({
    queryKey: driverKeys.day(id, date),
    queryFn: () => call(api.GET("/api/v1/drivers/{id}/day", { params: { path: { id }, query: { date } } })),
  });

/** The company's drivers' latest positions (one query, shared by the pages that show them). */
export const driverLocationsQuery = () =>
  queryOptions({ queryKey: driverKeys.locations(), queryFn: () => call(api.GET("/api/v1/drivers/locations")) });

// Every read about routes, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { routeKeys } from "./keys.ts";

/** A day's routes (the Routes page). */
export const dayRoutesQuery = (date: string) =>
  queryOptions({
    queryKey: routeKeys.day(date),
    queryFn: () => call(api.GET("/api/v1/routes", { params: { query: { date, limit: 100 } } })),
  });

/** The driver's latest routes (the driver's phone). */
export const driverRoutesQuery = (driverId: string | undefined) =>
  queryOptions({
    queryKey: routeKeys.driver(driverId),
    queryFn: () => call(api.GET("/api/v1/routes", { params: { query: { driver_id: driverId, limit: 10 } } })),
  });

/** The routes out on the streets now: published and in progress. */
export const liveRoutesQuery = () =>
  queryOptions({
    queryKey: routeKeys.live(),
    queryFn: async () => {
      const pages = await Promise.all(
        (["published", "in_progress"] as const).map((status) =>
          call(api.GET("/api/v1/routes", { params: { query: { status, limit: 100 } } }))
        ),
      );
      return pages.flatMap((p) => p.items);
    },
  });

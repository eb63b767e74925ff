// Every read of the tracking page, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { trackingKeys } from "./keys.ts";

/** A point of the driver's path as the page saw it. */
export type PathPoint = { lat: number; lng: number; at: string };

/** What the recipient's link shows (GET /track/{token}). */
export const trackingQuery = (token: string) =>
  queryOptions({
    queryKey: trackingKeys.view(token),
    queryFn: () => call(api.GET("/api/v1/track/{token}", { params: { path: { token } } })),
  });

/** The path the page has seen the driver take: nothing to read, only what the page adds. */
export const seenPathQuery = (token: string) =>
  queryOptions<PathPoint[]>({
    queryKey: trackingKeys.path(token),
    queryFn: () => [],
    staleTime: Infinity,
    gcTime: Infinity,
  });

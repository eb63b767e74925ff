// Every read about dispatch, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call, type Delivery, type Page } from "../../../api/client.ts";
import type { BOARD_STATUSES } from "../dispatch.ts";
import { dispatchKeys } from "./keys.ts";

/** The most deliveries of one status the board reads (10 pages of 100). */
const MAX_PAGES = 10;

/** The company's dispatch rules. */
export const dispatchSettingsQuery = () =>
  queryOptions({ queryKey: dispatchKeys.settings(), queryFn: () => call(api.GET("/api/v1/dispatch/settings")) });

/** Every decision dispatch took for a delivery. */
export const dispatchRecordQuery = (deliveryId: string) =>
  queryOptions({
    queryKey: dispatchKeys.record(deliveryId),
    queryFn: () => call(api.GET("/api/v1/deliveries/{id}/dispatch", { params: { path: { id: deliveryId } } })),
  });

/** Every delivery of one status, page after page: the board shows them all, not the newest 20. */
export const boardDeliveriesQuery = (status: (typeof BOARD_STATUSES)[number]) =>
  queryOptions({
    queryKey: dispatchKeys.board(status),
    queryFn: async (): Promise<Page<Delivery>> => {
      const items: Delivery[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const answer = await call(api.GET("/api/v1/deliveries", { params: { query: { status, limit: 100, cursor } } }));
        items.push(...answer.items);
        if (!answer.next_cursor) break;
        cursor = answer.next_cursor;
      }
      return { items, next_cursor: null };
    },
  });

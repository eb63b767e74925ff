// Every read about money, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { moneyKeys, walletKeys, withdrawalKeys } from "./keys.ts";

/** The signed-in driver's wallet. */
export const walletQuery = () =>
  queryOptions({ queryKey: walletKeys.me(), queryFn: () => call(api.GET("/api/v1/wallets/me")) });

/** A page of the driver's wallet entries. */
export const walletEntriesQuery = (cursor: string | undefined) =>
  queryOptions({
    queryKey: walletKeys.entries(cursor),
    queryFn: () => call(api.GET("/api/v1/wallets/me/transactions", { params: { query: { cursor, limit: 20 } } })),
  });

/** A page of the company's withdrawals (GET /withdrawals), `limit` at most. */
export const withdrawalsQuery = (cursor: string | undefined, limit: number) =>
  queryOptions({
    queryKey: withdrawalKeys.page(cursor),
    queryFn: () => call(api.GET("/api/v1/withdrawals", { params: { query: { cursor, limit } } })),
  });

/** The driver's own latest withdrawals. */
export const myWithdrawalsQuery = () =>
  queryOptions({
    queryKey: withdrawalKeys.mine(),
    queryFn: () => call(api.GET("/api/v1/withdrawals", { params: { query: { limit: 20 } } })),
  });

/** The company's prices and the driver's share. */
export const pricesQuery = () =>
  queryOptions({ queryKey: moneyKeys.prices(), queryFn: () => call(api.GET("/api/v1/prices")) });

/** The company's plan. */
export const billingQuery = () =>
  queryOptions({ queryKey: moneyKeys.billing(), queryFn: () => call(api.GET("/api/v1/billing/subscription")) });

/** The cash collected at the door on a day, by driver. */
export const cashDayQuery = (date: string) =>
  queryOptions({
    queryKey: moneyKeys.cashDay(date),
    queryFn: () => call(api.GET("/api/v1/cash/summary", { params: { query: { date } } })),
  });

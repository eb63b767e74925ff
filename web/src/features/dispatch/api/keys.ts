// The query keys of dispatch: the company's rules and a delivery's dispatch record. The board's lists of deliveries
// are lists of deliveries like any other (`deliveryKeys.list`), so that `applyDelivery` keeps them current.
import { deliveryKeys } from "../../deliveries/api/keys.ts";

export const dispatchKeys = {
  settings: () => ["dispatch-settings"] as const,
  record: (deliveryId: string) => ["delivery-dispatch", deliveryId] as const,
  /** The board's list of every delivery of one status. */
  board: (status: string) => deliveryKeys.list({ status, board: true }),
};

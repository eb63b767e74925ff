// What a driver's phone keeps on the device (lib/persist.ts), named by the features' key factories: the driver's
// deliveries and offers, prices, proof requirements, the wallet and withdrawals, the routes.
import { deliveryKeys } from "../../deliveries/api/keys.ts";
import { moneyKeys, walletKeys, withdrawalKeys } from "../../money/api/keys.ts";
import { routeKeys } from "../../routes/api/keys.ts";

const KEPT = new Set<unknown>(
  [
    deliveryKeys.lists(),
    deliveryKeys.ones(),
    moneyKeys.prices(),
    deliveryKeys.proofRequirements(),
    walletKeys.all(),
    withdrawalKeys.lists(),
    routeKeys.lists(),
  ].map((key) => key[0]),
);

/** Whether a query of this key is kept on the device for a driver's next start offline. */
export const keptOnDevice = (key: readonly unknown[]) => KEPT.has(key[0]);

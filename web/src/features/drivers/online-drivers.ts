// Who is online, for the company panel: a driver whose latest position the service accepted less than 2 minutes
// ago, the rule dispatch goes by too. Read from GET /api/v1/drivers/locations and kept current by the driver_location
// broadcasts (lib/realtime.tsx), never from what a client announces: Realtime presence carries whatever its sender
// writes, and a driver tracking another driver's id made that driver look online.
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useClock } from "../../lib/clock.ts";
import { driverLocationsQuery } from "./api/queries.ts";

/** How recent a driver's latest accepted position must be for the driver to count as online. */
export const ONLINE_WINDOW_MS = 2 * 60_000;
/** How often the panel looks again, so that a driver who stopped sending goes offline by itself. */
const RECHECK_MS = 10_000;

/** The company's drivers' latest positions (one query, shared by the pages that show them). */
export const useDriverLocations = () => useQuery(driverLocationsQuery());

/** The ids of the drivers online now. */
export function useOnlineDrivers(): Set<string> {
  const locations = useDriverLocations();
  const now = useClock(RECHECK_MS);
  return useMemo(
    () =>
      new Set(
        (locations.data?.items ?? [])
          .filter((item) => item.updated_at && now - Date.parse(item.updated_at) < ONLINE_WINDOW_MS)
          .map((item) => item.driver_id),
      ),
    [locations.data, now],
  );
}

// Driver positions: sending one, and moving the 10-second limit's clock.
import { api, db, type DriverMember } from "./api.ts";

/** PUT /api/v1/locations/me as `driver`. */
export const putLocation = (driver: { token: string }, body: unknown) =>
  api("/api/v1/locations/me", { method: "PUT", token: driver.token, body });

/** The test clock, in the database's time: the driver's last accepted update was `seconds` ago. */
export async function lastAcceptedAgo(driver: DriverMember, seconds = 10) {
  await db()`update public.driver_locations set updated_at = now() - make_interval(secs => ${seconds})
             where driver_id = ${driver.driverId}`;
}

// The company's drivers.
import { z } from "zod";
import { withNewAuthUser } from "../auth-admin.ts";
import { asService, rpc } from "../../_shared/db.ts";
import { defineRoute } from "../../_shared/route.ts";
import { Email, IdParams, Name, pageOf, PageQuery, Password, Phone, Timestamp } from "../schemas.ts";

const VehicleType = z.enum(["bike", "moto", "car", "van"]);
const VEHICLE =
  "`capacity` is in units (a delivery's `size`, 1 by default); when not set, the type's: bike 4, moto 6, " +
  "car 20, van 100. A driver without a vehicle of its own drives a car.";
const Vehicle = z.object({
  type: VehicleType,
  plate: z.string().nullable(),
  capacity: z.number().int(),
}).describe(`The driver's vehicle (routes). ${VEHICLE}`).meta({ id: "Vehicle" });
const VehicleChange = z.object({
  type: VehicleType.optional(),
  plate: z.string().trim().min(1).max(20).regex(/^[A-Za-z0-9 -]+$/, "letters, digits, spaces and dashes").optional(),
  capacity: z.number().int().min(1).max(10_000).optional(),
}).strict().describe(`A field left out keeps its value. ${VEHICLE}`);

export const Driver = z.object({
  id: z.uuid(),
  user_id: z.uuid(),
  name: z.string(),
  email: z.string(),
  phone: z.string().nullable(),
  active: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  vehicle: Vehicle,
}).meta({ id: "Driver" });

export const createDriver = defineRoute({
  method: "post",
  path: "/api/v1/drivers",
  tag: "drivers",
  summary: "Create a driver with its login",
  description: "The driver signs in with this e-mail and password. All or nothing: if the driver cannot be " +
    "created, the login is removed again.",
  auth: "bearer",
  roles: "company_managers",
  body: z.object({
    name: Name,
    email: Email,
    password: Password,
    phone: Phone.nullish(),
    vehicle: VehicleChange.optional(),
  }),
  responses: {
    201: { description: "Created", schema: Driver },
    409: { description: "The e-mail address is taken" },
  },
  async handler({ body, authorize, asCaller }) {
    // Refuse a caller without the right before any login is created.
    const companyId = await authorize();
    let driver = await withNewAuthUser(
      { email: body.email, password: body.password, user_metadata: { name: body.name } },
      (userId) =>
        asService((tx) =>
          rpc(tx, "create_driver", {
            company_id: companyId,
            user_id: userId,
            name: body.name,
            email: body.email,
            phone: body.phone,
          })
        ),
    );
    if (body.vehicle) {
      const { id } = driver as unknown as { id: string };
      driver = await asCaller((tx) => rpc(tx, "set_driver_vehicle", vehicleArgs(id, body.vehicle!)));
    }
    return { status: 201, body: driver };
  },
});

export const listDrivers = defineRoute({
  method: "get",
  path: "/api/v1/drivers",
  tag: "drivers",
  summary: "List the company's drivers, newest first",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "drivers:read",
  query: PageQuery,
  responses: { 200: { description: "One page", schema: pageOf(Driver) } },
  handler: async ({ query, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "list_drivers", { page_limit: query.limit, cursor: query.cursor })),
  }),
});

export const getDriver = defineRoute({
  method: "get",
  path: "/api/v1/drivers/{id}",
  tag: "drivers",
  summary: "One driver",
  auth: "bearer",
  roles: "delivery_managers",
  scope: "drivers:read",
  params: IdParams,
  responses: { 200: { description: "The driver", schema: Driver } },
  handler: async ({ params, asCaller }) => ({
    body: await asCaller((tx) => rpc(tx, "get_driver", { driver_id: params.id })),
  }),
});

export const updateDriver = defineRoute({
  method: "patch",
  path: "/api/v1/drivers/{id}",
  tag: "drivers",
  summary: "Update or deactivate a driver",
  description: "`active: false` deactivates the driver: from then on every driver endpoint answers it 403, " +
    "until it is reactivated with `active: true`. Deactivating an active driver also broadcasts " +
    "`driver_deactivated` (`{id, active: false, updated_at}`) on the driver's private Realtime topic " +
    "`driver:{driver_id}`, so that an app it has open learns it at once.",
  auth: "bearer",
  roles: "company_managers",
  params: IdParams,
  body: z.object({
    name: Name.optional(),
    phone: Phone.optional(),
    active: z.boolean().optional(),
    vehicle: VehicleChange.optional(),
  }).strict(),
  responses: { 200: { description: "The driver", schema: Driver } },
  handler: async ({ params, body, asCaller }) => ({
    body: await asCaller(async (tx) => {
      const driver = await rpc(tx, "update_driver", {
        driver_id: params.id,
        name: body.name,
        phone: body.phone,
        active: body.active,
      });
      return body.vehicle ? await rpc(tx, "set_driver_vehicle", vehicleArgs(params.id, body.vehicle)) : driver;
    }),
  }),
});

function vehicleArgs(driverId: string, vehicle: z.infer<typeof VehicleChange>) {
  return { driver_id: driverId, vehicle_type: vehicle.type, plate: vehicle.plate, capacity: vehicle.capacity };
}

export default [createDriver, listDrivers, getDriver, updateDriver];

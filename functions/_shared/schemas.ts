// zod schemas shared by several routes.
import { z } from "zod";

/** A JSON number of BRL with at most two decimals. */
export const Money = z.number().min(0).max(1_000_000_000).refine(
  (value) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6,
  "must have at most 2 decimal places",
);
export const PositiveMoney = Money.refine((value) => value > 0, "must be greater than 0");

export const Email = z.email().max(254).transform((email) => email.toLowerCase());
export const Password = z.string().min(8).max(72);
export const Name = z.string().trim().min(1).max(200);
export const Phone = z.string().trim().regex(/^\+?[0-9 ()-]{8,20}$/, "must be a phone number");
export const Timestamp = z.iso.datetime({ offset: true });

export const LatLng = z.object({
  lat: z.number().min(-90).max(90),
  lng: z.number().min(-180).max(180),
});

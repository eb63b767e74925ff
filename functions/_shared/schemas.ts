// zod schemas shared by several routes.
import { z } from "zod";

/** A UUID in text form, for ids checked outside a zod schema (path segments, token subjects, Pix keys). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const MONEY_RULE = "BRL as a JSON number with at most 2 decimal places";
const hasCents = (value: number) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6;
/** Binary floating point noise (0.30000000000000004) becomes the exact cents it stands for. */
const toCents = (value: number) => Math.round(value * 100) / 100;

/** A JSON number of BRL with at most two decimals. */
export const Money = z.number().min(0).max(1_000_000_000)
  .refine(hasCents, "must have at most 2 decimal places").transform(toCents).describe(MONEY_RULE);
export const PositiveMoney = z.number().gt(0).max(1_000_000_000)
  .refine(hasCents, "must have at most 2 decimal places").transform(toCents).describe(MONEY_RULE);

export const Email = z.email().max(254).transform((email) => email.toLowerCase());
// bcrypt reads at most 72 bytes, so longer passwords are refused rather than cut.
export const Password = z.string().min(8).max(72)
  .refine((password) => new TextEncoder().encode(password).length <= 72, "must be at most 72 bytes in UTF-8");
export const Name = z.string().trim().min(1).max(200);
export const Phone = z.string().trim().regex(/^\+?[0-9 ()-]{8,20}$/, "must be a phone number");
export const Timestamp = z.iso.datetime({ offset: true });

export const LatLng = z.object({
  lat: z.number().min(-90).max(90),
  lng: z.number().min(-180).max(180),
});

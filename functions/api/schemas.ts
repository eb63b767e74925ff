// zod schemas shared by the api's routes.
import { z } from "zod";

/** Postgres text cannot hold NUL, and a lone UTF-16 surrogate has no UTF-8 form. */
function storableText(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
}
const STORABLE = "must not contain NUL characters or unpaired UTF-16 surrogates";

/** Text we store: trimmed, 1..max characters, storable. */
export const Text = (max: number) => z.string().trim().min(1).max(max).refine(storableText, STORABLE);
/** Text we store that may be empty (a field cleared): trimmed, 0..max characters, storable. */
export const ClearableText = (max: number) => z.string().trim().max(max).refine(storableText, STORABLE);

const MONEY_RULE = "BRL as a JSON number with at most 2 decimal places";
const hasCents = (value: number) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6;
/** Binary floating point noise (0.30000000000000004) becomes the exact cents it stands for. */
const toCents = (value: number) => Math.round(value * 100) / 100;

/** A JSON number of BRL with at most two decimals. */
export const Money = z.number().min(0).max(1_000_000_000)
  .refine(hasCents, "must have at most 2 decimal places").transform(toCents).describe(MONEY_RULE);
export const PositiveMoney = z.number().gt(0).max(1_000_000_000)
  .refine(hasCents, "must have at most 2 decimal places").transform(toCents).describe(MONEY_RULE);

export const Email = z.email().max(254).refine(storableText, STORABLE).transform((email) => email.toLowerCase());
// bcrypt reads at most 72 bytes, so longer passwords are refused rather than cut.
export const Password = z.string().min(8).max(72).refine(storableText, STORABLE)
  .refine((password) => new TextEncoder().encode(password).length <= 72, "must be at most 72 bytes in UTF-8");
export const Name = Text(200);
export const Phone = z.string().trim().regex(/^\+?[0-9 ()-]{8,20}$/, "must be a phone number");
export const Timestamp = z.iso.datetime({ offset: true });

export const LatLng = z.object({
  lat: z.number().min(-90).max(90),
  lng: z.number().min(-180).max(180),
});

/** A credential that travels in an HTTP header (the gateway's `access_token`): printable ASCII, no CR/LF. */
export const HeaderSafe = (schema: z.ZodString) =>
  schema.regex(/^[\x20-\x7e]*$/, "must be printable ASCII (it travels in an HTTP header)");

export const IdParams = z.object({ id: z.uuid() });
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(500).refine(storableText, STORABLE).optional(),
});
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() });
}

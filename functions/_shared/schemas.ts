// Patterns shared by more than one function.

/** A UUID in text form, for ids checked outside a zod schema (path segments, token subjects, Pix keys). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

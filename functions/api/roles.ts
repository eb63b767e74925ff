// The role sets, named once (the SQL helpers use the same names; docs/contract.md).
// A route's `roles` documents who may call it; the database enforces it.

export const OWNER = ["company_owner"];
/** Writing drivers, assigning, the webhook log, the company's withdrawals. */
export const COMPANY_MANAGERS = ["company_owner", "company_admin"];
/** Deliveries, quotes, prices, reading drivers and their locations, trails; `admin` is the legacy older-form role. */
export const DELIVERY_MANAGERS = [...COMPANY_MANAGERS, "admin"];
export const DRIVER = ["driver"];
/** Every member of a company. */
export const MEMBERS = [...DELIVERY_MANAGERS, ...DRIVER];
/** A driver's own withdrawals, or the company's for its managers. */
export const WITHDRAWAL_READERS = [...DRIVER, ...COMPANY_MANAGERS];

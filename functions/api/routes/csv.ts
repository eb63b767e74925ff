// The company's deliveries in and out as CSV (docs/contract.md, Reports): the export streams the list's query
// (private.company_deliveries) through a database cursor, a batch at a time; the import checks each row as
// POST /api/v1/deliveries checks its body, locates its ends (geocoding an address without coordinates) and
// measures its route the same way, and creates it through the same SQL function (public.create_delivery, by
// public.import_deliveries).
import { normalizedQuery, placesFor } from "../address-lookups.ts";
import type { Place } from "../geocoding.ts";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { asService, asUser, rpc } from "../../_shared/db.ts";
import { HttpError, ValidationErrorBody, type ValidationItem, validationItems } from "../../_shared/errors.ts";
import type { Claims } from "../../_shared/jwt.ts";
import { defineRoute, readBody } from "../../_shared/route.ts";
import { dayOf } from "../days.ts";
import { IdParams } from "../schemas.ts";
import {
  CreateDelivery,
  type Delivery,
  DeliveryFilters,
  filterArgs,
  locateEnds,
  measure,
  type NewDelivery,
  newDeliveryFields,
} from "./deliveries.ts";

// Section: export

type DeliveryRow = z.infer<typeof Delivery>;

/**
 * How a file is written and read. `csv`: comma-separated, numbers with a decimal point, times in ISO 8601 UTC, codes
 * as the API names them. `excel-br`, as a spreadsheet set to Portuguese (Brazil) opens and saves it: UTF-8 with a
 * byte order mark, semicolons, decimal commas, `dd/mm/aaaa HH:mm` in São Paulo time, statuses in the app's words.
 */
export const Dialect = z.enum(["csv", "excel-br"]).default("csv");
type DialectName = z.infer<typeof Dialect>;

/** The statuses in the app's Portuguese words (web/src/i18n/pt-BR.ts, `status`). */
export const STATUS_PT: Record<DeliveryRow["status"], string> = {
  awaiting_payment: "Aguardando pagamento",
  pending: "Aguardando entregador",
  accepted: "Aceita",
  in_progress: "Em andamento",
  completed: "Concluída",
  cancelled: "Cancelada",
  failed: "Não entregue",
  returning: "Em devolução",
  returned: "Devolvida",
};
const PAYMENT_STATUS_PT: Record<DeliveryRow["payment_status"], string> = {
  pending: "Não pago",
  received: "Recebido",
  confirmed: "Confirmado",
  refunded: "Estornado",
  overdue: "Vencido",
  invoiced: "Faturado",
};
const PAYMENT_METHOD_PT: Record<DeliveryRow["payment_method"], string> = {
  pix: "Pix",
  invoice: "Fatura",
};

/** An instant as `dd/mm/aaaa HH:mm` in São Paulo. */
const SAO_PAULO = new Intl.DateTimeFormat("pt-BR", {
  timeZone: "America/Sao_Paulo",
  day: "2-digit",
  month: "2-digit",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});
export function brazilianTime(iso: string): string {
  const parts = Object.fromEntries(
    SAO_PAULO.formatToParts(new Date(iso)).map((p) => [p.type, p.value]),
  );
  return `${parts.day}/${parts.month}/${parts.year} ${parts.hour}:${parts.minute}`;
}

/**
 * `dd/mm/aaaa HH:mm` (seconds optional) in São Paulo as ISO 8601 with its offset, or null when the text is not
 * written so. São Paulo keeps UTC-3 all year (no daylight saving since 2019).
 */
export function fromBrazilianTime(text: string): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})[ T]?(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(
    text.trim(),
  );
  if (!m) return null;
  const [, day, month, year, hour, minute, second = "00"] = m;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}-03:00`;
  const date = new Date(iso);
  // 31/02 and 25:00 are not times.
  if (
    Number.isNaN(date.getTime()) ||
    brazilianTime(iso) !== `${day}/${month}/${year} ${hour}:${minute}`
  ) return null;
  return iso;
}

/** The driver's name beside its id (the export's `driver_name`). */
type DriverNames = Map<string, string>;

/** The export's columns: the create body's names where it has them (so an export can be imported again). */
const EXPORT_COLUMNS: [
  string,
  (d: DeliveryRow, names: DriverNames) => unknown,
][] = [
  ["id", (d) => d.id],
  ["external_id", (d) => d.external_id],
  ["status", (d) => d.status],
  ["payment_status", (d) => d.payment_status],
  ["payment_method", (d) => d.payment_method],
  ["origin_address", (d) => d.origin_address],
  ["origin.lat", (d) => d.origin.lat],
  ["origin.lng", (d) => d.origin.lng],
  ["destination_address", (d) => d.destination_address],
  ["destination.lat", (d) => d.destination.lat],
  ["destination.lng", (d) => d.destination.lng],
  ["distance_m", (d) => d.distance_m],
  ["duration_s", (d) => d.duration_s],
  ["price", (d) => d.price],
  ["driver_id", (d) => d.driver_id],
  ["driver_name", (d, names) => (d.driver_id ? names.get(d.driver_id) : null)],
  ["recipient_name", (d) => d.recipient_name],
  ["recipient_phone", (d) => d.recipient_phone],
  ["recipient_email", (d) => d.recipient_email],
  ["notes", (d) => d.notes],
  ["window_start", (d) => d.window_start],
  ["window_end", (d) => d.window_end],
  ["late", (d) => d.late],
  ["attempts", (d) => d.attempts],
  ["failure_reason", (d) => d.failure_reason],
  ["failure_note", (d) => d.failure_note],
  ["cancel_reason", (d) => d.cancel_reason],
  ["created_at", (d) => d.created_at],
  ["accepted_at", (d) => d.accepted_at],
  ["started_at", (d) => d.started_at],
  ["completed_at", (d) => d.completed_at],
  ["failed_at", (d) => d.failed_at],
  ["cancelled_at", (d) => d.cancelled_at],
  ["recall_reason", (d) => d.recall_reason],
  ["returned_at", (d) => d.returned_at],
  ["refund_status", (d) => d.refund_status],
];
/** Columns holding an instant, and money (two decimals), as excel-br writes them. */
const TIME_COLUMNS = new Set(
  EXPORT_COLUMNS.map(([name]) => name).filter((name) => /(_at|^window_(start|end))$/.test(name)),
);

/** The value of a cell as the dialect writes it (formula escaping apart: csvLines). */
function dialectCell(
  dialect: DialectName,
  name: string,
  value: unknown,
): unknown {
  if (dialect === "csv" || value === null || value === undefined) return value;
  if (name === "status") {
    return STATUS_PT[value as DeliveryRow["status"]] ?? value;
  }
  if (name === "payment_status") {
    return PAYMENT_STATUS_PT[value as DeliveryRow["payment_status"]] ?? value;
  }
  if (name === "payment_method") {
    return PAYMENT_METHOD_PT[value as DeliveryRow["payment_method"]] ?? value;
  }
  if (TIME_COLUMNS.has(name)) return brazilianTime(value as string);
  if (typeof value === "boolean") return value ? "Sim" : "Não";
  if (name === "price") return (value as number).toFixed(2).replace(".", ",");
  if (typeof value === "number") return String(value).replace(".", ",");
  return value;
}
const EXPORT_ONLY = new Set(EXPORT_COLUMNS.map(([name]) => name));

/** Rows fetched from the cursor per round trip: about 1 MB of JSON. */
const EXPORT_BATCH = 1000;
/** How long an export may stream before it is cut (the transaction holds a connection meanwhile). */
const EXPORT_BUDGET_MS = 120_000;

/** The characters a spreadsheet reads as the start of a formula (OWASP, CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text a spreadsheet would run as a formula is written with a leading apostrophe (OWASP's rule), in every export
 * and both dialects. Only text is: numbers are ours (a negative coordinate is not a formula), so a value is escaped
 * before the dialect writes its numbers as text. The import takes the apostrophe off.
 */
export const escapeFormula = (value: unknown) =>
  typeof value === "string" && FORMULA_START.test(value) ? `'${value}` : value;

/** Lines of CSV in the dialect's separator. */
export const csvLines = (rows: unknown[][], dialect: DialectName = "csv") =>
  stringify(rows, {
    delimiter: dialect === "excel-br" ? ";" : ",",
    cast: {
      boolean: (value) => String(value),
      number: (value) => String(value),
    },
  });

/** The company's drivers' names by id: every page of the drivers list, in the export's transaction. */
async function driverNames(
  tx: Parameters<typeof rpc>[0],
): Promise<DriverNames> {
  const names: DriverNames = new Map();
  let cursor: string | null = null;
  do {
    const page = await rpc(tx, "list_drivers", {
      page_limit: 100,
      cursor,
    }) as unknown as {
      items: { id: string; name: string }[];
      next_cursor: string | null;
    };
    for (const driver of page.items) names.set(driver.id, driver.name);
    cursor = page.next_cursor;
  } while (cursor);
  return names;
}

/**
 * The CSV as a stream: the header and the first batch before the answer starts (so a refusal is still its own
 * status), then a batch at a time as the client reads (the stream's back-pressure), in one transaction as the
 * caller. A client that goes away ends the transaction.
 */
async function exportStream(
  claims: Claims,
  filters: ReturnType<typeof filterArgs>,
  dialect: DialectName,
): Promise<ReadableStream> {
  const { readable, writable } = new TransformStream<string, Uint8Array>(
    {
      transform: (text, controller) => controller.enqueue(new TextEncoder().encode(text)),
    },
    undefined,
    { highWaterMark: 2 },
  );
  const writer = writable.getWriter();
  let started!: () => void;
  const first = new Promise<void>((resolve) => (started = resolve));
  const done = asUser(claims, async (tx) => {
    const cursor = await rpc(
      tx,
      "export_deliveries",
      filters,
    ) as unknown as string;
    const names = await driverNames(tx);
    let text = (dialect === "excel-br" ? "\uFEFF" : "") +
      csvLines([EXPORT_COLUMNS.map(([name]) => name)], dialect);
    for (;;) {
      const batch = await rpc(tx, "fetch_deliveries", {
        cursor,
        count: EXPORT_BATCH,
      }) as unknown as DeliveryRow[];
      text += csvLines(
        batch.map((d) =>
          EXPORT_COLUMNS.map(([name, value]) => dialectCell(dialect, name, escapeFormula(value(d, names))) ?? "")
        ),
        dialect,
      );
      await writer.ready;
      const written = writer.write(text);
      started();
      await written;
      text = "";
      if (batch.length < EXPORT_BATCH) return;
    }
  }, { deadline: Date.now() + EXPORT_BUDGET_MS });
  // Before the first batch, a failure is the answer; after it, the stream is cut.
  await Promise.race([first, done]);
  done.then(() => writer.close(), (error) => {
    console.error(
      JSON.stringify({
        event: "export_cut",
        error: error instanceof Error ? error.message : String(error),
      }),
    );
    writer.abort(error).catch(() => {});
  });
  return readable;
}

export const exportDeliveries = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/export",
  tag: "deliveries",
  summary: "The company's deliveries as CSV",
  description: "Every delivery the list would show with the same filters (`status`, `driver_id`, `payment_status`, " +
    "`q`, `from`, `to`, `late`: see GET /api/v1/deliveries), newest first, one row each, as `text/csv` with a " +
    "header line, the driver's name (`driver_name`) beside its id. `dialect=csv` (the default): UTF-8, " +
    "comma-separated, decimal points, times in ISO 8601 UTC, statuses as the API names them. `dialect=excel-br`, " +
    "as a spreadsheet in Portuguese (Brazil) opens it: UTF-8 with a byte order mark, semicolons, decimal commas " +
    "(`price` with two decimals), times as `dd/mm/aaaa HH:mm` in São Paulo, statuses in the app's words (" +
    `${Object.values(STATUS_PT).map((word) => `\`${word}\``).join(", ")}), payment statuses and methods too, ` +
    "booleans `Sim`/`Não`. In both, a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return " +
    "is written with a leading apostrophe, so that no spreadsheet runs it as a formula (OWASP's CSV injection " +
    "rule; the import takes the apostrophe off again). The columns that POST /api/v1/deliveries/import reads have " +
    "its names (`origin.lat`, ...), so an export can be imported again, in either dialect. Streamed: read as it " +
    "comes, whatever the number of rows; an export still running after 2 minutes is cut short.",
  auth: "bearer",
  roles: "delivery_managers",
  query: DeliveryFilters.extend({
    dialect: Dialect.describe(
      "`csv` (default) or `excel-br` (semicolons, decimal commas, São Paulo times, words).",
    ),
  }),
  responses: {
    200: {
      description: "The deliveries, one per line after the header",
      schema: z.string().describe(
        `Columns: ${EXPORT_COLUMNS.map(([name]) => name).join(", ")}`,
      ),
      mediaType: "text/csv",
    },
  },
  async handler({ query, claims }) {
    const stream = await exportStream(claims, filterArgs(query), query.dialect);
    return new Response(stream, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${query.dialect === "excel-br" ? "entregas" : "deliveries"}-${
          dayOf(new Date())
        }.csv"`,
      },
    });
  },
});

// Section: import

/** At most this many rows (besides the header) per upload. */
export const MAX_IMPORT_ROWS = 5000;
/** A file of 5,000 rows with long addresses and notes fits; the JSON routes' 1 MiB would not. */
const MAX_IMPORT_BYTES = 5 * 1_048_576;
/** Rows located (geocoded where needed) and measured at once. */
const ROUTING_CONCURRENCY = 8;
/** Rows created per transaction. */
const INSERT_BATCH = 250;

/** The columns an upload may name: the create body's fields, nested ones with a dot. */
const IMPORT_COLUMNS = [
  "origin_address",
  "origin.lat",
  "origin.lng",
  "destination_address",
  "destination.lat",
  "destination.lng",
  "payment_method",
  "recipient_name",
  "recipient_phone",
  "recipient_email",
  "notes",
  "driver_id",
  "window_start",
  "window_end",
  "external_id",
  "collect.amount",
  "collect.method",
  "collect.change_for",
  "size",
  "service_s",
] as const;
const NUMBER_COLUMNS = new Set([
  "origin.lat",
  "origin.lng",
  "destination.lat",
  "destination.lng",
  "collect.amount",
  "collect.change_for",
  "size",
  "service_s",
]);

const ImportResult = z.object({
  created: z.number().int(),
  skipped: z.number().int().describe(
    "Rows whose external_id the company already has (an earlier upload).",
  ),
  errors: z.array(z.object({
    row: z.number().int().describe(
      "The row as a spreadsheet numbers it: the header is row 1.",
    ),
    detail: z.string(),
    items: ValidationErrorBody.shape.detail.optional().describe(
      "What is wrong with the row's cells, as a 400's validation items name it (`loc` is `body` and the " +
        'column\'s path, e.g. `["body", "destination", "lat"]`), so that an app can say it in its language; ' +
        "absent when the database refused the row (`detail` says why).",
    ),
  })),
}).meta({ id: "ImportResult" });

interface RowError {
  row: number;
  detail: string;
  items?: ValidationItem[];
}

/**
 * A problem with the file as a whole: 400 as a validation item of the body, its `type` naming the problem (`csv_...`)
 * and its `input` what the message names (the unknown columns, the missing one, the number of rows), so that an app
 * can say it in its language.
 */
const badFile = (type: string, msg: string, input: unknown = null) =>
  new HttpError(400, [{ type, loc: ["body"], msg, input }]);

/** A number as a person types it: a decimal comma is read as a point. */
const typedNumber = (
  text: string,
) => (/^-?\d+(,\d+)?$/.test(text) ? Number(text.replace(",", ".")) : Number(text));

const WINDOW_COLUMNS = new Set(["window_start", "window_end"]);
/** What a window cell may hold, said when one is refused. */
export const WINDOW_FORMAT = "a date and time as dd/mm/aaaa HH:mm in São Paulo time (e.g. 29/11/2026 14:30), or " +
  "ISO 8601 with an offset (2026-11-29T14:30:00-03:00)";

/**
 * A cell as the create body takes it: the apostrophe an export puts before a formula-like text taken off (csvLines),
 * a window written `dd/mm/aaaa HH:mm` (São Paulo) made ISO 8601, coordinates as numbers.
 */
function cellValue(name: string, text: string): unknown {
  const unescaped = /^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text;
  if (NUMBER_COLUMNS.has(name)) return typedNumber(unescaped);
  if (WINDOW_COLUMNS.has(name)) {
    return fromBrazilianTime(unescaped) ?? unescaped;
  }
  // An excel-br export names the methods in Portuguese.
  if (name === "payment_method") {
    return {
      fatura: "invoice",
      pix: "pix",
    }[unescaped.toLowerCase() as "fatura" | "pix"] ?? unescaped;
  }
  return unescaped;
}

/** A CSV record as the create body: dotted names nested, empty cells left out, values as cellValue reads them. */
function bodyOf(header: string[], cells: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  header.forEach((name, i) => {
    const text = (cells[i] ?? "").trim();
    if (text === "" || !(IMPORT_COLUMNS as readonly string[]).includes(name)) {
      return;
    }
    const value = cellValue(name, text);
    const [head, tail] = name.split(".");
    if (tail) body[head] = { ...(body[head] as object), [tail]: value };
    else body[head] = value;
  });
  body.payment_method ??= "invoice";
  return body;
}

/** A window the create body refused for its form says which forms a cell may take. */
const issueMessage = (issue: z.core.$ZodIssue): string | undefined =>
  WINDOW_COLUMNS.has(String(issue.path[0])) && issue.code === "invalid_format" ? `must be ${WINDOW_FORMAT}` : undefined;

const issueText = (error: z.ZodError) =>
  error.issues.map((issue) => `${issue.path.join(".") || "row"}: ${issueMessage(issue) ?? issue.message}`).join("; ");

/** The records of the file with their spreadsheet row numbers, or a 400 for a file that is not a CSV we read. */
function readCsv(
  text: string,
): { header: string[]; rows: { row: number; cells: string[] }[] } {
  const firstLine = text.slice(0, text.indexOf("\n") >>> 0);
  // A spreadsheet in Portuguese saves CSV with semicolons (its decimal separator is the comma).
  const delimiter = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ";" : ",";
  let records: string[][];
  try {
    records = parse(text, {
      bom: true,
      delimiter,
      relax_column_count: true,
      skip_empty_lines: false,
    });
  } catch (error) {
    throw badFile(
      "csv_unreadable",
      `The file is not a CSV file we can read (${(error as Error).message}): send UTF-8 text, a header line, ` +
        "columns separated by commas or by semicolons (as a spreadsheet in Portuguese saves them), cells with a " +
        "separator or a line break in double quotes",
    );
  }
  const [header = [], ...data] = records;
  const names = header.map((name) => name.trim());
  if (names.length === 0 || names.every((name) => name === "")) {
    throw badFile(
      "csv_no_header",
      "The file has no header line naming its columns",
    );
  }
  const unknown = names.filter((name) =>
    !(IMPORT_COLUMNS as readonly string[]).includes(name) &&
    !EXPORT_ONLY.has(name)
  );
  if (unknown.length > 0) {
    throw badFile(
      "csv_unknown_columns",
      `Unknown columns: ${unknown.join(", ")}; the columns are ${IMPORT_COLUMNS.join(", ")}`,
      unknown,
    );
  }
  for (const needed of ["origin_address", "destination_address"]) {
    if (!names.includes(needed)) {
      throw badFile(
        "csv_missing_column",
        `The header has no ${needed} column`,
        needed,
      );
    }
  }
  // Each record is a row of a spreadsheet, a blank one too (counted, not read).
  const rows = data.map((cells, i) => ({ row: i + 2, cells }))
    .filter(({ cells }) => cells.some((cell) => cell.trim() !== ""));
  if (rows.length > MAX_IMPORT_ROWS) {
    throw badFile(
      "csv_too_many_rows",
      `The file has ${rows.length} rows; at most ${MAX_IMPORT_ROWS} per upload`,
      rows.length,
    );
  }
  return { header: names, rows };
}

/** Runs `work` over the items with at most `limit` at a time; the first failure is thrown. */
async function eachLimited<T>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, worker),
  );
}

/** Files of more than this many rows are imported as a job (202). */
export const JOB_THRESHOLD = 500;
/** How long recording a job's rows (up to 5,000) may take: more than a plain transaction's budget. */
const JOB_START_BUDGET_MS = 6_000;
/** Rows a worker takes at once: located, measured, then created in one transaction with the job's cursor. */
const JOB_BATCH = 100;
/** How long a batch is a worker's: a worker killed mid-batch lets it lapse, and the next takes it again. */
const JOB_LEASE_S = 20;
/** How long one worker call goes on taking batches before it leaves the rest to the next (woken by the commit). */
const JOB_BUDGET_MS = 8_000;

const DeliveryImport = z.object({
  id: z.uuid(),
  status: z.enum(["running", "done", "failed"]),
  total: z.number().int().describe("The file's rows (blank ones apart)."),
  processed: z.number().int().describe(
    "Rows done with so far: created, skipped or refused.",
  ),
  created: z.number().int(),
  skipped: z.number().int().describe(
    "Rows whose external_id the company already has.",
  ),
  errors: ImportResult.shape.errors,
  failure: z.string().nullable().describe(
    "Why a failed import stopped (the geocoding or routing service failing 5 times in a row); the rows " +
      "before it were created, the rest were not.",
  ),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: "DeliveryImport" });

/** A checked row, located and measured: what public.import_deliveries takes (public.new_delivery's fields). */
type RoutedRow = Record<string, unknown> & { row: number };

/**
 * Locates (geocoding an address without coordinates, each distinct address once) and measures the rows, 8 at a
 * time; a row whose address has no place is pushed to `errors`. The geocoding or routing service failing throws.
 * In the file's order, so that of two rows with one external id the first is created.
 */
async function routeRows(
  fresh: { row: number; body: NewDelivery }[],
  errors: RowError[],
): Promise<RoutedRow[]> {
  // Each distinct address is geocoded once for the whole file (rows at once share the one lookup).
  const lookups = new Map<string, Promise<Place[]>>();
  const geocodeOnce = (address: string) => {
    const key = normalizedQuery(address);
    let found = lookups.get(key);
    if (!found) lookups.set(key, found = placesFor(address));
    return found;
  };
  const routed: RoutedRow[] = [];
  await eachLimited(fresh, ROUTING_CONCURRENCY, async ({ row, body }) => {
    let ends: Awaited<ReturnType<typeof locateEnds>>;
    try {
      ends = await locateEnds(body, geocodeOnce);
    } catch (error) {
      // An address the geocoding service has no place for refuses its row; the service failing, the import.
      if (
        !(error instanceof HttpError && error.status === 422 &&
          Array.isArray(error.detail))
      ) throw error;
      errors.push({
        row,
        detail: error.detail.map((item) => `${item.loc.at(-1)}: ${item.msg}`)
          .join("; "),
        items: error.detail,
      });
      return;
    }
    const route = await measure(ends);
    routed.push({
      row,
      ...newDeliveryFields(body, ends, route),
      // Not import_deliveries' own: set after it, in the same transaction (set_delivery_load, as a create does).
      size: body.size,
      service_s: body.service_s,
    });
  });
  // In the file's order, so that of two rows with one external id the first is created.
  routed.sort((a, b) => (a.row as number) - (b.row as number));
  return routed;
}

export const importDeliveries = defineRoute({
  method: "post",
  path: "/api/v1/deliveries/import",
  tag: "deliveries",
  summary: "Create deliveries from a CSV file",
  description: "The body is a CSV file (`Content-Type: text/csv`, UTF-8, at most 5 MiB): a header line naming the " +
    `columns as the body of POST /api/v1/deliveries names its fields (${IMPORT_COLUMNS.join(", ")}), then at most ` +
    `${MAX_IMPORT_ROWS} rows. Commas or semicolons separate the columns (a spreadsheet in Portuguese saves ` +
    "semicolons: the `excel-br` dialect of the export, a byte order mark included, is read as it is written), " +
    "coordinates may have a decimal comma, windows are ISO 8601 with an offset or `dd/mm/aaaa HH:mm` in São Paulo " +
    "time (a window in neither form is refused naming both), `payment_method` may be `Fatura`, a text cell an " +
    "export escaped with a leading apostrophe is read without it, empty cells are left out, blank rows are " +
    "ignored, and the " +
    "columns of an export that the create body does not have (id, status, ...) are ignored; any other column is " +
    "400. Each row is checked as POST /api/v1/deliveries checks its body and created through the same path; a " +
    "refused row is reported in `errors` with its row number as a spreadsheet shows it (the header is row 1), " +
    "what is wrong in words (`detail`) and, for a cell that is wrong, as validation items (`items`); the others " +
    "are created. A file that cannot be read as a whole is 400, its item's `type` naming why (`csv_unreadable`, " +
    "`csv_not_utf8`, `csv_no_header`, `csv_unknown_columns`, `csv_missing_column`, `csv_too_many_rows`). A row " +
    "whose `external_id` the company already has is skipped, so a file can be uploaded again: give every row an " +
    "external_id to make that safe. GET /api/v1/deliveries/import/template gives the header and an example row " +
    "in either dialect.\n\n" +
    "**Payment**: imported deliveries are invoice deliveries (`payment_method` empty or `invoice`); a `pix` row is " +
    "refused, because each Pix delivery charges its own client at the gateway (three gateway calls, and a QR code " +
    "to send that client): create those one at a time with POST /api/v1/deliveries.\n\n" +
    "**Coordinates** are optional, as in POST /api/v1/deliveries: an end whose `.lat` and `.lng` are empty is " +
    "geocoded from its address (the first place the geocoding service finds); a row with an address it finds " +
    "nothing for is refused in `errors`, naming the address column. Every row is located and its route measured " +
    "before anything is created: if the geocoding or the routing service fails or is too slow, the answer is 502 " +
    "and nothing is created. Like every request, an import answers within 10 s: a file whose rows take the routing " +
    "or geocoding service longer than that to measure is 502 with nothing created (8 rows are measured at once, so " +
    "5,000 rows need a service answering within about 13 ms); split it, or give the coordinates.\n\n" +
    `**Large files**: a file of more than ${JOB_THRESHOLD} rows is imported as a job. Its rows are checked at once ` +
    "(a file that cannot be read is still 400), recorded, and the answer is **202** with the import " +
    '(`{id, status: "running", total, ...}`) and `Location: /api/v1/imports/{id}`; the rows are then located, ' +
    "measured and created in batches, each batch wholly or not at all, its progress in GET /api/v1/imports/{id} " +
    "and as `import_progress` on `company:{company_id}`. A job stopped by a crash resumes where its last batch " +
    "ended, creating no row twice. The same file sent again with its Idempotency-Key answers the same 202 with " +
    "the same `id`; sent again without a key, it is a new import, and only rows with an `external_id` are " +
    "recognised and skipped.",
  auth: "bearer",
  roles: "delivery_managers",
  rawBody: z.string().describe("The CSV file"),
  rawBodyType: "text/csv",
  rawBodyLimit: MAX_IMPORT_BYTES,
  responses: {
    200: {
      description: "What was created, skipped and refused",
      schema: ImportResult,
    },
    202: {
      description: `A file of more than ${JOB_THRESHOLD} rows: the import job, running`,
      schema: DeliveryImport,
      headers: { Location: "/api/v1/imports/{id}: the job's progress" },
    },
    413: { description: "The file is larger than 5 MiB" },
    415: { description: "The body is not sent as text/csv" },
    502: {
      description: "The geocoding or the routing service failed or was too slow; nothing was created",
    },
  },
  async handler({ req, claims, asCaller, authorize }) {
    const companyId = await authorize();
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(
        await readBody(req, MAX_IMPORT_BYTES),
      );
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw badFile("csv_not_utf8", "The file is not UTF-8 text");
    }
    const { header, rows } = readCsv(text);

    const errors: RowError[] = [];
    const valid: { row: number; body: NewDelivery }[] = [];
    for (const { row, cells } of rows) {
      const raw = bodyOf(header, cells);
      if (raw.payment_method === "pix") {
        const msg = "the import creates invoice deliveries; create a Pix delivery with POST /api/v1/deliveries, " +
          "which charges its client";
        errors.push({
          row,
          detail: `payment_method: ${msg}`,
          items: [{
            type: "pix_not_imported",
            loc: ["body", "payment_method"],
            msg,
            input: "pix",
          }],
        });
        continue;
      }
      const parsed = CreateDelivery.safeParse(raw);
      if (parsed.success) valid.push({ row, body: parsed.data });
      else {
        // One item per issue, in order: a window's says which forms it may take.
        const items = validationItems(parsed.error, "body", raw)
          .map((item, i) => ({
            ...item,
            msg: issueMessage(parsed.error.issues[i]) ?? item.msg,
          }));
        errors.push({ row, detail: issueText(parsed.error), items });
      }
    }

    if (rows.length > JOB_THRESHOLD) {
      const job = await asService((tx) =>
        rpc(tx, "start_import", {
          company_id: companyId,
          created_by: claims.sub,
          total: rows.length,
          rows: valid as never,
          errors: errors as never,
        }), {
        deadline: Date.now() + JOB_START_BUDGET_MS,
      }) as unknown as z.infer<typeof DeliveryImport>;
      return {
        status: 202,
        body: job,
        headers: { Location: `/api/v1/imports/${job.id}` },
      };
    }

    // Rows the company already has are skipped before any route is measured.
    const ids = [
      ...new Set(
        valid.map((v) => v.body.external_id).filter((id): id is string => !!id),
      ),
    ];
    const known = new Set(
      ids.length ? await asCaller((tx) => rpc(tx, "existing_external_ids", { external_ids: ids })) : [],
    );
    const fresh = valid.filter((v) => !v.body.external_id || !known.has(v.body.external_id));
    let skipped = valid.length - fresh.length;

    const routed = await routeRows(fresh, errors);

    let created = 0;
    for (let i = 0; i < routed.length; i += INSERT_BATCH) {
      const batch = routed.slice(i, i + INSERT_BATCH);
      const result = await asService(async (tx) => {
        const answer = await rpc(tx, "import_deliveries", {
          company_id: companyId,
          created_by: claims.sub,
          rows: batch as never,
        }) as unknown as {
          created: { row: number; id: string }[];
          skipped: unknown[];
          errors: RowError[];
        };
        // A row's size and drop-off time (routes), with its creation: both or neither.
        for (const { row, id } of answer.created) {
          const load = batch.find((r) => r.row === row);
          if (load?.size == null && load?.service_s == null) continue;
          await rpc(tx, "set_delivery_load", {
            delivery_id: id,
            size: load.size as number | undefined,
            service_s: load.service_s as number | undefined,
          });
        }
        return answer;
      });
      created += result.created.length;
      skipped += result.skipped.length;
      errors.push(...result.errors);
    }
    errors.sort((a, b) => a.row - b.row);
    return { body: { created, skipped, errors } };
  },
});

// Section: template

/** The example row of the template: a delivery tomorrow afternoon from Sé to Paulista, in the dialect's forms. */
function templateRows(dialect: DialectName): unknown[][] {
  const tomorrow = new Date(Date.now() + 86_400_000);
  const day = brazilianTime(tomorrow.toISOString()).slice(0, 10);
  const [dd, mm, yyyy] = day.split("/");
  const at = (hour: string) => dialect === "excel-br" ? `${day} ${hour}:00` : `${yyyy}-${mm}-${dd}T${hour}:00:00-03:00`;
  const number = (
    value: number,
  ) => (dialect === "excel-br" ? String(value).replace(".", ",") : value);
  const example: Record<(typeof IMPORT_COLUMNS)[number], unknown> = {
    origin_address: "Praça da Sé, São Paulo",
    "origin.lat": number(-23.5505),
    "origin.lng": number(-46.6333),
    destination_address: "Av. Paulista, 1000, São Paulo",
    "destination.lat": number(-23.5614),
    "destination.lng": number(-46.6559),
    payment_method: "invoice",
    recipient_name: "Maria Oliveira",
    recipient_phone: "+55 11 98888-7777",
    recipient_email: "maria@example.com",
    notes: "Portaria: deixar com o zelador",
    driver_id: "",
    window_start: at("14"),
    window_end: at("18"),
    external_id: "PEDIDO-1001",
    // Money at the door: R$ 57,50 in cash, change for a R$ 100,00 note.
    "collect.amount": number(57.5),
    "collect.method": "cash",
    "collect.change_for": number(100),
    // Routes: the units it takes in a vehicle, and the seconds spent at the drop-off.
    size: 1,
    service_s: 120,
  };
  return [[...IMPORT_COLUMNS], IMPORT_COLUMNS.map((name) => example[name])];
}

export const importTemplate = defineRoute({
  method: "get",
  path: "/api/v1/deliveries/import/template",
  tag: "deliveries",
  summary: "A CSV template for the import, with an example row",
  description: "The header line POST /api/v1/deliveries/import reads (every column it takes) and one example row " +
    "(a delivery tomorrow afternoon, with its window), in the dialect asked for: `csv` (commas, decimal points, " +
    "ISO 8601 windows) or `excel-br` (UTF-8 with a byte order mark, semicolons, decimal commas, windows as " +
    "`dd/mm/aaaa HH:mm` in São Paulo), ready to open in a spreadsheet, fill in and send. Empty coordinates are " +
    "geocoded from the address; `payment_method` empty or `invoice`.",
  auth: "bearer",
  roles: "delivery_managers",
  query: z.object({
    dialect: Dialect.describe("`csv` (default) or `excel-br`."),
  }),
  responses: {
    200: {
      description: "The template: a header line and one example row",
      schema: z.string().describe(`Columns: ${IMPORT_COLUMNS.join(", ")}`),
      mediaType: "text/csv",
    },
  },
  async handler({ query, authorize }) {
    await authorize();
    const bom = query.dialect === "excel-br" ? "\uFEFF" : "";
    return new Response(
      bom + csvLines(templateRows(query.dialect), query.dialect),
      {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="${
            query.dialect === "excel-br" ? "modelo-entregas" : "deliveries-template"
          }.csv"`,
        },
      },
    );
  },
});

// Section: import jobs

interface ImportClaim {
  import_id: string;
  company_id: string;
  from_ordinal: number;
  rows: { ordinal: number; row: number; body: NewDelivery }[];
}

const isConflict = (error: unknown) =>
  error instanceof HttpError && error.status === 409 ||
  (error as { code?: string })?.code === "PT409";

/**
 * The import worker (POST /functions/v1/api/imports/work, the service role): takes batches of the running imports
 * under a lease, locates and measures their rows, and creates each batch with its cursor (public.run_import_batch)
 * until its budget is spent. A batch another worker committed meanwhile is dropped (nothing twice); a batch the
 * geocoding or routing service could not measure is counted (public.fail_import_batch) and taken again when its
 * lease lapses.
 */
export async function workImports(): Promise<{ batches: number }> {
  const until = Date.now() + JOB_BUDGET_MS;
  let batches = 0;
  while (Date.now() < until) {
    const claim = await asService((tx) =>
      rpc(tx, "claim_import_batch", {
        batch_size: JOB_BATCH,
        lease_seconds: JOB_LEASE_S,
      })
    ) as unknown as ImportClaim | null;
    if (!claim) break;
    const next = claim.rows.length ? claim.rows[claim.rows.length - 1].ordinal + 1 : claim.from_ordinal;
    const errors: RowError[] = [];
    try {
      const ids = [
        ...new Set(
          claim.rows.map((r) => r.body.external_id).filter((id): id is string => !!id),
        ),
      ];
      const known = new Set(
        ids.length
          ? (await asService((tx) =>
            tx`select d.external_id from public.deliveries d
               where d.company_id = ${claim.company_id} and d.external_id = any(${ids})`
          )).map((r) => r.external_id as string)
          : [],
      );
      const fresh = claim.rows.filter((r) => !r.body.external_id || !known.has(r.body.external_id));
      const routed = await routeRows(fresh, errors);
      // Rows skipped here are passed on with their known id alone: import_deliveries skips and counts them.
      const skippedRows = claim.rows.filter((r) => r.body.external_id && known.has(r.body.external_id))
        .map((r) => ({
          row: r.row,
          origin_address: r.body.origin_address,
          external_id: r.body.external_id,
        }));
      await asService((tx) =>
        rpc(tx, "run_import_batch", {
          import_id: claim.import_id,
          from_ordinal: claim.from_ordinal,
          next_ordinal: next,
          rows: [...skippedRows, ...routed].sort((a, b) => a.row - b.row) as never,
          errors: errors.sort((a, b) => a.row - b.row) as never,
        })
      );
      batches++;
    } catch (error) {
      if (isConflict(error)) continue;
      const detail = error instanceof Error ? error.message : String(error);
      console.error(
        JSON.stringify({
          event: "import_batch_failed",
          import_id: claim.import_id,
          error: detail,
        }),
      );
      await asService((tx) =>
        rpc(tx, "fail_import_batch", {
          import_id: claim.import_id,
          from_ordinal: claim.from_ordinal,
          failure: `rows from ${claim.rows[0]?.row ?? "?"} could not be located or measured: ${detail}`,
        })
      ).catch(() => {});
      break;
    }
  }
  return { batches };
}

export const getImport = defineRoute({
  method: "get",
  path: "/api/v1/imports/{id}",
  tag: "deliveries",
  summary: "An import job's progress",
  description: `An import of more than ${JOB_THRESHOLD} rows (POST /api/v1/deliveries/import answered 202): ` +
    "`running` while its rows are created, then `done` (`processed` equals `total`) or `failed` (`failure` says " +
    "why). `created`, `skipped` and `errors` count and list the rows as the 200 of a smaller import does. The " +
    "same progress is broadcast as `import_progress` on `company:{company_id}` (with `errors` as a number). " +
    "Another company's import is 404.",
  auth: "bearer",
  roles: "delivery_managers",
  params: IdParams,
  responses: {
    200: { description: "The import", schema: DeliveryImport },
    404: { description: "No such import in the caller's company" },
  },
  async handler({ params, asCaller }) {
    return {
      body: await asCaller((tx) => rpc(tx, "get_import", { import_id: params.id })),
    };
  },
});

export default [exportDeliveries, importTemplate, importDeliveries, getImport];

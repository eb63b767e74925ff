// Spreadsheets as Brazil opens them (issue 33): the export's excel-br dialect (BOM, semicolons, decimal commas,
// São Paulo times, Portuguese statuses, the driver's name), formula cells escaped in both dialects, the import
// reading the same dialect (and saying which window format it wants), and the downloadable template.
import { randomUUID } from "node:crypto";
import { parse } from "csv-parse/sync";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, type Member, stack, type TestCompany } from "../../support/api.ts";
import { createInvoiceDelivery, moveDelivery } from "../../support/deliveries.ts";

let a: TestCompany;
let b: TestCompany;
let c: TestCompany;

beforeAll(async () => {
  [a, b, c] = await Promise.all([
    createCompany("Planilhas A"),
    createCompany("Planilhas B"),
    createCompany("Planilhas C"),
  ]);
});

/** The raw bytes of a GET, so that a byte order mark is seen (Response.text() drops it). */
async function download(who: Member, path: string) {
  const res = await fetch(`${stack().apiUrl}${path}`, { headers: { authorization: `Bearer ${who.token}` } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get("content-type"), bytes, text: new TextDecoder().decode(bytes) };
}

const rowsOf = (text: string, delimiter: string) =>
  parse(text, { bom: true, columns: true, delimiter }) as Record<string, string>[];

const importCsv = (who: Member, text: string) =>
  api("/api/v1/deliveries/import", {
    method: "POST",
    token: who.token,
    rawBody: text,
    headers: { "content-type": "text/csv" },
  });

/** `dd/mm/aaaa HH:mm` in São Paulo, as a person there reads an instant. */
const brazilian = (iso: string) => {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("pt-BR", {
      timeZone: "America/Sao_Paulo",
      day: "2-digit",
      month: "2-digit",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).formatToParts(new Date(iso)).map((part) => [part.type, part.value]),
  );
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}`;
};
const decimalComma = (text: string) => Number(text.replace(",", "."));

const FORMULAS = {
  recipient_name: '=HYPERLINK("http://evil.example","Clique")',
  notes: "+SUM(A1:A9)",
  recipient_email: "@x.example", // not an e-mail: never sent; below, in external_id
};

describe("GET /api/v1/deliveries/export?dialect=excel-br", () => {
  it("writes what a Brazilian spreadsheet reads, and a CSV parser gets the same values back", async () => {
    const tag = randomUUID().slice(0, 8);
    const created = await createInvoiceDelivery(a, {
      recipient_name: "José da Silva",
      notes: "Portão azul; tocar 2x",
      external_id: `PL-${tag}`,
      window_start: new Date(Date.now() + 3_600_000).toISOString(),
      window_end: new Date(Date.now() + 4 * 3_600_000).toISOString(),
    });
    const assigned = await moveDelivery(a.owner, created.id, "assign", { driver_id: a.driver.driverId });
    expect(assigned.status).toBe(200);
    const delivery = assigned.body;
    const driver = (await api(`/api/v1/drivers/${a.driver.driverId}`, { token: a.owner.token })).body;

    const file = await download(a.admin, `/api/v1/deliveries/export?dialect=excel-br&q=PL-${tag}`);
    expect(file.status).toBe(200);
    expect(file.type).toMatch(/^text\/csv; charset=utf-8/);
    expect([...file.bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(file.text.split("\n")[0]).toContain("id;external_id;status;");
    const [row] = rowsOf(file.text, ";");
    expect(row).toMatchObject({
      id: delivery.id,
      external_id: `PL-${tag}`,
      status: "Aceita",
      payment_status: "Faturado",
      payment_method: "Fatura",
      recipient_name: "José da Silva",
      notes: "Portão azul; tocar 2x",
      driver_id: a.driver.driverId,
      driver_name: driver.name,
      late: "Não",
      created_at: brazilian(delivery.created_at),
      accepted_at: brazilian(delivery.accepted_at),
      window_start: brazilian(delivery.window_start),
      window_end: brazilian(delivery.window_end),
      completed_at: "",
    });
    expect(row.price).toMatch(/^\d+,\d{2}$/);
    expect(decimalComma(row.price)).toBe(delivery.price);
    expect(decimalComma(row["origin.lat"])).toBe(delivery.origin.lat);
    expect(decimalComma(row["destination.lng"])).toBe(delivery.destination.lng);
    expect(Number(row.distance_m)).toBe(delivery.distance_m);

    // The default dialect is unchanged but for the driver's name beside the id.
    const plain = await download(a.admin, `/api/v1/deliveries/export?q=PL-${tag}`);
    expect(plain.bytes[0]).not.toBe(0xef);
    const [plainRow] = rowsOf(plain.text, ",");
    expect(plainRow).toMatchObject({ status: "accepted", driver_name: driver.name, price: String(delivery.price) });
    expect(Date.parse(plainRow.created_at)).toBe(Date.parse(delivery.created_at));
  });

  it("speaks the statuses in the app's Portuguese words", async () => {
    const tag = randomUUID().slice(0, 8);
    const word = async (id: string) => {
      const file = await download(a.owner, `/api/v1/deliveries/export?dialect=excel-br&q=${tag}`);
      return rowsOf(file.text, ";").find((row) => row.id === id)!.status;
    };
    const { id } = await createInvoiceDelivery(a, { external_id: `ST-${tag}` });
    expect(await word(id)).toBe("Aguardando entregador");
    const moves: [Member, string, unknown, string][] = [
      [a.driver, "accept", undefined, "Aceita"],
      [a.driver, "start", undefined, "Em andamento"],
      [a.owner, "recall", { reason: "Cliente desistiu" }, "Em devolução"],
      [a.driver, "return", undefined, "Devolvida"],
    ];
    for (const [who, action, body, expected] of moves) {
      expect((await moveDelivery(who, id, action, body)).status).toBe(200);
      expect(await word(id)).toBe(expected);
    }
    const other = await createInvoiceDelivery(a, { external_id: `ST2-${tag}` });
    expect((await moveDelivery(a.owner, other.id, "cancel")).status).toBe(200);
    expect(await word(other.id)).toBe("Cancelada");
  });
});

describe("formula cells", () => {
  it("are escaped in both dialects, and an escaped export imports back to the same text", async () => {
    const tag = randomUUID().slice(0, 8);
    const external = `-1+1-${tag}`;
    await createInvoiceDelivery(a, {
      recipient_name: FORMULAS.recipient_name,
      notes: FORMULAS.notes,
      external_id: external,
    });
    for (const [dialect, delimiter] of [["csv", ","], ["excel-br", ";"]]) {
      const file = await download(a.owner, `/api/v1/deliveries/export?dialect=${dialect}&q=${tag}`);
      const [row] = rowsOf(file.text, delimiter);
      expect(row.recipient_name, dialect).toBe(`'${FORMULAS.recipient_name}`);
      expect(row.notes, dialect).toBe(`'${FORMULAS.notes}`);
      expect(row.external_id, dialect).toBe(`'${external}`);
      // Our own numbers are not formulas: a negative coordinate stays a number.
      expect(row["origin.lat"], dialect).toMatch(/^-23[.,]5505$/);
      // No cell a spreadsheet would run as a formula.
      for (const value of Object.values(row)) expect(value, `${dialect}: ${value}`).not.toMatch(/^[=+@\t\r]/);

      // Into another company, from the export as it is: the same text, without the apostrophe.
      const target = dialect === "csv" ? b : c;
      const imported = await importCsv(target.owner, file.text);
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      expect(imported.body).toMatchObject({ created: 1, errors: [] });
      const found = await api(`/api/v1/deliveries?q=${tag}&limit=5`, { token: target.owner.token });
      const copy = found.body.items.find((d: { recipient_name: string }) =>
        d.recipient_name === FORMULAS.recipient_name
      );
      expect(copy, dialect).toMatchObject({ notes: FORMULAS.notes, payment_method: "invoice" });
      expect(copy.external_id, dialect).toBe(external);
      // The same external id is skipped the second time, whichever dialect brought it.
      if (dialect === "excel-br") expect((await importCsv(b.owner, file.text)).body).toMatchObject({ skipped: 1 });
    }
  });
});

describe("POST /api/v1/deliveries/import in the excel-br dialect", () => {
  it("reads semicolons, decimal commas and dd/mm/aaaa HH:mm windows", async () => {
    const tag = randomUUID().slice(0, 8);
    const tomorrow = brazilian(new Date(Date.now() + 86_400_000).toISOString()).slice(0, 10);
    const file = "\uFEFF" + [
      "external_id;origin_address;origin.lat;origin.lng;destination_address;destination.lat;destination.lng;" +
      "recipient_name;window_start;window_end",
      `BR1-${tag};Praça da Sé;-23,5505;-46,6333;Av. Paulista, 1000;-23,5614;-46,6559;Ana;${tomorrow} 14:00;${tomorrow} 18:30`,
      `BR2-${tag};Rua A;-23,5505;-46,6333;Rua B;-23,5614;-46,6559;Bia;2026/11/29 14:00;`,
      `BR3-${tag};Rua C;-23,5505;-46,6333;Rua D;-23,5614;-46,6559;Caio;;31/02/2030 10:00`,
    ].join("\r\n");
    const res = await importCsv(a.owner, file);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.created).toBe(1);
    expect(res.body.errors.map((e: { row: number }) => e.row)).toEqual([3, 4]);
    for (const error of res.body.errors) {
      expect(error.detail).toContain("dd/mm/aaaa HH:mm");
      expect(error.items[0].msg).toContain("dd/mm/aaaa HH:mm");
    }
    const [created] = (await api(`/api/v1/deliveries?q=BR1-${tag}`, { token: a.owner.token })).body.items;
    const [day, month, year] = tomorrow.split("/");
    expect(Date.parse(created.window_start)).toBe(Date.parse(`${year}-${month}-${day}T14:00:00-03:00`));
    expect(Date.parse(created.window_end)).toBe(Date.parse(`${year}-${month}-${day}T18:30:00-03:00`));
    expect(created.origin).toEqual({ lat: -23.5505, lng: -46.6333 });
  });

  it("says what it reads when it cannot read a file", async () => {
    const res = await importCsv(a.owner, 'origin_address;destination_address\n"unclosed;x\n');
    expect(res.status).toBe(400);
    expect(res.body.detail[0].type).toBe("csv_unreadable");
    expect(res.body.detail[0].msg).toContain("separated by commas or by semicolons");
  });
});

describe("GET /api/v1/deliveries/import/template", () => {
  it("gives the import's columns and an example row that imports as it is, in both dialects", async () => {
    for (const [dialect, delimiter] of [["excel-br", ";"], ["csv", ","]]) {
      const file = await download(a.owner, `/api/v1/deliveries/import/template?dialect=${dialect}`);
      expect(file.status).toBe(200);
      expect(file.bytes[0] === 0xef, dialect).toBe(dialect === "excel-br");
      const rows = rowsOf(file.text, delimiter);
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0])).toContain("window_start");
      if (dialect === "excel-br") expect(rows[0].window_start).toMatch(/^\d{2}\/\d{2}\/\d{4} 14:00$/);
      const company = await createCompany(`Modelo ${dialect}`);
      const imported = await importCsv(company.owner, file.text);
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      expect(imported.body).toMatchObject({ created: 1, skipped: 0, errors: [] });
    }
    expect((await download(a.driver, "/api/v1/deliveries/import/template")).status).toBe(403);
  });
});

// What people type into the web app: the one number rule (web/src/lib/numbers.ts), dates (web/src/lib/dates.ts), and the Brazilian documents,
// phone numbers, CEPs and Pix keys (web/src/lib/brazil.ts), the address a New delivery end sends
// (web/src/features/deliveries/address.ts), and the language a browser gets (web/src/i18n/languages.ts), as pure functions. The browser journeys
// (tests/e2e/locale.spec.ts) type the same into the real forms.
import { describe, expect, it } from "vitest";
import {
  displayPhone,
  documentProblem,
  maskCep,
  maskDocument,
  maskPhone,
  maskPixKey,
  normalizePixKey,
  phoneE164,
  pixKeyProblem,
} from "../../web/src/lib/brazil.ts";
import { preferredLanguage } from "../../web/src/i18n/languages.ts";
import { emptyEnd, fullAddress } from "../../web/src/features/deliveries/address.ts";
import { parseDecimal } from "../../web/src/lib/numbers.ts";
import { CNPJ_TABLE } from "../support/cnpj-table.ts";
import { dayText, maskDate, maskDateTime, parseDateTime, parseDay } from "../../web/src/lib/dates.ts";
import { readWebhookDetail } from "../../web/src/features/integrations/webhook-detail.ts";
import { readFileSync } from "node:fs";

const PT = "." as const; // Portuguese writes thousands with a dot
const EN = "," as const;
const value = (text: string, group: "." | "," = PT, rules = {}) => {
  const result = parseDecimal(text, group, rules);
  return result.ok ? result.value : result.problem;
};

describe("parseDecimal", () => {
  it("reads a decimal comma and a decimal point in either language", () => {
    for (const group of [PT, EN]) {
      expect(value("5,50", group)).toBe(5.5);
      expect(value("5.50", group)).toBe(5.5);
      expect(value("0,8", group)).toBe(0.8);
      expect(value("0.125", group)).toBe(0.125);
      expect(value(",5", group)).toBe(0.5);
      expect(value("12", group)).toBe(12);
      expect(value("-23,5503", group)).toBe(-23.5503);
    }
  });

  it("reads the language's thousands separator where thousands go, and both separators together", () => {
    expect(value("1.000", PT)).toBe(1000);
    expect(value("1.000", EN)).toBe(1);
    expect(value("1,000", EN)).toBe(1000);
    expect(value("1,000", PT)).toBe(1);
    expect(value("1.234.567,89", PT)).toBe(1234567.89);
    expect(value("1,234,567.89", PT)).toBe(1234567.89);
    expect(value("1.234,56", EN)).toBe(1234.56);
    expect(value("1.000.000", PT)).toBe(1000000);
  });

  it("takes what Intl writes back, pasted: R$ and no-break spaces", () => {
    expect(value("R$\u00a01.234,56", PT)).toBe(1234.56);
    expect(value(" R$ 5,50 ", PT)).toBe(5.5);
    expect(value("R$1,234.56", EN)).toBe(1234.56);
  });

  it("reads a lone separator as the decimal one where there are no thousands (coordinates)", () => {
    expect(value("-46.633", PT, { grouping: false })).toBe(-46.633);
    expect(value("-46.633", PT)).toBe(-46633);
    expect(value("1.000,5", PT, { grouping: false })).toBe("number");
  });

  it("says what is wrong instead of answering NaN", () => {
    for (const text of ["abc", "5,5,0", "1.2.3", "12a", "--5", ",", "1,2.3", "5 0 0x", "1.23.456"]) {
      expect(value(text), text).toBe("number");
    }
    expect(value("", PT, { required: true })).toBe("required");
    expect(value("   ", PT)).toBe(null);
    expect(value("5,555", PT, { fractionDigits: 2 })).toBe("decimals");
    expect(value("0", PT, { positive: true })).toBe("positive");
    expect(value("-1", PT, { min: 0 })).toBe("min");
    expect(value("1,5", PT, { max: 1 })).toBe("max");
    expect(value("91", PT, { min: -90, max: 90 })).toBe("max");
  });
});

describe("documents", () => {
  it("masks a CPF, then a CNPJ from the 12th digit, as they are typed", () => {
    expect(maskDocument("529")).toBe("529");
    expect(maskDocument("5299822")).toBe("529.982.2");
    expect(maskDocument("52998224725")).toBe("529.982.247-25");
    expect(maskDocument("529.982.247-25")).toBe("529.982.247-25");
    expect(maskDocument("112223330001")).toBe("11.222.333/0001");
    expect(maskDocument("11222333000181999")).toBe("11.222.333/0001-81");
  });

  it("verifies check digits, with or without punctuation, and refuses one repeated digit", () => {
    expect(documentProblem("529.982.247-25")).toBe(null);
    expect(documentProblem("52998224725")).toBe(null);
    expect(documentProblem("529.982.247-26")).toBe("cpf");
    expect(documentProblem("111.111.111-11")).toBe("cpf");
    expect(documentProblem("11.222.333/0001-81")).toBe(null);
    expect(documentProblem("11222333000182")).toBe("cnpj");
    expect(documentProblem("00000000000000")).toBe("cnpj");
    expect(documentProblem("5299822472")).toBe("document");
  });

  it("masks an alphanumeric CNPJ as it is typed, lower case too, and checks it as the server does", () => {
    expect(maskDocument("12a")).toBe("12.A");
    expect(maskDocument("12abc34501de35")).toBe("12.ABC.345/01DE-35");
    expect(maskDocument("12.abc.345/01de-35")).toBe("12.ABC.345/01DE-35");
    // The table the library, the edge and the database agree on (tests/api/tenancy/cnpj-alphanumeric.test.ts): every
    // valid one passes here and is masked to its stored characters; a wrong check digit is a wrong CNPJ.
    for (const { input, stored } of CNPJ_TABLE.filter((c) => c.valid)) {
      expect(documentProblem(input), input).toBe(null);
      expect(maskDocument(input).replace(/[./-]/g, ""), input).toBe(stored);
    }
    expect(documentProblem("12ABC34501DE36")).toBe("cnpj");
    expect(documentProblem("12ABC34501DE3A")).toBe("cnpj");
    expect(documentProblem("12ABC34501DE3")).toBe("document");
  });
});

describe("phones", () => {
  it("masks as typed, with +55 too (another country's number as it is), and stores E.164", () => {
    expect(maskPhone("11")).toBe("(11");
    expect(maskPhone("11988887777")).toBe("(11) 98888-7777");
    expect(maskPhone("1133334444")).toBe("(11) 3333-4444");
    expect(maskPhone("+55 11 98888")).toBe("+55 (11) 98888");
    expect(maskPhone("+5511988887777")).toBe("+55 (11) 98888-7777");
    expect(maskPhone("+5")).toBe("+5");
    expect(maskPhone("+1 415 555 0100")).toBe("+1 415 555 0100");
    expect(phoneE164("+55 (11) 98888-7777")).toBe("+5511988887777");
    expect(phoneE164("(11) 98888-7777")).toBe("+5511988887777");
    expect(phoneE164("+55 11 98888-7777")).toBe("+5511988887777");
    expect(displayPhone("+5511988887777")).toBe("(11) 98888-7777");
    expect(displayPhone("not a phone")).toBe("not a phone");
  });
});

describe("Pix keys", () => {
  it("masks and checks a key by its type, and sends the form the Pix directory writes", () => {
    expect(maskPixKey("cpf", "52998224725")).toBe("529.982.247-25");
    expect(pixKeyProblem("cpf", "529.982.247-25")).toBe(null);
    expect(pixKeyProblem("cpf", "111.111.111-11")).toBe("cpf");
    expect(normalizePixKey("cpf", "529.982.247-25")).toBe("52998224725");
    expect(pixKeyProblem("cnpj", "11.222.333/0001-81")).toBe(null);
    expect(normalizePixKey("cnpj", "11.222.333/0001-81")).toBe("11222333000181");
    expect(maskPixKey("cnpj", "12abc34501de35")).toBe("12.ABC.345/01DE-35");
    expect(pixKeyProblem("cnpj", "12.abc.345/01de-35")).toBe(null);
    expect(pixKeyProblem("cnpj", "12ABC34501DE36")).toBe("cnpj");
    expect(normalizePixKey("cnpj", "12.abc.345/01de-35")).toBe("12ABC34501DE35");
    for (const phone of ["(11) 98888-7777", "11988887777", "+55 11 98888-7777"]) {
      expect(pixKeyProblem("phone", phone), phone).toBe(null);
      expect(normalizePixKey("phone", phone)).toBe("+5511988887777");
    }
    // A Pix phone key is a mobile number.
    expect(pixKeyProblem("phone", "(11) 3333-4444")).toBe("mobile");
    expect(pixKeyProblem("email", "Dora@Pix.Example.com")).toBe(null);
    expect(normalizePixKey("email", " Dora@Pix.Example.com ")).toBe("dora@pix.example.com");
    expect(pixKeyProblem("email", "dora@")).toBe("email");
    expect(pixKeyProblem("evp", "123E4567-E89B-12D3-A456-426614174000")).toBe(null);
    expect(normalizePixKey("evp", "123E4567-E89B-12D3-A456-426614174000")).toBe(
      "123e4567-e89b-12d3-a456-426614174000",
    );
    expect(pixKeyProblem("evp", "123e4567")).toBe("evp");
  });
});

describe("preferredLanguage", () => {
  it("is Brazilian Portuguese unless the browser prefers English or the person chose it", () => {
    expect(preferredLanguage(null, [])).toBe("pt-BR");
    expect(preferredLanguage(null, ["pt-BR", "en-US"])).toBe("pt-BR");
    expect(preferredLanguage(null, ["pt-PT"])).toBe("pt-BR");
    expect(preferredLanguage(null, ["en-US", "pt-BR"])).toBe("en");
    expect(preferredLanguage(null, ["fr-FR", "en-GB", "pt-BR"])).toBe("en");
    expect(preferredLanguage(null, ["fr-FR", "de"])).toBe("pt-BR");
    expect(preferredLanguage("en", ["pt-BR"])).toBe("en");
    expect(preferredLanguage("pt-BR", ["en-US"])).toBe("pt-BR");
    expect(preferredLanguage("klingon", ["en-US"])).toBe("en");
  });
});

describe("CEPs and the address an end sends", () => {
  it("masks a CEP as 00000-000 while it is typed", () => {
    expect(maskCep("0")).toBe("0");
    expect(maskCep("013102")).toBe("01310-2");
    expect(maskCep("01310200")).toBe("01310-200");
    expect(maskCep("01310-2009")).toBe("01310-200");
    expect(maskCep("ab01310c200")).toBe("01310-200");
  });

  it("sends a chosen place as it reads, and typed fields joined as Brazilians write an address", () => {
    const label = "Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200";
    expect(fullAddress({ ...emptyEnd, address: label, chosen: label, neighborhood: "Sé", city: "Rio" })).toBe(label);
    const typed = { ...emptyEnd, address: "Rua Augusta, 1500", neighborhood: "Consolação", city: "São Paulo - SP" };
    expect(fullAddress({ ...typed, cep: "01304-001" })).toBe(
      "Rua Augusta, 1500 - Consolação, São Paulo - SP, 01304-001",
    );
    expect(fullAddress(typed)).toBe("Rua Augusta, 1500 - Consolação, São Paulo - SP");
    // What the address already says is not said twice; a chosen place edited afterwards is typed text.
    expect(fullAddress({ ...typed, address: "Rua Augusta, 1500, Consolação" })).toBe(
      "Rua Augusta, 1500, Consolação, São Paulo - SP",
    );
    expect(fullAddress({ ...typed, chosen: "Rua Augusta - Consolação" })).toBe(
      "Rua Augusta, 1500 - Consolação, São Paulo - SP",
    );
    expect(fullAddress({ ...emptyEnd, address: "  Praça da Sé, São Paulo " })).toBe("Praça da Sé, São Paulo");
  });
});

describe("dates typed dd/mm/aaaa and dd/mm/aaaa HH:mm", () => {
  it("masks a day and a moment as they are typed", () => {
    expect(maskDate("3")).toBe("3");
    expect(maskDate("311")).toBe("31/1");
    expect(maskDate("31122026")).toBe("31/12/2026");
    expect(maskDate("31/12/20269")).toBe("31/12/2026");
    expect(maskDateTime("311220261")).toBe("31/12/2026 1");
    expect(maskDateTime("3112202614")).toBe("31/12/2026 14");
    expect(maskDateTime("31/12/2026 14:305")).toBe("31/12/2026 14:30");
  });

  it("reads a day that exists, and only in full", () => {
    expect(parseDay("31/12/2026")).toBe("2026-12-31");
    expect(parseDay(" 29/02/2028 ")).toBe("2028-02-29");
    for (const text of ["29/02/2026", "31/04/2026", "00/01/2026", "01/13/2026", "1/1/2026", "01/01/26", "2026-01-01"]) {
      expect(parseDay(text), text).toBe(null);
    }
    expect(dayText("2026-12-31")).toBe("31/12/2026");
  });

  it("reads a moment on the company's clocks, whatever the browser's zone", () => {
    // São Paulo is 3 hours behind UTC (no daylight saving time since 2019).
    expect(parseDateTime("31/12/2026 14:30", "America/Sao_Paulo")).toBe("2026-12-31T17:30:00.000Z");
    expect(parseDateTime("01/01/2027 23:59", "America/Sao_Paulo")).toBe("2027-01-02T02:59:00.000Z");
    expect(parseDateTime("15/01/2026 09:00", "America/Manaus")).toBe("2026-01-15T13:00:00.000Z");
    // Across a clock change: Lisbon is UTC+1 in summer, UTC in winter.
    expect(parseDateTime("01/07/2026 12:00", "Europe/Lisbon")).toBe("2026-07-01T11:00:00.000Z");
    expect(parseDateTime("01/12/2026 12:00", "Europe/Lisbon")).toBe("2026-12-01T12:00:00.000Z");
    // 01:30 never happens on 29/03/2026 in Lisbon (01:00 becomes 02:00): read with the offset before the change.
    expect(parseDateTime("29/03/2026 01:30", "Europe/Lisbon")).toBe("2026-03-29T01:30:00.000Z");
    for (const text of ["31/12/2026 24:00", "31/12/2026 14:60", "31/02/2026 10:00", "31/12/2026", "31/12/2026 9:00"]) {
      expect(parseDateTime(text, "America/Sao_Paulo"), text).toBe(null);
    }
  });
});

describe("the webhook log's audit notes, read to be said in words", () => {
  // [a note as the platform writes it, what it is read as, the file that writes it, the fixed text of its format there]
  const NOTES: [string, string, Record<string, string>, string, string][] = [
    [
      "delivery pending, payment received",
      "deliveryNow",
      { status: "pending", payment: "received" },
      "supabase/schemas/06_money.sql",
      "'delivery %s, payment %s'",
    ],
    [
      "PAYMENT_RECEIVED already applied",
      "alreadyApplied",
      { event: "PAYMENT_RECEIVED" },
      "supabase/schemas/06_money.sql",
      "'%s already applied'",
    ],
    [
      "PAYMENT_OVERDUE does not apply to a delivery pending with payment received",
      "paymentDoesNotApply",
      { event: "PAYMENT_OVERDUE", status: "pending", payment: "received" },
      "supabase/schemas/06_money.sql",
      "'%s does not apply to a delivery %s with payment %s'",
    ],
    [
      "no delivery for this payment",
      "noSuchDelivery",
      {},
      "supabase/schemas/06_money.sql",
      "'no delivery for this payment'",
    ],
    [
      "delivery is not paid by Pix",
      "notPix",
      {},
      "supabase/schemas/06_money.sql",
      "'delivery is not paid by Pix'",
    ],
    ["event not handled", "notHandled", {}, "supabase/schemas/06_money.sql", "'event not handled'"],
    [
      "withdrawal failed",
      "withdrawalNow",
      { status: "failed" },
      "supabase/schemas/06_money.sql",
      "format('withdrawal %s'",
    ],
    [
      "withdrawal already completed",
      "withdrawalAlready",
      { status: "completed" },
      "supabase/schemas/06_money.sql",
      "'withdrawal already %s'",
    ],
    [
      "withdrawal is already completed; the gateway now reports TRANSFER_FAILED: left as it is for review",
      "withdrawalForReview",
      { status: "completed", event: "TRANSFER_FAILED" },
      "supabase/schemas/06_money.sql",
      "'withdrawal is already %s; the gateway now reports %s: left as it is for review'",
    ],
    [
      "withdrawal completed after it was recorded failed (no_transfer): the gateway made the transfer, debited now",
      "withdrawalLateSuccess",
      { kind: "no_transfer" },
      "supabase/schemas/06_money.sql",
      "'withdrawal completed after it was recorded failed (%s): ",
    ],
    [
      "PAYMENT_RECEIVED is not a transfer event",
      "notHandled",
      {},
      "supabase/schemas/06_money.sql",
      "'%s is not a transfer event'",
    ],
    ["no such withdrawal", "noSuchWithdrawal", {}, "supabase/schemas/06_money.sql", "'no such withdrawal'"],
    [
      "the transfer is not this withdrawal's",
      "notOurs",
      {},
      "supabase/schemas/06_money.sql",
      "'the transfer is not this withdrawal''s'",
    ],
    [
      "the transfer is not settled yet",
      "notSettled",
      { object: "transfer" },
      "functions/gateway-webhook/settle.ts",
      "`the ${kind} is not settled yet`",
    ],
    [
      "the transfer exists and is pending: attached to the withdrawal",
      "transferAttached",
      {},
      "functions/gateway-webhook/settle.ts",
      "'the transfer exists and is pending: attached to the withdrawal'",
    ],
    [
      "the gateway has no payment pay_123",
      "gatewayHasNone",
      { object: "payment" },
      "functions/gateway-webhook/settle.ts",
      "the gateway has no ${claim.kind} ${",
    ],
    ["no such delivery", "noSuchDelivery", {}, "functions/gateway-webhook/settle.ts", "no such ${noun(claim.kind)}"],
    [
      "the payment has no gateway id to check",
      "noGatewayId",
      { object: "payment" },
      "functions/gateway-webhook/settle.ts",
      "the ${claim.kind} has no gateway id to check",
    ],
    [
      "the gateway's transfer is not this withdrawal's",
      "notOurs",
      {},
      "functions/gateway-webhook/settle.ts",
      "the gateway's ${claim.kind} is not this ${noun(claim.kind)}'s",
    ],
    [
      "could not check the transfer with the gateway: unreachable",
      "couldNotCheck",
      { object: "transfer" },
      "functions/gateway-webhook/settle.ts",
      "`could not check the ${kind} with the gateway: ",
    ],
    [
      "this object was checked with the gateway less than a minute ago",
      "tooSoon",
      {},
      "functions/gateway-webhook/settle.ts",
      '"this object was checked with the gateway less than a minute ago"',
    ],
    [
      "the company has no gateway configuration to check the event with",
      "noGatewayConfig",
      {},
      "functions/gateway-webhook/settle.ts",
      '"the company has no gateway configuration to check the event with"',
    ],
    [
      "event PAYMENT_CREATED is not handled",
      "notHandled",
      {},
      "functions/gateway-webhook/webhook.ts",
      "`event ${event.event} is not handled`",
    ],
    ["invalid signature", "badSignature", {}, "functions/gateway-webhook/webhook.ts", '"invalid signature"'],
    [
      "missing gateway-signature",
      "noSignature",
      {},
      "functions/gateway-webhook/webhook.ts",
      '"missing gateway-signature"',
    ],
    [
      "no webhook secret is configured for this endpoint",
      "noSecret",
      {},
      "functions/gateway-webhook/webhook.ts",
      '"no webhook secret is configured for this endpoint"',
    ],
    ["unknown company", "unknownCompany", {}, "functions/gateway-webhook/webhook.ts", '"unknown company"'],
    [
      "the event could not be processed in time; deliver it again",
      "tooSlow",
      {},
      "functions/gateway-webhook/webhook.ts",
      '"the event could not be processed in time; deliver it again"',
    ],
  ];

  it.each(NOTES)("%j is read as %s", (note, name, values, file, fragment) => {
    // The platform still writes the note this way: a changed note fails here, not silently in the panel.
    expect(readFileSync(file, "utf8")).toContain(fragment);
    expect(readWebhookDetail(note)).toEqual({ via: [], gatewayStatus: null, outcome: { name, values } });
  });

  it("reads how the event was checked before what was done, and leaves a note it does not know unread", () => {
    expect(readFileSync("functions/gateway-webhook/settle.ts", "utf8")).toContain(
      '`${prefix}checked with the gateway (${object.status}${event ? ` = ${event}` : ""}): `',
    );
    expect(readFileSync("functions/gateway-webhook/webhook.ts", "utf8")).toContain('unsigned ? "unsigned, "');
    expect(readWebhookDetail("unsigned, checked with the gateway (FAILED = TRANSFER_FAILED): withdrawal failed"))
      .toEqual({
        via: ["unsigned"],
        gatewayStatus: "FAILED",
        outcome: { name: "withdrawalNow", values: { status: "failed" } },
      });
    expect(readWebhookDetail("reconciliation, checked with the gateway (PENDING): the transfer is not settled yet"))
      .toEqual({
        via: ["reconciliation"],
        gatewayStatus: "PENDING",
        outcome: { name: "notSettled", values: { object: "transfer" } },
      });
    expect(readWebhookDetail("something new the platform says")).toEqual({
      via: [],
      gatewayStatus: null,
      outcome: null,
    });
  });
});

// One table of CNPJs, numeric and alphanumeric (since July 2026: 12 digits or upper-case letters, then 2 check digits
// on the characters' ASCII codes minus 48), valid and not, with the form each is stored in. Tried against both
// @brazilian-utils's isValidCnpj(x, { version: 2 }) and the database's private.cnpj_valid (tests/cnpj.test.ts), so
// the edge and SQL can never disagree on one of them.
export interface CnpjCase {
  input: string;
  valid: boolean;
  /** Upper case without punctuation: how a valid one is stored. */
  stored?: string;
  why: string;
}

export const CNPJ_TABLE: CnpjCase[] = [
  { input: "12ABC34501DE35", valid: true, stored: "12ABC34501DE35", why: "alphanumeric, bare" },
  { input: "12.ABC.345/01DE-35", valid: true, stored: "12ABC34501DE35", why: "alphanumeric, punctuated" },
  { input: "12abc34501de35", valid: true, stored: "12ABC34501DE35", why: "alphanumeric, lower case" },
  { input: "12.ABC.345/01de-35", valid: true, stored: "12ABC34501DE35", why: "mixed case, punctuated" },
  { input: " 12.ABC.345/01DE-35 ", valid: true, stored: "12ABC34501DE35", why: "spaces around" },
  { input: "12 ABC 345 01DE 35", valid: true, stored: "12ABC34501DE35", why: "spaces between the groups" },
  { input: "12.ABC.345.01DE.35", valid: true, stored: "12ABC34501DE35", why: "dots for every sign" },
  { input: "Q0SLFMBD7VX439", valid: true, stored: "Q0SLFMBD7VX439", why: "another alphanumeric" },
  { input: "AB.12C.D34/EF56-02", valid: true, stored: "AB12CD34EF5602", why: "letters first" },
  { input: "9X8Y7Z6W5V4U56", valid: true, stored: "9X8Y7Z6W5V4U56", why: "every other character a letter" },
  { input: "00.000.000/000A-04", valid: true, stored: "00000000000A04", why: "one letter among zeros" },
  {
    input: "AAAAAAAAAAAA45",
    valid: true,
    stored: "AAAAAAAAAAAA45",
    why: "one letter repeated: no reserved alphanumeric",
  },
  { input: "ZZZZZZZZZZZZ62", valid: true, stored: "ZZZZZZZZZZZZ62", why: "Z is worth 42" },
  { input: "11.222.333/0001-81", valid: true, stored: "11222333000181", why: "numeric, punctuated" },
  { input: "11222333000181", valid: true, stored: "11222333000181", why: "numeric, bare" },
  { input: "12ABC34501DE36", valid: false, why: "a wrong check digit" },
  { input: "12ABC34501DE3A", valid: false, why: "a letter as a check digit" },
  { input: "12ABC34501DE3", valid: false, why: "13 characters" },
  { input: "12ABC34501DE355", valid: false, why: "15 characters" },
  { input: "12ABC34501D E35", valid: false, why: "a space inside a group" },
  { input: "12ÇBC34501DE35", valid: false, why: "a letter outside A-Z" },
  { input: "12_ABC_345_01DE_35", valid: false, why: "an underscore between the groups" },
  { input: "12.ABC.345/01DE-35x", valid: false, why: "something after the check digits" },
  { input: "11222333000182", valid: false, why: "numeric, a wrong check digit" },
  { input: "11.111.111/1111-11", valid: false, why: "numeric, one digit repeated" },
  { input: "00000000000000", valid: false, why: "numeric zeros" },
  { input: "", valid: false, why: "empty" },
];

/** A valid alphanumeric CNPJ of its own (random base, right check digits), for rows that must not repeat. */
export function newAlphanumericCnpj(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let base = "";
  for (let i = 0; i < 12; i++) base += alphabet[Math.floor(Math.random() * alphabet.length)];
  if (!/[A-Z]/.test(base)) base = `A${base.slice(1)}`;
  const digit = (text: string, weights: number[]) => {
    const total = weights.reduce((sum, w, i) => sum + (text.charCodeAt(i) - 48) * w, 0);
    return total % 11 < 2 ? 0 : 11 - (total % 11);
  };
  const first = digit(base, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${base}${first}${digit(`${base}${first}`, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])}`;
}

// Brazilian documents and Pix keys at the edge (docs/contract.md, Brazilian documents and Pix keys), with
// @brazilian-utils/brazilian-utils, as the web app checks them: the rules of supabase/schemas/01_brazil.sql, which
// has the last word. Here a mistake is a 400 naming the field, and what passes goes on in its stored form (a
// document's digits (an alphanumeric CNPJ's letters upper case), a phone key in E.164, an e-mail or a random key in
// lowercase). A CNPJ is numeric or, since July 2026, alphanumeric: isValidCnpj with `version: 2` takes both.
import { isValidCnpj, isValidCpf, isValidMobilePhone, parsePhone } from "@brazilian-utils/brazilian-utils";
import { z } from "zod";
import { UUID_PATTERN } from "../_shared/schemas.ts";

const digitsOf = (text: string) => text.replace(/\D/g, "");
/** A document's stored form: its digits and upper-case letters, without punctuation. */
const charactersOf = (text: string) => text.toUpperCase().replace(/[^0-9A-Z]/g, "");

/** Whether the text is a CNPJ, numeric or alphanumeric (12 digits or letters and 2 check digits), lower case too. */
export const isCnpj = (text: string) => isValidCnpj(text, { version: 2 });

/** A CNPJ in its stored form (upper case, no punctuation), or null when it is not one. */
export const cnpjCharacters = (text: string): string | null => isCnpj(text) ? charactersOf(text) : null;

/** A CPF or CNPJ (punctuated or not, check digits right, not one digit repeated) as stored, else null. */
export function documentDigits(text: string): string | null {
  return isValidCpf(text) ? digitsOf(text) : cnpjCharacters(text);
}

const CNPJ_RULE = "a CNPJ: 14 characters, the first 12 digits or letters (12.ABC.345/01DE-35 since July 2026) and " +
  "2 check digits, with or without punctuation, lower case accepted";

/** A CPF or CNPJ as people type it; passed on in its stored form. */
export const Document = z.string().trim().max(30)
  .refine((text) => documentDigits(text) !== null, {
    message: "must be a valid CPF (11 digits) or CNPJ (14 characters, digits or letters): check digits verified, " +
      "one repeated digit refused",
  })
  .transform((text) => documentDigits(text)!)
  .describe(
    "The client's CPF (11 digits) or CNPJ (14 characters: 12 digits or upper-case letters, then 2 check digits), " +
      "with or without its punctuation (529.982.247-25, 11.222.333/0001-81, 12.ABC.345/01DE-35), lower case " +
      "accepted; its check digits are verified and numbers of one repeated digit (111.111.111-11) refused. Stored " +
      "upper case without punctuation.",
  );

/** A company's own CNPJ (numeric or alphanumeric); passed on in its stored form. */
export const Cnpj = z.string().trim().max(30)
  .refine((text) => isCnpj(text), { message: `must be ${CNPJ_RULE}; check digits verified` })
  .transform((text) => charactersOf(text))
  .describe(`The company's CNPJ: ${CNPJ_RULE}. Stored upper case without punctuation.`);

export const PixKeyType = z.enum(["cpf", "cnpj", "email", "phone", "evp"]);
export type PixKeyType = z.infer<typeof PixKeyType>;

/** Digits and the signs people write between them: (11) 98888-7777, +55 11 98888-7777. */
const PHONE_CHARACTERS = /^[\d\s().+-]+$/;
const EMAIL = /^(?=.{1,77}$)[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** Each Pix key type: what it must be, and the key in the form the Pix directory writes it (null: not one). */
export const PIX_KEYS: Record<PixKeyType, { description: string; normalize(key: string): string | null }> = {
  cpf: {
    description: "a CPF: 11 digits, with or without punctuation, its check digits right",
    normalize: (key) => isValidCpf(key) ? digitsOf(key) : null,
  },
  cnpj: {
    description: `${CNPJ_RULE}, its check digits right (stored upper case without punctuation)`,
    normalize: cnpjCharacters,
  },
  phone: {
    description: "a Brazilian mobile number with its area code, e.g. (11) 98888-7777 or +55 11 98888-7777",
    normalize: (key) => PHONE_CHARACTERS.test(key) && isValidMobilePhone(key) ? `+55${parsePhone(key)}` : null,
  },
  email: {
    description: "an e-mail address of at most 77 characters",
    normalize: (key) => EMAIL.test(key) ? key.toLowerCase() : null,
  },
  evp: {
    description: "a random key (UUID)",
    normalize: (key) => UUID_PATTERN.test(key) ? key.toLowerCase() : null,
  },
};

/** The key in its stored form, or null when it is not a key of its type. */
export const normalizePixKey = (type: PixKeyType, key: string): string | null => PIX_KEYS[type].normalize(key.trim());

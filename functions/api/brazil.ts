// Brazilian documents and Pix keys at the edge (docs/contract.md, Brazilian documents and Pix keys), with
// @brazilian-utils/brazilian-utils, as the web app checks them: the rules of supabase/schemas/02_brazil.sql, which
// has the last word. Here a mistake is a 400 naming the field, and what passes goes on in its stored form (a
// document's digits, a phone key in E.164, an e-mail or a random key in lowercase).
import { isValidCnpj, isValidCpf, isValidMobilePhone, parsePhone } from "@brazilian-utils/brazilian-utils";
import { z } from "zod";
import { UUID_PATTERN } from "../_shared/schemas.ts";

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** The digits of a CPF or CNPJ (punctuated or not, check digits right, not one digit repeated), else null. */
export function documentDigits(text: string): string | null {
  return isValidCpf(text) || isValidCnpj(text) ? digitsOf(text) : null;
}

/** A CPF or CNPJ as people type it; passed on as its digits. */
export const Document = z.string().trim().max(30)
  .refine((text) => documentDigits(text) !== null, {
    message: "must be a valid CPF (11 digits) or CNPJ (14 digits): check digits verified, one repeated digit refused",
  })
  .transform(digitsOf)
  .describe(
    "The client's CPF (11 digits) or CNPJ (14 digits), with or without its punctuation (529.982.247-25, " +
      "11.222.333/0001-81); its check digits are verified and numbers of one repeated digit (111.111.111-11) " +
      "refused. Stored as digits.",
  );

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
    description: "a CNPJ: 14 digits, with or without punctuation, its check digits right",
    normalize: (key) => isValidCnpj(key) ? digitsOf(key) : null,
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

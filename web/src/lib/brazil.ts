// Brazilian documents, phone numbers and Pix keys on the client, with @brazilian-utils: masks as people type,
// the check digits, and the canonical form sent to the API. The server holds the same rules and has the last word.
import {
  formatCep,
  formatCnpj,
  formatCpf,
  formatPhone,
  isValidCnpj,
  isValidCpf,
  isValidEmail,
  isValidMobilePhone,
  isValidPhone,
  parsePhone,
} from "@brazilian-utils/brazilian-utils";

export const digitsOf = (text: string) => text.replace(/\D/g, "");
/** A document's characters as stored: digits and upper-case letters (an alphanumeric CNPJ's), no punctuation. */
export const documentCharacters = (text: string) => text.toUpperCase().replace(/[^0-9A-Z]/g, "");
/** A CNPJ, numeric or alphanumeric (since July 2026: 12 digits or letters, then 2 check digits). */
export const isCnpj = (text: string) => isValidCnpj(text, { version: 2 });
/** A CNPJ as it is typed, letters upper case: 12.ABC.345/01DE-35. */
export const maskCnpj = (text: string) => formatCnpj(documentCharacters(text).slice(0, 14), { version: 2 });

/** 01310-200 as it is typed (8 digits at most). */
export const maskCep = (text: string) => formatCep(digitsOf(text).slice(0, 8));

/** A CPF while there are up to 11 digits, a CNPJ from the 12th character or the first letter. */
export function maskDocument(text: string): string {
  const characters = documentCharacters(text).slice(0, 14);
  return characters.length <= 11 && /^\d*$/.test(characters) ? formatCpf(characters) : maskCnpj(characters);
}

export type DocumentProblem = "document" | "cpf" | "cnpj";
/** Why a CPF or CNPJ cannot be right (its length, its check digits, one digit repeated), or null. */
export function documentProblem(text: string): DocumentProblem | null {
  const characters = documentCharacters(text);
  if (characters.length === 11 && /^\d+$/.test(characters)) return isValidCpf(characters) ? null : "cpf";
  if (characters.length === 14) return isCnpj(characters) ? null : "cnpj";
  return "document";
}

/**
 * (11) 98888-7777 as it is typed; with Brazil's country code, +55 (11) 98888-7777. Another country's number (or a
 * `+` and a code still being typed) is left as typed.
 */
export function maskPhone(text: string): string {
  if (text.trimStart().startsWith("+")) {
    const digits = digitsOf(text);
    if (!digits.startsWith("55")) return text;
    const national = digits.slice(2, 13);
    return national ? `+55 ${formatPhone(national, { mask: "nanp" })}` : "+55";
  }
  const digits = digitsOf(text).slice(0, 11);
  return digits ? formatPhone(digits, { mask: "nanp" }) : "";
}

/** A Brazilian mobile or landline number with its area code, typed any usual way. */
export const isPhone = (text: string) => isValidPhone(text.trim());
/** +5511988887777: how the API stores a phone number. */
export const phoneE164 = (text: string) => `+55${parsePhone(text.trim())}`;
/** A stored number as Brazilians write it, (11) 98888-7777; anything else as it is. */
export const displayPhone = (stored: string | null | undefined) =>
  !stored ? "" : isValidPhone(stored) ? formatPhone(parsePhone(stored), { mask: "nanp" }) : stored;

export type PixKeyType = "cpf" | "cnpj" | "email" | "phone" | "evp";
export type PixKeyProblem = "cpf" | "cnpj" | "mobile" | "email" | "evp";
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Pix key field's mask for its type: CPF and CNPJ punctuated, phone numbers as above, the others as typed. */
export function maskPixKey(type: PixKeyType, text: string): string {
  switch (type) {
    case "cpf":
      return formatCpf(digitsOf(text).slice(0, 11));
    case "cnpj":
      return maskCnpj(text);
    case "phone":
      return maskPhone(text);
    default:
      return text;
  }
}

/** Why `text` is not a Pix key of `type`, or null. A phone key is a mobile number (the Pix rules say so). */
export function pixKeyProblem(type: PixKeyType, text: string): PixKeyProblem | null {
  const key = text.trim();
  switch (type) {
    case "cpf":
      return digitsOf(key).length === 11 && isValidCpf(key) ? null : "cpf";
    case "cnpj":
      return isCnpj(key) ? null : "cnpj";
    case "phone":
      return isValidMobilePhone(key) ? null : "mobile";
    case "email":
      return key.length <= 77 && isValidEmail(key) ? null : "email";
    case "evp":
      return EVP.test(key) ? null : "evp";
  }
}

/** The key as the Pix directory writes it: digits (a CNPJ's letters upper case), +55 and the number, a lowercase e-mail or random key. */
export function normalizePixKey(type: PixKeyType, text: string): string {
  const key = text.trim();
  switch (type) {
    case "cpf":
      return digitsOf(key);
    case "cnpj":
      return documentCharacters(key);
    case "phone":
      return phoneE164(key);
    default:
      return key.toLowerCase();
  }
}

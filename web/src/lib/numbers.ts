// Reading a number a person typed. One rule for every form: a decimal comma is always accepted (5,50), and so is a
// decimal point (5.50). The language's thousands separator (`.` in Portuguese, `,` in English) is read as one when
// it stands where thousands go: `1.000` is one thousand in Portuguese and `1,000` in English; `1.234,56` and
// `1,234.56` are read in either language. A value this cannot read is a problem to show, never a NaN.
// (Intl has no parser, and a strict locale parser reads a Portuguese `5.50` as 550: the reason this is ours.)

export interface DecimalRules {
  /** Refuse an empty field (an optional one reads as null). */
  required?: boolean;
  min?: number;
  max?: number;
  /** Greater than zero. */
  positive?: boolean;
  /** At most this many digits after the decimal separator (2 for money). */
  fractionDigits?: number;
  /** Coordinates and shares have no thousands: a lone separator is then always the decimal one. */
  grouping?: boolean;
}

export type DecimalProblem = "required" | "number" | "decimals" | "min" | "max" | "positive";
export type DecimalResult = { ok: true; value: number | null } | { ok: false; problem: DecimalProblem };

/** `text` as a number under `rules`; `group` is the language's thousands separator. */
export function parseDecimal(text: string, group: "." | ",", rules: DecimalRules = {}): DecimalResult {
  // Spaces (also the no-break ones Intl writes) and a currency sign pasted with the amount are not part of it.
  let s = text.replace(/[\s\u00a0\u202f]/g, "").replace(/^R\$/i, "").replace(/^([+-])R\$/i, "$1");
  if (s === "") return rules.required ? { ok: false, problem: "required" } : { ok: true, value: null };
  let sign = "";
  if (s[0] === "-" || s[0] === "+" || s[0] === "\u2212") {
    sign = s[0] === "+" ? "" : "-";
    s = s.slice(1);
  }
  if (!/^[\d.,]+$/.test(s) || !/\d/.test(s)) return { ok: false, problem: "number" };

  const dots = s.split(".").length - 1;
  const commas = s.split(",").length - 1;
  let integer: string;
  let fraction = "";
  if (dots > 0 && commas > 0) {
    // Both: the last one is the decimal separator, and the other can only be the thousands one.
    const decimal = s.lastIndexOf(".") > s.lastIndexOf(",") ? "." : ",";
    const thousands = decimal === "." ? "," : ".";
    const [head, tail, ...more] = s.split(decimal);
    if (more.length || rules.grouping === false || !grouped(head, thousands)) return { ok: false, problem: "number" };
    integer = head.split(thousands).join("");
    fraction = tail;
  } else if (dots + commas === 0) {
    integer = s;
  } else {
    const separator = dots ? "." : ",";
    const pieces = s.split(separator);
    const asThousands = rules.grouping !== false && separator === group && grouped(s, separator);
    if (pieces.length > 2 || asThousands) {
      // Several of one separator can only be thousands (1.000.000).
      if (!asThousands) return { ok: false, problem: "number" };
      integer = pieces.join("");
    } else {
      [integer, fraction] = pieces;
    }
  }
  if (integer === "" && fraction === "") return { ok: false, problem: "number" };
  if (fraction.length > (rules.fractionDigits ?? Infinity)) return { ok: false, problem: "decimals" };

  const value = Number(`${sign}${integer || "0"}.${fraction || "0"}`);
  if (!Number.isFinite(value)) return { ok: false, problem: "number" };
  if (rules.positive && !(value > 0)) return { ok: false, problem: "positive" };
  if (rules.min != null && value < rules.min) return { ok: false, problem: "min" };
  if (rules.max != null && value > rules.max) return { ok: false, problem: "max" };
  return { ok: true, value: value === 0 ? 0 : value };
}

/** Digits grouped in threes by `separator` after a first group of one to three digits (not led by 0). */
function grouped(text: string, separator: string): boolean {
  const pieces = text.split(separator);
  return pieces.length > 1 && /^[1-9]\d{0,2}$/.test(pieces[0]) &&
    pieces.slice(1).every((p) => /^\d{3}$/.test(p));
}

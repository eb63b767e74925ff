// Small shared pieces: labelled fields (with the sentence shown under one the app cannot read), masked and number
// fields, error and status notes, pagination, the language choice, the question before a destructive action.
import {
  type ChangeEvent,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
} from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api/errors.ts";
import { groupSeparator, timeZone } from "../format.ts";
import { chooseLanguage, i18n, type Language, LANGUAGES } from "../i18n/index.ts";
import { dayText, maskDate, maskDateTime, parseDateTime, parseDay } from "../lib/dates.ts";
import { type DecimalResult, type DecimalRules, parseDecimal } from "../lib/numbers.ts";

type FieldProps = {
  label: string;
  /** What the value means, in words, under the field (read with it by screen readers). */
  hint?: string;
  /** What is wrong with the value, shown under the field once the person has left it or tried to submit. */
  problem?: string | null;
  /** Show the problem now (the form was submitted). */
  showProblem?: boolean;
} & InputHTMLAttributes<HTMLInputElement>;

export function Field({ label, hint, problem, showProblem, ...input }: FieldProps) {
  const id = useId();
  const [left, setLeft] = useState(false);
  const shown = problem && (left || showProblem) ? problem : null;
  const described = [shown && `${id}-problem`, hint && `${id}-hint`].filter(Boolean).join(" ");
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        {...input}
        aria-invalid={shown ? true : undefined}
        aria-describedby={described || undefined}
        onBlur={(e) => {
          setLeft(true);
          input.onBlur?.(e);
        }}
      />
      {shown && <p id={`${id}-problem`} className="field-problem">{shown}</p>}
      {hint && <p id={`${id}-hint`} className="hint field-hint">{hint}</p>}
    </div>
  );
}

/**
 * A field whose value is masked as it is typed (CPF, CNPJ, phone): the caret stays after the same digit, and
 * deleting a mask character deletes the digit before it.
 */
export function MaskedField(
  { mask, onValue, value, ...props }: Omit<FieldProps, "onChange" | "value"> & {
    value: string;
    mask: (text: string) => string;
    onValue: (masked: string) => void;
  },
) {
  const caret = useRef<{ input: HTMLInputElement; at: number } | null>(null);
  useLayoutEffect(() => {
    const pending = caret.current;
    caret.current = null;
    if (pending && document.activeElement === pending.input) pending.input.setSelectionRange(pending.at, pending.at);
  });
  function change(e: ChangeEvent<HTMLInputElement>) {
    let raw = e.target.value;
    const at = e.target.selectionStart ?? raw.length;
    const count = (text: string) => text.replace(/\D/g, "").length;
    let digitsBefore = count(raw.slice(0, at));
    // A mask character was deleted: delete the digit it stood after.
    if (raw.length < value.length && count(raw) === count(value) && digitsBefore > 0 && mask(raw) !== raw) {
      let seen = 0;
      const cut = [...raw].findIndex((c) => /\d/.test(c) && ++seen === digitsBefore);
      raw = raw.slice(0, cut) + raw.slice(cut + 1);
      digitsBefore -= 1;
    }
    const masked = mask(raw);
    onValue(masked);
    if (masked === raw) return;
    let position = 0;
    for (let seen = 0; position < masked.length && seen < digitsBefore; position++) {
      if (/\d/.test(masked[position])) seen++;
    }
    caret.current = { input: e.target, at: position };
  }
  return <Field {...props} value={value} onChange={change} />;
}

type TypedDateProps = Omit<FieldProps, "value" | "onChange" | "problem">;

/**
 * A day typed dd/mm/aaaa (src/lib/dates.ts), in every language. `day` is YYYY-MM-DD ("" for none); `onDay` gets the
 * day typed, "" when the field is emptied, and null while what is typed names no day (a sentence says so).
 */
export function DateField(
  { day, onDay, ...props }: TypedDateProps & { day: string | null; onDay: (day: string | null) => void },
) {
  const { t } = useTranslation();
  const [text, setText] = useState(day ? dayText(day) : "");
  // A day set from outside (the address, "clear filters") is shown; the text being typed is left alone, so only a
  // change of `day` runs this.
  useEffect(() => {
    if (day !== null && day !== (parseDay(text) ?? "")) setText(day ? dayText(day) : "");
  }, [day]);
  const parsed = text === "" ? "" : parseDay(text);
  return (
    <MaskedField
      inputMode="numeric"
      autoComplete="off"
      placeholder={t("input.datePlaceholder")}
      {...props}
      value={text}
      mask={maskDate}
      onValue={(next) => {
        setText(next);
        onDay(next === "" ? "" : parseDay(next));
      }}
      problem={parsed === null ? t("input.date") : parsed === "" && props.required ? t("input.required") : null}
    />
  );
}

/**
 * A moment typed dd/mm/aaaa HH:mm (24 h) on the company's clocks (src/format.ts's time zone). `onInstant` gets it as
 * an ISO 8601 instant, "" when the field is emptied, and null while what is typed names no moment.
 */
export function DateTimeField(
  { onInstant, problem, ...props }: TypedDateProps & {
    onInstant: (instant: string | null) => void;
    /** What is wrong with a moment that is one (a window ending in the past). */
    problem?: string | null;
  },
) {
  const { t } = useTranslation();
  const [text, setText] = useState("");
  const parsed = text === "" ? "" : parseDateTime(text, timeZone());
  return (
    <MaskedField
      inputMode="numeric"
      autoComplete="off"
      placeholder={t("input.dateTimePlaceholder")}
      {...props}
      value={text}
      mask={maskDateTime}
      onValue={(next) => {
        setText(next);
        onInstant(next === "" ? "" : parseDateTime(next, timeZone()));
      }}
      problem={parsed === null ? t("input.dateTime") : problem}
    />
  );
}

/** Reads a typed number with the app's one rule (lib/numbers.ts) in the language in use. */
export const readDecimal = (text: string, rules: DecimalRules = {}): DecimalResult =>
  parseDecimal(text, groupSeparator(), rules);

/** The sentence for a number that cannot be read, or null. */
export function decimalProblem(result: DecimalResult, rules: DecimalRules): string | null {
  if (result.ok) return null;
  const number = (n: number) => n.toLocaleString(i18n.language);
  switch (result.problem) {
    case "decimals":
      return rules.fractionDigits === 0
        ? i18n.t("input.whole")
        : i18n.t("input.decimals", { count: rules.fractionDigits ?? 0 });
    case "min":
      return i18n.t("input.min", { min: number(rules.min ?? 0) });
    case "max":
      return i18n.t("input.max", { max: number(rules.max ?? 0) });
    default:
      return i18n.t(`input.${result.problem}`);
  }
}

/** A number field: decimal commas welcome, and a sentence under it when what is typed is not a number it takes. */
export function DecimalField(
  { rules, value, ...props }: Omit<FieldProps, "problem"> & { value: string; rules: DecimalRules },
) {
  return (
    <Field
      inputMode="decimal"
      autoComplete="off"
      {...props}
      value={value}
      required={rules.required}
      problem={decimalProblem(readDecimal(value, rules), rules)}
    />
  );
}

export function Select(
  { label, options, ...select }:
    & { label: string; options: (readonly [string, string])[] }
    & SelectHTMLAttributes<HTMLSelectElement>,
) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select}>
        {options.map(([value, text]) => <option key={value} value={value}>{text}</option>)}
      </select>
    </div>
  );
}

/** The language choice: each language named in itself. */
export function LanguageSelect() {
  const { t, i18n } = useTranslation();
  return (
    <Select
      label={t("language")}
      value={i18n.language}
      onChange={(e) => chooseLanguage(e.target.value as Language)}
      options={LANGUAGES.map((l) => [l, t(`languages.${l}`)] as const)}
    />
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return <p className="error" role="alert">{typeof error === "string" ? error : errorMessage(error)}</p>;
}

export function Note({ children }: { children: ReactNode }) {
  return <p className="note" role="status">{children}</p>;
}

export function Loading() {
  const { t } = useTranslation();
  return <p className="note" role="status" aria-live="polite">{t("loading")}</p>;
}

export function Badge({ value, text }: { value: string; text: string }) {
  return <span className={`badge badge-${value}`}>{text}</span>;
}

/** Cursor pagination: a stack of the cursors of the pages before this one. */
export function Pager(
  { cursors, next, onChange }: { cursors: string[]; next: string | null; onChange: (c: string[]) => void },
) {
  const { t } = useTranslation();
  return (
    <nav className="pager" aria-label={t("pagination")}>
      <button type="button" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        {t("previous")}
      </button>
      <button type="button" disabled={!next} onClick={() => next && onChange([...cursors, next])}>{t("next")}</button>
    </nav>
  );
}

/**
 * The question asked before an action that cannot be undone (cancel a delivery, deactivate a driver): a modal
 * dialog whose safe answer has the focus; the action runs only when confirmed.
 */
export function ConfirmDialog(
  { open, message, confirm, onConfirm, onClose }: {
    open: boolean;
    message: string;
    confirm: string;
    onConfirm: () => void;
    onClose: () => void;
  },
) {
  const { t } = useTranslation();
  const id = useId();
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (open && d && !d.open) d.showModal();
    if (!open && d?.open) d.close();
  }, [open]);
  return (
    <dialog ref={dialog} className="confirm" aria-labelledby={id} onClose={onClose}>
      <p id={id}>{message}</p>
      <div className="confirm-actions">
        <button type="button" className="secondary" autoFocus onClick={onClose}>{t("back")}</button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            onClose();
            onConfirm();
          }}
        >
          {confirm}
        </button>
      </div>
    </dialog>
  );
}

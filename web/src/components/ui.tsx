// Small shared pieces: labelled fields, error and status notes, pagination.
import { type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, useId } from "react";
import { errorMessage } from "../api/client.ts";
import { t } from "../i18n/index.ts";

export function Field({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} />
    </div>
  );
}

export function Select(
  { label, options, ...select }:
    & { label: string; options: [string, string][] }
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

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return <p className="error" role="alert">{typeof error === "string" ? error : errorMessage(error)}</p>;
}

export function Note({ children }: { children: ReactNode }) {
  return <p className="note" role="status">{children}</p>;
}

export function Loading() {
  return <p className="note" role="status" aria-live="polite">{t.loading}</p>;
}

export function Badge({ value, text }: { value: string; text: string }) {
  return <span className={`badge badge-${value}`}>{text}</span>;
}

/** Cursor pagination: a stack of the cursors of the pages before this one. */
export function Pager(
  { cursors, next, onChange }: { cursors: string[]; next: string | null; onChange: (c: string[]) => void },
) {
  return (
    <nav className="pager" aria-label={t.pagination}>
      <button type="button" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        {t.previous}
      </button>
      <button type="button" disabled={!next} onClick={() => next && onChange([...cursors, next])}>{t.next}</button>
    </nav>
  );
}

// Proof of delivery in the driver app: a photo (the phone's camera, or a file), the recipient's signature drawn on
// a pad, and a note. The draft belongs to one delivery (its card holds it, keyed by the delivery), so the next
// delivery starts blank; its fields' ids are its own, so two deliveries in progress never share a label. The photo
// is taken with a button in the app's language (the browser's own file button speaks the browser's) and shown
// once taken (PhotoField, which the report of a failed attempt takes its photo with too). Completing hands the
// files to the queue (lib/outbox.ts), which uploads them to Storage (bucket delivery-proofs) before completing; the
// server attaches them on completion. Before that, the draft is kept on the device as it is taken
// (features/driver-app/proof-drafts.ts: the card saves it), and a kept signature is drawn back on the pad after a reload.
import { type PointerEvent, useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { ProofFile } from "../../../lib/device.ts";

const MAX_BYTES = 5 * 1024 * 1024;
const TYPES = new Set(["image/jpeg", "image/png", "image/webp"]);

export interface ProofDraft {
  photo: File | null;
  signature: HTMLCanvasElement | null;
  signed: boolean;
  note: string;
  /** A signature kept on the device (the page was reloaded): drawn on the pad, sent as is unless drawn over. */
  kept: Blob | null;
  /** Finished strokes on the pad: the drawing changed, to be kept again. */
  strokes: number;
}

export const emptyDraft = (): ProofDraft => ({
  photo: null,
  signature: null,
  signed: false,
  note: "",
  kept: null,
  strokes: 0,
});

/** The proof the company requires that a draft lacks (the note: blank counts as none). */
export function missingProof(
  draft: ProofDraft,
  required: { photo: boolean; signature: boolean; note: boolean } | undefined,
): ("photo" | "signature" | "note")[] {
  if (!required) return [];
  const missing: ("photo" | "signature" | "note")[] = [];
  if (required.photo && !draft.photo) missing.push("photo");
  if (required.signature && !draft.signed) missing.push("signature");
  if (required.note && !draft.note.trim()) missing.push("note");
  return missing;
}

/** Why a chosen photo cannot be sent, or null. */
export function photoProblem(file: File | null): "proof.wrongType" | "proof.tooLarge" | null {
  if (!file) return null;
  if (!TYPES.has(file.type)) return "proof.wrongType";
  if (file.size > MAX_BYTES) return "proof.tooLarge";
  return null;
}

export const canvasBlob = (canvas: HTMLCanvasElement) =>
  new Promise<Blob>((done, fail) => canvas.toBlob((b) => (b ? done(b) : fail(new Error("empty"))), "image/png"));

/** The files of a draft, as the queue keeps them. */
export async function proofFiles(draft: ProofDraft): Promise<ProofFile[]> {
  const files: ProofFile[] = [];
  if (draft.photo) files.push({ kind: "photo", blob: draft.photo });
  const signature = !draft.signed ? null : draft.signature ? await canvasBlob(draft.signature) : draft.kept;
  if (signature) files.push({ kind: "signature", blob: signature });
  return files;
}

/** An address the page can show a chosen photo at, for as long as it is the one chosen. */
function usePreview(photo: File | null): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!photo) return setUrl(null);
    const made = URL.createObjectURL(photo);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [photo]);
  return url;
}

/**
 * A photo taken with the phone's camera (or chosen as a file), checked as the bucket will check it (an image of an
 * allowed type, at most 5 MB: else a sentence, and no photo), and shown once taken.
 */
export function PhotoField(
  { label, taken, photo, onChange }: {
    label: string;
    /** The taken photo's text alternative. */
    taken: string;
    photo: File | null;
    onChange: (photo: File | null) => void;
  },
) {
  const { t } = useTranslation();
  const [problem, setProblem] = useState<ReturnType<typeof photoProblem>>(null);
  const id = useId();
  const preview = usePreview(photo);
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-photo`}>{label}</label>
        <input
          id={`${id}-photo`}
          className="sr-only"
          type="file"
          accept="image/jpeg,image/png,image/webp"
          capture="environment"
          onChange={(e) => {
            const file = e.target.files?.[0] ?? null;
            const why = photoProblem(file);
            setProblem(why);
            onChange(why ? null : file);
            // The same photo chosen again is a change too.
            e.target.value = "";
          }}
        />
        <div className="photo-pick">
          {preview && <img src={preview} alt={taken} className="proof-preview" />}
          <label htmlFor={`${id}-photo`} className="button secondary" aria-hidden="true">
            {photo ? t("proof.retake") : t("proof.take")}
          </label>
        </div>
      </div>
      {problem && <p className="error" role="alert">{t(problem)}</p>}
    </>
  );
}

export function ProofCapture(
  { draft, onChange, required }: {
    draft: ProofDraft;
    onChange: (d: ProofDraft) => void;
    required?: { photo: boolean; signature: boolean; note: boolean };
  },
) {
  const { t } = useTranslation();
  const label = (text: string, needed?: boolean) => (needed ? t("proof.required", { what: text }) : text);
  const canvas = useRef<HTMLCanvasElement>(null);
  const drawing = useRef(false);
  const id = useId();
  // A signature kept from before a reload, drawn back on the pad.
  useEffect(() => {
    const pad = canvas.current;
    if (!draft.kept || !pad || draft.signature) return;
    let gone = false;
    void createImageBitmap(draft.kept).then((image) => {
      if (!gone) pad.getContext("2d")!.drawImage(image, 0, 0);
    }, () => {});
    return () => void (gone = true);
  }, [draft.kept]);

  const point = (e: PointerEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    return [
      (e.clientX - box.left) * (e.currentTarget.width / box.width),
      (e.clientY - box.top) * (e.currentTarget.height / box.height),
    ];
  };
  const down = (e: PointerEvent<HTMLCanvasElement>) => {
    const ctx = e.currentTarget.getContext("2d")!;
    const [x, y] = point(e);
    drawing.current = true;
    e.currentTarget.setPointerCapture(e.pointerId);
    ctx.lineWidth = 3;
    ctx.lineCap = "round";
    ctx.strokeStyle = "#0f172a";
    ctx.beginPath();
    ctx.moveTo(x, y);
  };
  const move = (e: PointerEvent<HTMLCanvasElement>) => {
    if (!drawing.current) return;
    const ctx = e.currentTarget.getContext("2d")!;
    const [x, y] = point(e);
    ctx.lineTo(x, y);
    ctx.stroke();
    if (!draft.signed || !draft.signature) onChange({ ...draft, signature: e.currentTarget, signed: true });
  };
  const clear = () => {
    const c = canvas.current!;
    c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
    onChange({ ...draft, signed: false, kept: null, strokes: draft.strokes + 1 });
  };

  return (
    <fieldset className="proof">
      <legend>{t("proof.title")}</legend>
      <PhotoField
        label={label(t("proof.photo"), required?.photo)}
        taken={t("proof.taken")}
        photo={draft.photo}
        onChange={(photo) => onChange({ ...draft, photo })}
      />
      <div className="field">
        <span id={`${id}-signature`}>{label(t("proof.signature"), required?.signature)}</span>
        <canvas
          ref={canvas}
          width={600}
          height={200}
          className="signature-pad"
          role="img"
          aria-labelledby={`${id}-signature`}
          onPointerDown={down}
          onPointerMove={move}
          onPointerUp={() => {
            if (drawing.current && draft.signed) onChange({ ...draft, strokes: draft.strokes + 1 });
            drawing.current = false;
          }}
          onPointerLeave={() => (drawing.current = false)}
        />
        <div>
          <button type="button" className="secondary" onClick={clear} disabled={!draft.signed}>
            {t("proof.clear")}
          </button>
          <span className="hint">{draft.signed ? t("proof.signed") : t("proof.signHere")}</span>
        </div>
      </div>
      <div className="field">
        <label htmlFor={`${id}-note`}>{label(t("proof.note"), required?.note)}</label>
        <textarea
          id={`${id}-note`}
          rows={2}
          maxLength={1000}
          value={draft.note}
          onChange={(e) => onChange({ ...draft, note: e.target.value })}
        />
      </div>
    </fieldset>
  );
}

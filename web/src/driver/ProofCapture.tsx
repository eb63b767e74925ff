// Proof of delivery in the driver app: a photo (the phone's camera, or a file),
// the recipient's signature drawn on a pad, and a note. The photo and the
// signature go to Storage (bucket delivery-proofs) with supabase-js before the
// delivery is completed; the server attaches them on completion.
import { type PointerEvent, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { i18n } from "../i18n/index.ts";
import { supabase } from "../lib/supabase.ts";

export const PROOF_BUCKET = "delivery-proofs";
const MAX_BYTES = 5 * 1024 * 1024;
const TYPES: Record<string, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };

export interface ProofDraft {
  photo: File | null;
  signature: HTMLCanvasElement | null;
  signed: boolean;
  note: string;
}

/** Why a chosen photo cannot be sent, or null. */
export function photoProblem(file: File | null): "proof.wrongType" | "proof.tooLarge" | null {
  if (!file) return null;
  if (!TYPES[file.type]) return "proof.wrongType";
  if (file.size > MAX_BYTES) return "proof.tooLarge";
  return null;
}

const canvasBlob = (canvas: HTMLCanvasElement) =>
  new Promise<Blob>((done, fail) => canvas.toBlob((b) => (b ? done(b) : fail(new Error("empty"))), "image/png"));

/** An upload that failed, said as a sentence. */
export class ProofUploadError extends Error {}

/**
 * Uploads what was captured, each kind once (a retry after a failure skips what
 * already went up); throws a sentence a driver can act on.
 */
export async function uploadProof(folder: string, draft: ProofDraft, sent: Set<string>): Promise<void> {
  const uploads: [string, Blob][] = [];
  if (draft.photo && !sent.has("photo")) uploads.push([`photo.${TYPES[draft.photo.type]}`, draft.photo]);
  if (draft.signed && draft.signature && !sent.has("signature")) {
    uploads.push(["signature.png", await canvasBlob(draft.signature)]);
  }
  for (const [file, blob] of uploads) {
    const { error } = await supabase.storage.from(PROOF_BUCKET).upload(`${folder}/${file}`, blob, {
      contentType: blob.type,
    });
    if (error) {
      if (/maximum allowed size/.test(error.message)) throw new ProofUploadError(i18n.t("proof.tooLarge"));
      if (/mime type/.test(error.message)) throw new ProofUploadError(i18n.t("proof.wrongType"));
      throw new ProofUploadError(i18n.t("proof.uploadFailed", { why: error.message }));
    }
    sent.add(file.split(".")[0]);
  }
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
  const [problem, setProblem] = useState<ReturnType<typeof photoProblem>>(null);

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
    if (!draft.signed) onChange({ ...draft, signature: e.currentTarget, signed: true });
  };
  const clear = () => {
    const c = canvas.current!;
    c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
    onChange({ ...draft, signed: false });
  };

  return (
    <fieldset className="proof">
      <legend>{t("proof.title")}</legend>
      <div className="field">
        <label htmlFor="proof-photo">{label(t("proof.photo"), required?.photo)}</label>
        <input
          id="proof-photo"
          type="file"
          accept="image/jpeg,image/png,image/webp"
          capture="environment"
          onChange={(e) => {
            const file = e.target.files?.[0] ?? null;
            const why = photoProblem(file);
            setProblem(why);
            onChange({ ...draft, photo: why ? null : file });
          }}
        />
      </div>
      {problem && <p className="error" role="alert">{t(problem)}</p>}
      <div className="field">
        <span id="proof-signature-label">{label(t("proof.signature"), required?.signature)}</span>
        <canvas
          ref={canvas}
          width={600}
          height={200}
          className="signature-pad"
          role="img"
          aria-labelledby="proof-signature-label"
          onPointerDown={down}
          onPointerMove={move}
          onPointerUp={() => (drawing.current = false)}
          onPointerLeave={() => (drawing.current = false)}
        />
        <div>
          <button type="button" onClick={clear} disabled={!draft.signed}>{t("proof.clear")}</button>
          <span className="hint">{draft.signed ? t("proof.signed") : t("proof.signHere")}</span>
        </div>
      </div>
      <div className="field">
        <label htmlFor="proof-note">{label(t("proof.note"), required?.note)}</label>
        <textarea
          id="proof-note"
          rows={2}
          maxLength={1000}
          value={draft.note}
          onChange={(e) => onChange({ ...draft, note: e.target.value })}
        />
      </div>
    </fieldset>
  );
}

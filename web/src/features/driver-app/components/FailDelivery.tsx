// "Could not deliver": the driver reports a delivery in progress as failed, with the reason, a note and a photo (the
// closed gate, the wrong number), the photo taken as the proof of delivery's is (PhotoField). The report is one of
// the driver's queued actions (`fail` in lib/outbox.ts, POST /api/v1/deliveries/{id}/fail): kept on the device with
// its photo and sent once, the photo first, also when taken with no connection. Nobody is credited; the company
// decides on another attempt.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Field, Select } from "../../../components/ui.tsx";
import { PhotoField } from "./ProofCapture.tsx";

const REASONS = ["recipient_absent", "address_not_found", "refused", "damaged", "other"] as const;
export type FailureReason = (typeof REASONS)[number];

export function FailDelivery(
  { onReport }: { onReport: (body: { reason: FailureReason; note?: string }, photo: File | null) => void },
) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState<FailureReason>("recipient_absent");
  const [note, setNote] = useState("");
  const [photo, setPhoto] = useState<File | null>(null);
  if (!open) {
    return (
      <button type="button" className="secondary" onClick={() => setOpen(true)}>
        {t("lifecycle.couldNotDeliver")}
      </button>
    );
  }
  const report = () => {
    const trimmed = note.trim();
    onReport(trimmed ? { reason, note: trimmed } : { reason }, photo);
  };
  return (
    <form className="fail" aria-label={t("lifecycle.couldNotDeliver")} onSubmit={(e) => (e.preventDefault(), report())}>
      <h4>{t("lifecycle.couldNotDeliver")}</h4>
      <Select
        label={t("lifecycle.reason")}
        value={reason}
        onChange={(e) =>
          setReason(e.target.value as FailureReason)}
        options={REASONS.map((r) =>
          [r, t(`lifecycle.reasons.${r}`)] as const
        )}
      />
      <Field label={t("lifecycle.note")} value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />
      <PhotoField label={t("lifecycle.photo")} taken={t("lifecycle.photoTaken")} photo={photo} onChange={setPhoto} />
      <button type="submit" className="danger">{t("lifecycle.reportFailure")}</button>{" "}
      <button type="button" className="secondary" onClick={() => setOpen(false)}>{t("lifecycle.back")}</button>
    </form>
  );
}

// "Could not deliver": the driver reports a delivery in progress as failed, with the reason and a note
// (POST /api/v1/deliveries/{id}/fail). Nobody is credited; the company decides on another attempt.
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Delivery } from "../api/client.ts";
import { ErrorNote, Field, Select } from "../components/ui.tsx";

const REASONS = ["recipient_absent", "address_not_found", "refused", "damaged", "other"] as const;

export function FailDelivery({ delivery, onDone }: { delivery: Delivery; onDone: (d: Delivery) => void }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState<(typeof REASONS)[number]>("recipient_absent");
  const [note, setNote] = useState("");
  const fail = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries/{id}/fail", {
        params: { path: { id: delivery.id } },
        body: { reason, note: note.trim() || null },
      })),
    onSuccess: onDone,
  });
  if (!open) {
    return (
      <button type="button" className="secondary" onClick={() => setOpen(true)}>
        {t("lifecycle.couldNotDeliver")}
      </button>
    );
  }
  return (
    <form className="card fail" onSubmit={(e) => (e.preventDefault(), fail.mutate())}>
      <h3>{t("lifecycle.couldNotDeliver")}</h3>
      <Select
        label={t("lifecycle.reason")}
        value={reason}
        onChange={(e) => setReason(e.target.value as (typeof REASONS)[number])}
        options={REASONS.map((r) => [r, t(`lifecycle.reasons.${r}`)] as const)}
      />
      <Field label={t("lifecycle.note")} value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />
      <ErrorNote error={fail.error} />
      <button type="submit" className="danger" disabled={fail.isPending}>
        {fail.isPending ? t("lifecycle.reporting") : t("lifecycle.reportFailure")}
      </button>{" "}
      <button type="button" onClick={() => setOpen(false)}>{t("lifecycle.back")}</button>
    </form>
  );
}

// What a company does to a delivery after creating it (DESIGN.md §11.2): change its recipient and window
// (PATCH /api/v1/deliveries/{id}), and call it back (POST /api/v1/deliveries/{id}/recall): an accepted one back to
// the pool or cancelled, one in progress back to the sender (returning, until its driver returns it).
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Delivery } from "../../../api/client.ts";
import { DateTimeField, ErrorNote, Field, MaskedField, Note, Select } from "../../../components/ui.tsx";
import { displayPhone, isPhone, maskPhone, phoneE164 } from "../../../lib/brazil.ts";

/** Until it is completed (cancelled, returned or on its way back: nothing to change). */
const EDITABLE = new Set(["awaiting_payment", "pending", "accepted", "in_progress", "failed"]);

export function EditDelivery({ delivery, onChanged }: { delivery: Delivery; onChanged: (d: Delivery) => void }) {
  const { t } = useTranslation();
  const [name, setName] = useState(delivery.recipient_name ?? "");
  // Typed and kept as the new-delivery form does: masked as typed, stored as +5511988887777.
  const [phone, setPhone] = useState(displayPhone(delivery.recipient_phone));
  // A newer version of the delivery (this form's save, a Realtime update, the recipient's data erased): the fields
  // start again from it, while the form stays open and its confirmation shown.
  const [version, setVersion] = useState(delivery.updated_at);
  if (version !== delivery.updated_at) {
    setVersion(delivery.updated_at);
    setName(delivery.recipient_name ?? "");
    setPhone(displayPhone(delivery.recipient_phone));
  }
  // A number stored some other way (through the API) is left as it is until it is changed.
  const phoneChanged = phone.trim() !== displayPhone(delivery.recipient_phone);
  const phoneWrong = phoneChanged && phone.trim() && !isPhone(phone) ? t("input.phone") : null;
  // Left empty: the window's end stays as it is.
  const [timeWindow, setTimeWindow] = useState<{ start: string | null; end: string | null }>({ start: "", end: "" });
  const edit = useMutation({
    mutationFn: () => {
      const body: Record<string, string | null> = {};
      if (name.trim() !== (delivery.recipient_name ?? "")) body.recipient_name = name.trim() || null;
      if (phoneChanged) body.recipient_phone = phone.trim() ? phoneE164(phone) : null;
      if (timeWindow.start) body.window_start = timeWindow.start;
      if (timeWindow.end) body.window_end = timeWindow.end;
      return call(api.PATCH("/api/v1/deliveries/{id}", { params: { path: { id: delivery.id } }, body }));
    },
    onSuccess: onChanged,
  });
  if (!EDITABLE.has(delivery.status)) return null;
  const unreadable = timeWindow.start === null || timeWindow.end === null || !!phoneWrong;
  return (
    <details className="card edit-delivery">
      <summary>{t("operations.edit")}</summary>
      <form onSubmit={(e) => (e.preventDefault(), !unreadable && edit.mutate())}>
        <Field label={t("operations.recipientName")} value={name} onChange={(e) => setName(e.target.value)} />
        <MaskedField
          label={t("operations.recipientPhone")}
          type="tel"
          autoComplete="off"
          value={phone}
          mask={maskPhone}
          onValue={setPhone}
          problem={phoneWrong}
        />
        <p className="hint">{t("operations.windowHint")}</p>
        <DateTimeField
          label={t("lifecycle.windowStart")}
          onInstant={(start) => setTimeWindow((w) => ({ ...w, start }))}
        />
        <DateTimeField label={t("lifecycle.windowEnd")} onInstant={(end) => setTimeWindow((w) => ({ ...w, end }))} />
        <ErrorNote error={edit.error} />
        {edit.isSuccess && !edit.isPending && <Note>{t("operations.saved")}</Note>}
        <button type="submit" disabled={edit.isPending || unreadable}>
          {edit.isPending ? t("operations.saving") : t("operations.save")}
        </button>
      </form>
    </details>
  );
}

export function RecallDelivery({ delivery, onChanged }: { delivery: Delivery; onChanged: (d: Delivery) => void }) {
  const { t } = useTranslation();
  const [reason, setReason] = useState("");
  const [then, setThen] = useState<"redispatch" | "cancel">("redispatch");
  const recall = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries/{id}/recall", {
        params: { path: { id: delivery.id } },
        body: delivery.status === "accepted" ? { reason: reason.trim(), then } : { reason: reason.trim() },
      })),
    onSuccess: onChanged,
  });
  if (delivery.status === "returning") {
    return <Note>{t("operations.returning", { reason: delivery.recall_reason ?? "" })}</Note>;
  }
  if (delivery.status !== "accepted" && delivery.status !== "in_progress") return null;
  return (
    <form className="card recall" onSubmit={(e) => (e.preventDefault(), recall.mutate())}>
      <Field
        label={t("operations.recallReason")}
        value={reason}
        required
        maxLength={500}
        onChange={(e) => setReason(e.target.value)}
      />
      {delivery.status === "accepted"
        ? (
          <Select
            label={t("operations.recallThen")}
            value={then}
            onChange={(e) => setThen(e.target.value as typeof then)}
            options={[["redispatch", t("operations.redispatch")], ["cancel", t("operations.recallCancel")]]}
          />
        )
        : <p className="hint">{t("operations.recallInProgress")}</p>}
      <ErrorNote error={recall.error} />
      <button type="submit" className="danger" disabled={recall.isPending || !reason.trim()}>
        {recall.isPending ? t("operations.recalling") : t("operations.recall")}
      </button>
    </form>
  );
}

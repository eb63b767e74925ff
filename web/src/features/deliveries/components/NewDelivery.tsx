// Create a delivery: each end by its CEP and an address chosen from suggestions, shown on a map where its pin can be
// dragged; a live route quote as soon as both ends are known; then, for Pix, the delivery's page shows the QR code and
// copy-paste code for the client.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, lazy, Suspense, useState } from "react";
import { api, call } from "../../../api/client.ts";
import { useTranslation } from "react-i18next";
import type { MapMarker } from "../../../components/MapView.tsx";
import { DateTimeField, ErrorNote, Field, MaskedField, Note, Select } from "../../../components/ui.tsx";
import { formatBRL, formatKm, formatMinutes } from "../../../format.ts";
import {
  documentCharacters,
  documentProblem,
  isPhone,
  maskDocument,
  maskPhone,
  phoneE164,
} from "../../../lib/brazil.ts";
import { useDebounced } from "../../../lib/debounce.ts";
import { navigate } from "../../../lib/router.tsx";
import { type AddressEnd, emptyEnd, type End, fullAddress } from "../address.ts";
import { AddressFields } from "./AddressFields.tsx";
import { deliveryKeys } from "../api/keys.ts";
import { quoteQuery } from "../api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

export default function NewDeliveryPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [submitted, setSubmitted] = useState(false);
  const [ends, setEnds] = useState<Record<End, AddressEnd>>({ origin: emptyEnd, destination: emptyEnd });
  const [form, setForm] = useState({
    paymentMethod: "pix",
    customerName: "",
    customerDocument: "",
    customerEmail: "",
    recipientName: "",
    recipientPhone: "",
    recipientEmail: "",
    notes: "",
    driverId: "",
    externalId: "",
  });
  // The window's ends as instants: "" when left empty, null while what is typed is no moment.
  const [timeWindow, setTimeWindow] = useState<{ start: string | null; end: string | null }>({ start: "", end: "" });
  const set = (name: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [name]: e.target.value });
  const setMasked = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const setEnd = (end: End) => (next: AddressEnd) => setEnds((current) => ({ ...current, [end]: next }));
  const origin = ends.origin.point;
  const destination = ends.destination.point;
  const route = useDebounced({ origin, destination }, 400);
  const quote = useQuery({
    ...quoteQuery(route),
    enabled: !!route.origin && !!route.destination,
  });
  const markers: MapMarker[] = (["origin", "destination"] as const).flatMap((end) => {
    const point = ends[end].point;
    return point ? [{ id: end, ...point, kind: end, draggable: true, label: t(`address.pinLabel.${end}`) }] : [];
  });
  const drivers = useQuery(driverNamesQuery());

  const create = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries", {
        body: {
          // An end without a point is geocoded from its address by the API.
          origin,
          destination,
          origin_address: fullAddress(ends.origin),
          destination_address: fullAddress(ends.destination),
          payment_method: form.paymentMethod as "pix" | "invoice",
          customer: form.paymentMethod === "pix"
            ? {
              name: form.customerName,
              document: documentCharacters(form.customerDocument),
              email: form.customerEmail || null,
            }
            : null,
          recipient_name: form.recipientName || null,
          recipient_phone: form.recipientPhone ? phoneE164(form.recipientPhone) : null,
          recipient_email: form.recipientEmail.trim() || null,
          notes: form.notes || null,
          driver_id: form.driverId || null,
          window_start: timeWindow.start || null,
          window_end: timeWindow.end || null,
          external_id: form.externalId.trim() || null,
        },
      })),
    onSuccess: (delivery) => {
      client.setQueryData(deliveryKeys.one(delivery.id), delivery);
      void client.invalidateQueries({ queryKey: deliveryKeys.lists() });
      navigate(`/deliveries/${delivery.id}`);
    },
  });

  const pix = form.paymentMethod === "pix";
  const documentWrong = pix ? documentProblem(form.customerDocument) : null;
  const phoneWrong = form.recipientPhone && !isPhone(form.recipientPhone) ? t("input.phone") : null;
  const windowEndWrong = timeWindow.end && Date.parse(timeWindow.end) <= Date.now()
    ? t("newDelivery.windowEndPast")
    : null;
  const windowStartWrong = timeWindow.start && timeWindow.end && timeWindow.start >= timeWindow.end
    ? t("newDelivery.windowOrder")
    : null;
  const windowWrong = timeWindow.start === null || timeWindow.end === null || windowEndWrong || windowStartWrong;

  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    if (documentWrong || phoneWrong || windowWrong) return;
    create.mutate();
  }

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">{t("newDelivery.title")}</h1>
      <form className="card grid" onSubmit={submit}>
        <fieldset>
          <legend>{t("delivery.from")}</legend>
          <AddressFields end="origin" value={ends.origin} onChange={setEnd("origin")} />
        </fieldset>
        <fieldset>
          <legend>{t("delivery.to")}</legend>
          <AddressFields end="destination" value={ends.destination} onChange={setEnd("destination")} />
        </fieldset>
        <section className="address-map" aria-labelledby="address-map-title">
          <h2 id="address-map-title">{t("address.mapTitle")}</h2>
          <p className="note">{t("address.mapHint")}</p>
          <Suspense fallback={<div className="map" />}>
            <MapView
              label={t("address.map")}
              markers={markers}
              fitKey={`${ends.origin.placed}/${ends.destination.placed}`}
              onMarkerMove={(id, lat, lng) =>
                setEnds((current) => ({
                  ...current,
                  [id]: { ...current[id as End], point: { lat, lng }, pointFrom: "map" },
                }))}
            />
          </Suspense>
        </section>
        <section className="quote" aria-live="polite" aria-labelledby="quote-title">
          <h2 id="quote-title">{t("newDelivery.quote")}</h2>
          {!origin || !destination
            ? <p>{t("newDelivery.quoteUnavailable")}</p>
            : quote.isFetching
            ? <p role="status">{t("newDelivery.quoting")}</p>
            : quote.data
            ? (
              <p>
                {t("newDelivery.quoteLine", {
                  km: formatKm(quote.data.distance_m),
                  min: formatMinutes(quote.data.duration_s),
                  price: formatBRL(quote.data.price as number),
                })}
              </p>
            )
            : <ErrorNote error={quote.error} />}
        </section>
        <fieldset>
          <legend>{t("newDelivery.paymentMethod")}</legend>
          <Select
            label={t("newDelivery.paymentMethod")}
            value={form.paymentMethod}
            onChange={set("paymentMethod")}
            options={[["pix", t("paymentMethod.pix")], ["invoice", t("paymentMethod.invoice")]]}
          />
          {pix && (
            <>
              <Field
                label={t("newDelivery.customerName")}
                required
                value={form.customerName}
                onChange={set("customerName")}
              />
              <MaskedField
                label={t("newDelivery.customerDocument")}
                required
                inputMode="numeric"
                autoComplete="off"
                value={form.customerDocument}
                mask={maskDocument}
                onValue={setMasked("customerDocument")}
                problem={documentWrong && t(`input.${documentWrong}`)}
                showProblem={submitted}
              />
              <Field
                label={t("newDelivery.customerEmail")}
                type="email"
                value={form.customerEmail}
                onChange={set("customerEmail")}
              />
            </>
          )}
        </fieldset>
        <fieldset>
          <legend>{t("delivery.recipient")}</legend>
          <Field label={t("newDelivery.recipientName")} value={form.recipientName} onChange={set("recipientName")} />
          <MaskedField
            label={t("newDelivery.recipientPhone")}
            type="tel"
            autoComplete="off"
            value={form.recipientPhone}
            mask={maskPhone}
            onValue={setMasked("recipientPhone")}
            problem={phoneWrong}
            showProblem={submitted}
          />
          <Field
            label={t("newDelivery.recipientEmail")}
            type="email"
            autoComplete="off"
            value={form.recipientEmail}
            onChange={set("recipientEmail")}
          />
          <Field label={t("newDelivery.notes")} value={form.notes} onChange={set("notes")} />
          <Select
            label={t("newDelivery.driver")}
            value={form.driverId}
            onChange={set("driverId")}
            options={[
              ["", t("none")],
              ...(drivers.data?.items ?? []).filter((d) => d.active).map((d) => [d.id, d.name] as const),
            ]}
          />
        </fieldset>
        <fieldset>
          <legend>{t("newDelivery.window")}</legend>
          <p className="hint">{t("newDelivery.windowHint")}</p>
          <DateTimeField
            label={t("lifecycle.windowStart")}
            onInstant={(start) => setTimeWindow((w) => ({ ...w, start }))}
            problem={windowStartWrong}
            showProblem={submitted}
          />
          <DateTimeField
            label={t("lifecycle.windowEnd")}
            onInstant={(end) => setTimeWindow((w) => ({ ...w, end }))}
            problem={windowEndWrong}
            showProblem={submitted}
          />
        </fieldset>
        <fieldset>
          <legend>{t("newDelivery.order")}</legend>
          <Field
            label={t("newDelivery.externalId")}
            autoComplete="off"
            maxLength={100}
            value={form.externalId}
            onChange={set("externalId")}
          />
        </fieldset>
        <ErrorNote error={create.error} />
        {create.isPending && <Note>{t("newDelivery.creating")}</Note>}
        <button type="submit" disabled={create.isPending}>{t("newDelivery.submit")}</button>
      </form>
    </section>
  );
}

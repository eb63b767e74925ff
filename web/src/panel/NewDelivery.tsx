// Create a delivery: a live route quote while typing, then, for Pix, the
// delivery's page shows the QR code and copy-paste code for the client.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { api, call } from "../api/client.ts";
import { useTranslation } from "react-i18next";
import { DecimalField, ErrorNote, Field, MaskedField, Note, readDecimal, Select } from "../components/ui.tsx";
import { formatBRL, formatKm, formatMinutes } from "../format.ts";
import { digitsOf, documentProblem, isPhone, maskDocument, maskPhone, phoneE164 } from "../lib/brazil.ts";
import type { DecimalRules } from "../lib/numbers.ts";
import { navigate } from "../lib/router.tsx";

function useDebounced<T>(value: T, ms: number): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [JSON.stringify(value), ms]);
  return current;
}

const LAT: DecimalRules = { required: true, min: -90, max: 90, grouping: false };
const LNG: DecimalRules = { required: true, min: -180, max: 180, grouping: false };

const point = (lat: string, lng: string) => {
  const a = readDecimal(lat, LAT);
  const b = readDecimal(lng, LNG);
  return a.ok && b.ok ? { lat: a.value!, lng: b.value! } : null;
};

export default function NewDeliveryPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [submitted, setSubmitted] = useState(false);
  const [form, setForm] = useState({
    originAddress: "",
    originLat: "-23.5503",
    originLng: "-46.6339",
    destinationAddress: "",
    destinationLat: "-23.5614",
    destinationLng: "-46.6559",
    paymentMethod: "pix",
    customerName: "",
    customerDocument: "",
    customerEmail: "",
    recipientName: "",
    recipientPhone: "",
    notes: "",
    driverId: "",
  });
  const set = (name: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [name]: e.target.value });
  const setMasked = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const origin = point(form.originLat, form.originLng);
  const destination = point(form.destinationLat, form.destinationLng);
  const route = useDebounced({ origin, destination }, 400);
  const quote = useQuery({
    queryKey: ["quote", route],
    enabled: !!route.origin && !!route.destination,
    queryFn: () =>
      call(api.POST("/api/v1/routes/quote", { body: { origin: route.origin!, destination: route.destination! } })),
    staleTime: 60_000,
    retry: false,
  });
  const drivers = useQuery({
    queryKey: ["drivers", "all-active"],
    queryFn: () => call(api.GET("/api/v1/drivers", { params: { query: { limit: 100 } } })),
  });

  const create = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/deliveries", {
        body: {
          origin: origin!,
          destination: destination!,
          origin_address: form.originAddress,
          destination_address: form.destinationAddress,
          payment_method: form.paymentMethod as "pix" | "invoice",
          customer: form.paymentMethod === "pix"
            ? { name: form.customerName, document: digitsOf(form.customerDocument), email: form.customerEmail || null }
            : null,
          recipient_name: form.recipientName || null,
          recipient_phone: form.recipientPhone ? phoneE164(form.recipientPhone) : null,
          notes: form.notes || null,
          driver_id: form.driverId || null,
        },
      })),
    onSuccess: (delivery) => {
      client.setQueryData(["delivery", delivery.id], delivery);
      void client.invalidateQueries({ queryKey: ["deliveries"] });
      navigate(`/deliveries/${delivery.id}`);
    },
  });

  const pix = form.paymentMethod === "pix";
  const documentWrong = pix ? documentProblem(form.customerDocument) : null;
  const phoneWrong = form.recipientPhone && !isPhone(form.recipientPhone) ? t("input.phone") : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    if (!origin || !destination || documentWrong || phoneWrong) return;
    create.mutate();
  }

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">{t("newDelivery.title")}</h1>
      <form className="card grid" onSubmit={submit}>
        <fieldset>
          <legend>{t("delivery.from")}</legend>
          <Field
            label={t("newDelivery.originAddress")}
            required
            value={form.originAddress}
            onChange={set("originAddress")}
          />
          <DecimalField
            label={t("newDelivery.originLat")}
            rules={LAT}
            showProblem={submitted}
            value={form.originLat}
            onChange={set("originLat")}
          />
          <DecimalField
            label={t("newDelivery.originLng")}
            rules={LNG}
            showProblem={submitted}
            value={form.originLng}
            onChange={set("originLng")}
          />
        </fieldset>
        <fieldset>
          <legend>{t("delivery.to")}</legend>
          <Field
            label={t("newDelivery.destinationAddress")}
            required
            value={form.destinationAddress}
            onChange={set("destinationAddress")}
          />
          <DecimalField
            label={t("newDelivery.destinationLat")}
            rules={LAT}
            showProblem={submitted}
            value={form.destinationLat}
            onChange={set("destinationLat")}
          />
          <DecimalField
            label={t("newDelivery.destinationLng")}
            rules={LNG}
            showProblem={submitted}
            value={form.destinationLng}
            onChange={set("destinationLng")}
          />
        </fieldset>
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
        <ErrorNote error={create.error} />
        {create.isPending && <Note>{t("newDelivery.creating")}</Note>}
        <button type="submit" disabled={create.isPending}>{t("newDelivery.submit")}</button>
      </form>
    </section>
  );
}

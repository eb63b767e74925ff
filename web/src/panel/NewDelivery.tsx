// Create a delivery: a live route quote while typing, then, for Pix, the
// delivery's page shows the QR code and copy-paste code for the client.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { api, call } from "../api/client.ts";
import { ErrorNote, Field, Note, Select } from "../components/ui.tsx";
import { formatBRL, formatKm, formatMinutes } from "../format.ts";
import { t } from "../i18n/index.ts";
import { navigate } from "../lib/router.tsx";

function useDebounced<T>(value: T, ms: number): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [JSON.stringify(value), ms]);
  return current;
}

const point = (lat: string, lng: string) => {
  const p = { lat: Number(lat), lng: Number(lng) };
  return lat.trim() && lng.trim() && Number.isFinite(p.lat) && Number.isFinite(p.lng) &&
      Math.abs(p.lat) <= 90 && Math.abs(p.lng) <= 180
    ? p
    : null;
};

export default function NewDeliveryPage() {
  const client = useQueryClient();
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
            ? { name: form.customerName, document: form.customerDocument, email: form.customerEmail || null }
            : null,
          recipient_name: form.recipientName || null,
          recipient_phone: form.recipientPhone || null,
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

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }

  const pix = form.paymentMethod === "pix";
  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">{t.newDelivery.title}</h1>
      <form className="card grid" onSubmit={submit}>
        <fieldset>
          <legend>{t.delivery.from}</legend>
          <Field
            label={t.newDelivery.originAddress}
            required
            value={form.originAddress}
            onChange={set("originAddress")}
          />
          <Field
            label={t.newDelivery.originLat}
            inputMode="decimal"
            required
            value={form.originLat}
            onChange={set("originLat")}
          />
          <Field
            label={t.newDelivery.originLng}
            inputMode="decimal"
            required
            value={form.originLng}
            onChange={set("originLng")}
          />
        </fieldset>
        <fieldset>
          <legend>{t.delivery.to}</legend>
          <Field
            label={t.newDelivery.destinationAddress}
            required
            value={form.destinationAddress}
            onChange={set("destinationAddress")}
          />
          <Field
            label={t.newDelivery.destinationLat}
            inputMode="decimal"
            required
            value={form.destinationLat}
            onChange={set("destinationLat")}
          />
          <Field
            label={t.newDelivery.destinationLng}
            inputMode="decimal"
            required
            value={form.destinationLng}
            onChange={set("destinationLng")}
          />
        </fieldset>
        <section className="quote" aria-live="polite" aria-labelledby="quote-title">
          <h2 id="quote-title">{t.newDelivery.quote}</h2>
          {!origin || !destination
            ? <p>{t.newDelivery.quoteUnavailable}</p>
            : quote.isFetching
            ? <p role="status">{t.newDelivery.quoting}</p>
            : quote.data
            ? (
              <p>
                {t.newDelivery.quoteLine(
                  formatKm(quote.data.distance_m),
                  formatMinutes(quote.data.duration_s),
                  formatBRL(quote.data.price as number),
                )}
              </p>
            )
            : <ErrorNote error={quote.error} />}
        </section>
        <fieldset>
          <legend>{t.newDelivery.paymentMethod}</legend>
          <Select
            label={t.newDelivery.paymentMethod}
            value={form.paymentMethod}
            onChange={set("paymentMethod")}
            options={[["pix", t.paymentMethod.pix], ["invoice", t.paymentMethod.invoice]]}
          />
          {pix && (
            <>
              <Field
                label={t.newDelivery.customerName}
                required
                value={form.customerName}
                onChange={set("customerName")}
              />
              <Field
                label={t.newDelivery.customerDocument}
                required
                inputMode="numeric"
                value={form.customerDocument}
                onChange={set("customerDocument")}
              />
              <Field
                label={t.newDelivery.customerEmail}
                type="email"
                value={form.customerEmail}
                onChange={set("customerEmail")}
              />
            </>
          )}
        </fieldset>
        <fieldset>
          <legend>{t.delivery.recipient}</legend>
          <Field label={t.newDelivery.recipientName} value={form.recipientName} onChange={set("recipientName")} />
          <Field
            label={t.newDelivery.recipientPhone}
            type="tel"
            value={form.recipientPhone}
            onChange={set("recipientPhone")}
          />
          <Field label={t.newDelivery.notes} value={form.notes} onChange={set("notes")} />
          <Select
            label={t.newDelivery.driver}
            value={form.driverId}
            onChange={set("driverId")}
            options={[
              ["", t.none],
              ...(drivers.data?.items ?? []).filter((d) => d.active).map((d): [string, string] => [d.id, d.name]),
            ]}
          />
        </fieldset>
        <ErrorNote error={create.error} />
        {create.isPending && <Note>{t.newDelivery.creating}</Note>}
        <button type="submit" disabled={create.isPending || !origin || !destination}>{t.newDelivery.submit}</button>
      </form>
    </section>
  );
}

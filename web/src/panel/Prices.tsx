// The company's prices; managers read them, owners and admins change them.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { api, call } from "../api/client.ts";
import { ErrorNote, Field, Loading, Note } from "../components/ui.tsx";
import { t } from "../i18n/index.ts";
import { ProofRequirements } from "./ProofRequirements.tsx";

export default function PricesPage() {
  const client = useQueryClient();
  const query = useQuery({ queryKey: ["prices"], queryFn: () => call(api.GET("/api/v1/prices")) });
  const [form, setForm] = useState({ base_fee: "", per_km: "", minimum_fee: "", driver_share: "" });
  useEffect(() => {
    if (query.data) {
      setForm({
        base_fee: String(query.data.base_fee),
        per_km: String(query.data.per_km),
        minimum_fee: String(query.data.minimum_fee),
        driver_share: String(query.data.driver_share),
      });
    }
  }, [query.data]);
  const save = useMutation({
    mutationFn: () =>
      call(api.PUT("/api/v1/prices", {
        body: {
          base_fee: Number(form.base_fee),
          per_km: Number(form.per_km),
          minimum_fee: Number(form.minimum_fee),
          driver_share: Number(form.driver_share),
        },
      })),
    onSuccess: (prices) => client.setQueryData(["prices"], prices),
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  if (query.isPending) return <Loading />;
  return (
    <section aria-labelledby="prices-title">
      <h1 id="prices-title">{t.prices.title}</h1>
      <ErrorNote error={query.error} />
      <form className="card" onSubmit={(e: FormEvent) => (e.preventDefault(), save.mutate())}>
        <Field label={t.prices.baseFee} inputMode="decimal" required value={form.base_fee} onChange={set("base_fee")} />
        <Field label={t.prices.perKm} inputMode="decimal" required value={form.per_km} onChange={set("per_km")} />
        <Field
          label={t.prices.minimumFee}
          inputMode="decimal"
          required
          value={form.minimum_fee}
          onChange={set("minimum_fee")}
        />
        <Field
          label={t.prices.driverShare}
          inputMode="decimal"
          required
          value={form.driver_share}
          onChange={set("driver_share")}
        />
        <ErrorNote error={save.error} />
        {save.isSuccess && <Note>{t.prices.saved}</Note>}
        <button type="submit" disabled={save.isPending}>{save.isPending ? t.saving : t.save}</button>
      </form>
      <ProofRequirements />
    </section>
  );
}

// The company's prices; managers read them, owners and admins change them. Amounts are typed as people write them
// (5,50 or 5.50) and read with the app's one number rule before anything is sent.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call } from "../../../api/client.ts";
import { DecimalField, ErrorNote, Loading, Note, readDecimal } from "../../../components/ui.tsx";
import { formatInputNumber } from "../../../format.ts";
import type { DecimalRules } from "../../../lib/numbers.ts";
import { ProofRequirements } from "../../deliveries/components/ProofRequirements.tsx";
import { moneyKeys } from "../api/keys.ts";
import { pricesQuery } from "../api/queries.ts";

const MONEY: DecimalRules = { required: true, min: 0, max: 1_000_000_000, fractionDigits: 2 };
const SHARE: DecimalRules = { required: true, min: 0, max: 1, fractionDigits: 4, grouping: false };
const RULES = { base_fee: MONEY, per_km: MONEY, minimum_fee: MONEY, driver_share: SHARE };
type Name = keyof typeof RULES;
const NAMES = Object.keys(RULES) as Name[];

export default function PricesPage() {
  const { t, i18n } = useTranslation();
  const client = useQueryClient();
  const query = useQuery(pricesQuery());
  const [form, setForm] = useState<Record<Name, string>>({
    base_fee: "",
    per_km: "",
    minimum_fee: "",
    driver_share: "",
  });
  const [submitted, setSubmitted] = useState(false);
  // The saved prices, written the way the language writes them (5,50 in Portuguese).
  useEffect(() => {
    if (query.data) {
      setForm({
        base_fee: formatInputNumber(query.data.base_fee as number, 2),
        per_km: formatInputNumber(query.data.per_km as number, 2),
        minimum_fee: formatInputNumber(query.data.minimum_fee as number, 2),
        driver_share: formatInputNumber(query.data.driver_share),
      });
    }
  }, [query.data, i18n.language]);
  const read = Object.fromEntries(NAMES.map((name) => [name, readDecimal(form[name], RULES[name])])) as Record<
    Name,
    ReturnType<typeof readDecimal>
  >;
  const save = useMutation({
    mutationFn: (body: Record<Name, number>) => call(api.PUT("/api/v1/prices", { body })),
    onSuccess: (prices) => client.setQueryData(moneyKeys.prices(), prices),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    const values: Partial<Record<Name, number>> = {};
    for (const name of NAMES) {
      const result = read[name];
      if (!result.ok) return;
      values[name] = result.value!;
    }
    save.mutate(values as Record<Name, number>);
  }
  const field = (name: Name, label: string) => (
    <DecimalField
      label={label}
      rules={RULES[name]}
      showProblem={submitted}
      value={form[name]}
      onChange={(e) => setForm({ ...form, [name]: e.target.value })}
    />
  );
  if (query.isPending) return <Loading />;
  return (
    <section aria-labelledby="prices-title">
      <h1 id="prices-title">{t("prices.title")}</h1>
      <ErrorNote error={query.error} />
      <form className="card" onSubmit={submit} noValidate>
        {field("base_fee", t("prices.baseFee"))}
        {field("per_km", t("prices.perKm"))}
        {field("minimum_fee", t("prices.minimumFee"))}
        {field("driver_share", t("prices.driverShare"))}
        <ErrorNote error={save.error} />
        {save.isSuccess && <Note>{t("prices.saved")}</Note>}
        <button type="submit" disabled={save.isPending}>{save.isPending ? t("saving") : t("save")}</button>
      </form>
      <ProofRequirements />
    </section>
  );
}

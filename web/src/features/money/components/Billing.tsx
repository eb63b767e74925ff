// The owner's subscription plan.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { api, call } from "../../../api/client.ts";
import { ErrorNote, Loading, Note, Select } from "../../../components/ui.tsx";
import { formatDateTime } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { moneyKeys } from "../api/keys.ts";
import { billingQuery } from "../api/queries.ts";

const PLANS = ["free", "pro", "enterprise"] as const;

export default function BillingPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const query = useQuery(billingQuery());
  const [plan, setPlan] = useState("free");
  useEffect(() => void (query.data && setPlan(query.data.plan)), [query.data]);
  const save = useMutation({
    mutationFn: () => call(api.PUT("/api/v1/billing/subscription", { body: { plan: plan as (typeof PLANS)[number] } })),
    onSuccess: (data) => client.setQueryData(moneyKeys.billing(), data),
  });
  if (query.isPending) return <Loading />;
  return (
    <section aria-labelledby="billing-title">
      <h1 id="billing-title">{t("billing.title")}</h1>
      <ErrorNote error={query.error} />
      {query.data && (
        <dl className="facts">
          <dt>{t("billing.status")}</dt>
          <dd>{t(`subscriptionStatus.${query.data.status}`)}</dd>
          <dt>{t("billing.periodEnd")}</dt>
          <dd>{formatDateTime(query.data.current_period_end)}</dd>
        </dl>
      )}
      <form className="card" onSubmit={(e: FormEvent) => (e.preventDefault(), save.mutate())}>
        <Select
          label={t("billing.plan")}
          value={plan}
          onChange={(e) => setPlan(e.target.value)}
          options={PLANS.map((p) => [p, t(`billing.plans.${p}`)] as const)}
        />
        <ErrorNote error={save.error} />
        {save.isSuccess && <Note>{t("billing.saved")}</Note>}
        <button type="submit" disabled={save.isPending}>{save.isPending ? t("saving") : t("save")}</button>
      </form>
    </section>
  );
}

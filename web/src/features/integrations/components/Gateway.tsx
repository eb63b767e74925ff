// The owner's payment gateway configuration. The key and secret are write-only.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, call } from "../../../api/client.ts";
import { ErrorNote, Field, Loading, Note } from "../../../components/ui.tsx";
import { config } from "../../../config.ts";
import { useTranslation } from "react-i18next";
import { integrationKeys } from "../api/keys.ts";
import { companyQuery } from "../api/queries.ts";

export default function GatewayPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const company = useQuery(companyQuery());
  const [apiKey, setApiKey] = useState("");
  const [secret, setSecret] = useState("");
  const save = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/companies/me/gateway-config", { body: { api_key: apiKey, webhook_secret: secret } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: integrationKeys.company() });
      setApiKey("");
      setSecret("");
    },
  });
  if (company.isPending) return <Loading />;
  const gateway = company.data?.gateway;
  return (
    <section aria-labelledby="gateway-title">
      <h1 id="gateway-title">{t("gateway.title")}</h1>
      <ErrorNote error={company.error} />
      <p role="status">
        {gateway?.configured
          ? t("gateway.configured", {
            environment: gateway.environment ? t(`environment.${gateway.environment}`) : "",
          })
          : t("gateway.notConfigured")}
      </p>
      {company.data && (
        <div className="field">
          <label htmlFor="webhook-url">{t("gateway.webhookUrl")}</label>
          <input id="webhook-url" readOnly value={`${config.apiUrl}/api/v1/webhooks/gateway/${company.data.id}`} />
        </div>
      )}
      <form className="card" onSubmit={(e: FormEvent) => (e.preventDefault(), save.mutate())}>
        <Field
          label={t("gateway.apiKey")}
          type="password"
          autoComplete="off"
          required
          value={apiKey}
          onChange={(e) => setApiKey(e.target.value)}
        />
        <Field
          label={t("gateway.webhookSecret")}
          type="password"
          autoComplete="off"
          required
          minLength={32}
          value={secret}
          onChange={(e) => setSecret(e.target.value)}
        />
        <ErrorNote error={save.error} />
        {save.isSuccess && <Note>{t("gateway.saved")}</Note>}
        <button type="submit" disabled={save.isPending}>{save.isPending ? t("saving") : t("save")}</button>
      </form>
    </section>
  );
}

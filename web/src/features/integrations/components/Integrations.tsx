// Integrations (docs/integrations.md): API keys (create with scopes, the key shown and copied once, revoke) and
// webhook endpoints (events, the secret shown once, a test event, enable or disable, delete, and each endpoint's
// attempts with their status and timing, every event resendable). Owners and admins.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Schemas } from "../../../api/client.ts";
import { ConfirmDialog, ErrorNote, Field, Note } from "../../../components/ui.tsx";
import { formatDateTime } from "../../../format.ts";
import { integrationKeys } from "../api/keys.ts";
import { apiKeysQuery, webhookAttemptsQuery, webhookEndpointsQuery } from "../api/queries.ts";
import { DataTable } from "../../../components/ui/table/index.ts";

type Scope = Schemas["ApiKeyScope"];
type EventType = Schemas["WebhookEventType"];
const SCOPES: Scope[] = ["deliveries:read", "deliveries:write", "drivers:read", "routes:write", "webhooks:manage"];
const EVENTS: EventType[] = [
  "delivery.created",
  "delivery.status_changed",
  "delivery.completed",
  "delivery.failed",
  "route.published",
  "route.completed",
];

/** A secret shown this once, with a button that copies it. */
function ShownOnce({ label, value }: { label: string; value: string }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  return (
    <div className="card" role="status">
      <p>{t("integrations.shownOnce")}</p>
      <label>
        {label}
        <input readOnly value={value} onFocus={(e) => e.target.select()} />
      </label>
      <button
        type="button"
        onClick={() => void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => {})}
      >
        {copied ? t("integrations.copied") : t("integrations.copy")}
      </button>
    </div>
  );
}

/** Why an endpoint is disabled, as the database writes it (18_integrations.sql), in the reader's language. */
const DISABLED_BY: Record<string, "company" | "failing"> = {
  "disabled by the company": "company",
  "disabled after failing for 5 days": "failing",
};

function DisabledReason({ reason }: { reason: string }) {
  const { t } = useTranslation();
  const known = DISABLED_BY[reason];
  return known ? <>{` (${t(`integrations.disabledBy.${known}`)})`}</> : (
    <>
      {" ("}
      <span lang="en">{reason}</span>
      {")"}
    </>
  );
}

function toggled<T extends string>(all: readonly T[], list: T[], value: T, on: boolean): T[] {
  return all.filter((v) => (v === value ? on : list.includes(v)));
}

function ApiKeys() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["deliveries:read", "deliveries:write"]);
  const [revoking, setRevoking] = useState<string | null>(null);
  const keys = useQuery(apiKeysQuery());
  const create = useMutation({
    mutationFn: () => call(api.POST("/api/v1/api-keys", { body: { name, scopes } })),
    onSuccess: () => {
      setName("");
      void client.invalidateQueries({ queryKey: integrationKeys.apiKeys() });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => call(api.DELETE("/api/v1/api-keys/{id}", { params: { path: { id } } })),
    onSettled: () => void client.invalidateQueries({ queryKey: integrationKeys.apiKeys() }),
  });
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">{t("integrations.keys")}</h2>
      <p>{t("integrations.keysIntro")}</p>
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Field label={t("integrations.keyName")} value={name} onChange={(e) => setName(e.target.value)} required />
        <fieldset>
          <legend>{t("integrations.scopes")}</legend>
          {SCOPES.map((scope) => (
            <label key={scope} className="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => setScopes(toggled(SCOPES, scopes, scope, e.target.checked))}
              />
              <code>{scope}</code> {t(`integrations.scope.${scope.replace(":", "_") as "deliveries_read"}`)}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={create.isPending || scopes.length === 0 || !name.trim()}>
          {t("integrations.createKey")}
        </button>
      </form>
      <ErrorNote error={keys.error ?? create.error ?? revoke.error} />
      {create.data && <ShownOnce label={t("integrations.key")} value={create.data.key} />}
      <DataTable
        items={keys.data?.items ?? []}
        itemKey={(key) => key.id}
        empty={keys.data ? t("integrations.noKeys") : undefined}
        columns={[
          {
            header: t("integrations.keyName"),
            cell: (key) => (
              <>
                {key.name} <code>{key.prefix}…</code>
              </>
            ),
          },
          { header: t("integrations.scopes"), cell: (key) => key.scopes.join(", ") },
          { header: t("integrations.created"), cell: (key) => formatDateTime(key.created_at) },
          {
            header: t("integrations.lastUsed"),
            cell: (key) => (key.last_used_at ? formatDateTime(key.last_used_at) : t("integrations.never")),
          },
          {
            header: t("actions"),
            unlabelled: true,
            cell: (key) => (
              <button type="button" className="danger" onClick={() => setRevoking(key.id)}>
                {t("integrations.revoke", { name: key.name })}
              </button>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={revoking !== null}
        message={t("integrations.revokeConfirm")}
        confirm={t("integrations.revokeYes")}
        onConfirm={() => revoking && revoke.mutate(revoking)}
        onClose={() => setRevoking(null)}
      />
    </section>
  );
}

function Attempts({ endpointId }: { endpointId: string }) {
  const { t } = useTranslation();
  const attempts = useQuery({
    ...webhookAttemptsQuery(endpointId),
    refetchInterval: 3_000,
  });
  const resend = useMutation({
    mutationFn: (id: string) => call(api.POST("/api/v1/webhook-events/{id}/resend", { params: { path: { id } } })),
  });
  return (
    <div>
      <ErrorNote error={attempts.error ?? resend.error} />
      {resend.isSuccess && <Note>{t("integrations.resent")}</Note>}
      <DataTable
        label={t("integrations.attempts")}
        items={attempts.data?.items ?? []}
        itemKey={(a) => `${a.event_id}-${a.attempt}-${a.at}`}
        empty={attempts.data ? t("integrations.noAttempts") : undefined}
        columns={[
          { header: t("integrations.at"), cell: (a) => formatDateTime(a.at) },
          { header: t("integrations.event"), cell: (a) => a.type },
          { header: t("integrations.attempt"), cell: (a) => a.attempt },
          {
            header: t("integrations.status"),
            cell: (a) => (
              <>
                {a.status ?? t("integrations.noAnswer")}
                {a.error && <div className="hint" lang="en">{a.error}</div>}
              </>
            ),
          },
          { header: t("integrations.duration"), cell: (a) => `${a.duration_ms} ms` },
          {
            header: t("actions"),
            unlabelled: true,
            cell: (a) => (
              <button type="button" onClick={() => resend.mutate(a.event_id)}>{t("integrations.resend")}</button>
            ),
          },
        ]}
      />
    </div>
  );
}

function Endpoints() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<EventType[]>(["delivery.created", "delivery.status_changed"]);
  const [deleting, setDeleting] = useState<string | null>(null);
  const endpoints = useQuery(webhookEndpointsQuery());
  const refresh = () => void client.invalidateQueries({ queryKey: integrationKeys.endpoints() });
  const create = useMutation({
    mutationFn: () => call(api.POST("/api/v1/webhook-endpoints", { body: { url, events } })),
    onSuccess: () => {
      setUrl("");
      refresh();
    },
  });
  const test = useMutation({
    mutationFn: (id: string) => call(api.POST("/api/v1/webhook-endpoints/{id}/test", { params: { path: { id } } })),
  });
  const update = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) =>
      call(api.PATCH("/api/v1/webhook-endpoints/{id}", { params: { path: { id } }, body: { enabled } })),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE("/api/v1/webhook-endpoints/{id}", { params: { path: { id } } })),
    onSettled: refresh,
  });
  return (
    <section aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">{t("integrations.endpoints")}</h2>
      <p>{t("integrations.endpointsIntro")}</p>
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <Field
          label={t("integrations.url")}
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          required
        />
        <fieldset>
          <legend>{t("integrations.events")}</legend>
          {EVENTS.map((event) => (
            <label key={event} className="check">
              <input
                type="checkbox"
                checked={events.includes(event)}
                onChange={(e) => setEvents(toggled(EVENTS, events, event, e.target.checked))}
              />
              <code>{event}</code>
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={create.isPending || events.length === 0 || !url.trim()}>
          {t("integrations.createEndpoint")}
        </button>
      </form>
      <ErrorNote error={endpoints.error ?? create.error ?? test.error ?? update.error ?? remove.error} />
      {create.data && <ShownOnce label={t("integrations.secret")} value={create.data.secret} />}
      {test.isSuccess && <Note>{t("integrations.testQueued")}</Note>}
      {endpoints.data?.items.length === 0 && <p>{t("integrations.noEndpoints")}</p>}
      {endpoints.data?.items.map((endpoint) => (
        <article key={endpoint.id} className="card" aria-label={endpoint.url}>
          <h3>
            <code>{endpoint.url}</code>
          </h3>
          <p>
            {endpoint.enabled ? t("integrations.enabled") : t("integrations.disabled")}
            {endpoint.disabled_reason && <DisabledReason reason={endpoint.disabled_reason} />} ·{" "}
            {endpoint.events.join(", ")}
          </p>
          <div className="actions">
            <button type="button" disabled={!endpoint.enabled} onClick={() => test.mutate(endpoint.id)}>
              {t("integrations.sendTest")}
            </button>
            <button
              type="button"
              className="secondary"
              onClick={() => update.mutate({ id: endpoint.id, enabled: !endpoint.enabled })}
            >
              {endpoint.enabled ? t("integrations.disable") : t("integrations.enable")}
            </button>
            <button type="button" className="danger" onClick={() => setDeleting(endpoint.id)}>
              {t("integrations.delete")}
            </button>
          </div>
          <details>
            <summary>{t("integrations.attempts")}</summary>
            <Attempts endpointId={endpoint.id} />
          </details>
        </article>
      ))}
      <ConfirmDialog
        open={deleting !== null}
        message={t("integrations.deleteConfirm")}
        confirm={t("integrations.delete")}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onClose={() => setDeleting(null)}
      />
    </section>
  );
}

export default function IntegrationsPage() {
  const { t } = useTranslation();
  return (
    <section aria-labelledby="integrations-title">
      <h1 id="integrations-title">{t("integrations.title")}</h1>
      <ApiKeys />
      <Endpoints />
    </section>
  );
}

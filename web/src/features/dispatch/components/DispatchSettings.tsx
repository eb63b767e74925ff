// How the company dispatches its deliveries (GET/PUT /api/v1/dispatch/settings, owners and admins;
// docs/dispatch.md): the mode, each explained in words, and its four limits, typed as people write numbers (a
// decimal comma welcome in the distance) and read with the app's one number rule before anything is sent.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Schemas } from "../../../api/client.ts";
import { DecimalField, ErrorNote, Loading, Note, readDecimal } from "../../../components/ui.tsx";
import { formatInputNumber } from "../../../format.ts";
import type { DecimalRules } from "../../../lib/numbers.ts";
import { Link } from "../../../lib/router.tsx";
import { dispatchKeys } from "../api/keys.ts";
import { dispatchSettingsQuery } from "../api/queries.ts";

type Settings = Schemas["DispatchSettings"];
type Mode = Settings["mode"];
const MODES: Mode[] = ["broadcast", "offer", "auto", "routes"];

/** The bounds the API holds each limit to (docs/dispatch.md). */
const RULES = {
  offer_timeout_s: { required: true, min: 10, max: 600, fractionDigits: 0 },
  offer_batch: { required: true, min: 1, max: 20, fractionDigits: 0 },
  max_active_per_driver: { required: true, min: 1, max: 20, fractionDigits: 0 },
  max_distance_km: { required: true, min: 0.5, max: 200, fractionDigits: 2 },
} satisfies Record<string, DecimalRules>;
type Limit = keyof typeof RULES;
const LIMITS = Object.keys(RULES) as Limit[];

export default function DispatchSettingsPage() {
  const { t, i18n } = useTranslation();
  const client = useQueryClient();
  const query = useQuery(dispatchSettingsQuery());
  const [mode, setMode] = useState<Mode>("broadcast");
  const [form, setForm] = useState<Record<Limit, string>>({
    offer_timeout_s: "",
    offer_batch: "",
    max_active_per_driver: "",
    max_distance_km: "",
  });
  const [submitted, setSubmitted] = useState(false);
  // The saved settings, written the way the language writes numbers (2,5 km in Portuguese).
  useEffect(() => {
    if (!query.data) return;
    setMode(query.data.mode);
    setForm(Object.fromEntries(LIMITS.map((name) => [name, formatInputNumber(query.data[name])])) as Record<
      Limit,
      string
    >);
  }, [query.data, i18n.language]);
  const save = useMutation({
    mutationFn: (body: Settings) => call(api.PUT("/api/v1/dispatch/settings", { body })),
    onSuccess: (saved) => client.setQueryData(dispatchKeys.settings(), saved),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    const values: Partial<Record<Limit, number>> = {};
    for (const name of LIMITS) {
      const result = readDecimal(form[name], RULES[name]);
      if (!result.ok) return;
      values[name] = result.value!;
    }
    save.mutate({ mode, ...(values as Record<Limit, number>) });
  }
  const field = (name: Limit) => (
    <DecimalField
      label={t(`dispatch.settings.${name}`)}
      hint={t(`dispatch.settings.${name}Hint`)}
      rules={RULES[name]}
      showProblem={submitted}
      value={form[name]}
      onChange={(e) => {
        save.reset();
        setForm({ ...form, [name]: e.target.value });
      }}
    />
  );
  if (query.isPending) return <Loading />;
  return (
    <section aria-labelledby="dispatch-settings-title">
      <div className="heading">
        <h1 id="dispatch-settings-title">{t("dispatch.settings.title")}</h1>
        <Link to="/dispatch">{t("dispatch.settings.toBoard")}</Link>
      </div>
      <p>{t("dispatch.settings.intro")}</p>
      <ErrorNote error={query.error} />
      <form className="dispatch-settings" onSubmit={submit} noValidate>
        <fieldset className="card modes">
          <legend>{t("dispatch.settings.mode")}</legend>
          {MODES.map((m) => (
            <div key={m} className="mode">
              <input
                id={`dispatch-mode-${m}`}
                type="radio"
                name="mode"
                value={m}
                checked={mode === m}
                aria-describedby={`dispatch-mode-${m}-help`}
                onChange={() => {
                  save.reset();
                  setMode(m);
                }}
              />
              <div>
                <label htmlFor={`dispatch-mode-${m}`}>{t(`dispatch.settings.modes.${m}`)}</label>
                <p id={`dispatch-mode-${m}-help`} className="hint">{t(`dispatch.settings.modeHelp.${m}`)}</p>
              </div>
            </div>
          ))}
        </fieldset>
        <fieldset className="card">
          <legend>{t("dispatch.settings.offers")}</legend>
          <p className="hint">{t("dispatch.settings.offersHint")}</p>
          {field("offer_timeout_s")}
          {field("offer_batch")}
        </fieldset>
        <fieldset className="card">
          <legend>{t("dispatch.settings.who")}</legend>
          <p className="hint">{t("dispatch.settings.whoHint")}</p>
          {field("max_active_per_driver")}
          {field("max_distance_km")}
        </fieldset>
        <ErrorNote error={save.error} />
        {save.isSuccess && <Note>{t("dispatch.settings.saved", { mode: t(`dispatch.settings.modes.${mode}`) })}</Note>}
        <button type="submit" disabled={save.isPending}>{save.isPending ? t("saving") : t("save")}</button>
      </form>
    </section>
  );
}

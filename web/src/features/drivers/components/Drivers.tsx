// Drivers: add, edit, deactivate; who is online (a position accepted in the last 2 minutes) and their last position.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, call, type Driver } from "../../../api/client.ts";
import { Badge, ConfirmDialog, ErrorNote, Field, Loading, MaskedField, Note, Pager } from "../../../components/ui.tsx";
import { formatDateTime } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { displayPhone, isPhone, maskPhone, phoneE164 } from "../../../lib/brazil.ts";
import { can, COMPANY_MANAGERS, useAuth } from "../../../lib/auth.tsx";
import { Link } from "../../../lib/router.tsx";
import { useDriverLocations, useOnlineDrivers } from "../online-drivers.ts";
import { driverKeys } from "../api/keys.ts";
import { driversPageQuery } from "../api/queries.ts";

function DriverRow(
  { driver, editable, online, seen }: { driver: Driver; editable: boolean; online: boolean; seen: string | null },
) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(driver.name);
  const [phone, setPhone] = useState(displayPhone(driver.phone));
  const [submitted, setSubmitted] = useState(false);
  const [confirmingDeactivate, setConfirmingDeactivate] = useState(false);
  const phoneWrong = phone && !isPhone(phone) ? t("input.phone") : null;
  const patch = useMutation({
    mutationFn: (body: { name?: string; phone?: string; active?: boolean }) =>
      call(api.PATCH("/api/v1/drivers/{id}", { params: { path: { id: driver.id } }, body })),
    onSuccess: () => {
      setEditing(false);
      void client.invalidateQueries({ queryKey: driverKeys.lists() });
    },
  });
  return (
    <tr>
      <td data-label={t("drivers.name")}>
        {editing
          ? (
            <form
              onSubmit={(e: FormEvent) => {
                e.preventDefault();
                setSubmitted(true);
                if (!phoneWrong) patch.mutate({ name, ...(phone ? { phone: phoneE164(phone) } : {}) });
              }}
            >
              <Field label={t("drivers.name")} required value={name} onChange={(e) => setName(e.target.value)} />
              <MaskedField
                label={t("drivers.phone")}
                type="tel"
                value={phone}
                mask={maskPhone}
                onValue={setPhone}
                problem={phoneWrong}
                showProblem={submitted}
              />
              <button type="submit">{t("save")}</button>
              <button type="button" onClick={() => setEditing(false)}>{t("cancel")}</button>
            </form>
          )
          : driver.name}{" "}
        {editable && !editing && (
          <Link to={`/drivers/${driver.id}/day`} aria-label={`${t("operations.viewDay")}: ${driver.name}`}>
            {t("operations.viewDay")}
          </Link>
        )}
        <ErrorNote error={patch.error} />
      </td>
      <td data-label={t("drivers.email")}>{driver.email}</td>
      <td data-label={t("drivers.phoneColumn")}>{displayPhone(driver.phone)}</td>
      <td data-label={t("drivers.active")}>
        <Badge
          value={driver.active ? "active" : "inactive"}
          text={driver.active ? t("drivers.active") : t("drivers.inactive")}
        />
      </td>
      <td data-label={t("drivers.online")}>
        <Badge value={online ? "online" : "offline"} text={online ? t("drivers.online") : t("drivers.offlineNow")} />
      </td>
      <td data-label={t("drivers.lastSeen")}>{seen ? formatDateTime(seen) : "—"}</td>
      {editable && (
        <td className="row-actions">
          <button type="button" onClick={() => setEditing(true)}>{t("drivers.edit", { name: driver.name })}</button>
          {" "}
          <button
            type="button"
            onClick={() => (driver.active ? setConfirmingDeactivate(true) : patch.mutate({ active: true }))}
          >
            {driver.active
              ? t("drivers.deactivate", { name: driver.name })
              : t("drivers.activate", { name: driver.name })}
          </button>
          <ConfirmDialog
            open={confirmingDeactivate}
            message={t("drivers.deactivateConfirm", { name: driver.name })}
            confirm={t("drivers.deactivateConfirmYes")}
            onConfirm={() => patch.mutate({ active: false })}
            onClose={() => setConfirmingDeactivate(false)}
          />
        </td>
      )}
    </tr>
  );
}

export default function DriversPage() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const online = useOnlineDrivers();
  const client = useQueryClient();
  const editable = can(identity, COMPANY_MANAGERS);
  const [cursors, setCursors] = useState<string[]>([]);
  const query = useQuery(driversPageQuery(cursors.at(-1)));
  const locations = useDriverLocations();
  const seen = (id: string) => locations.data?.items.find((l) => l.driver_id === id)?.updated_at ?? null;
  const [form, setForm] = useState({ name: "", email: "", phone: "", password: "" });
  const [submitted, setSubmitted] = useState(false);
  const phoneWrong = form.phone && !isPhone(form.phone) ? t("input.phone") : null;
  const create = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/drivers", {
        body: {
          name: form.name,
          email: form.email,
          password: form.password,
          phone: form.phone ? phoneE164(form.phone) : null,
        },
      })),
    onSuccess: () => {
      setSubmitted(false);
      setForm({ name: "", email: "", phone: "", password: "" });
      void client.invalidateQueries({ queryKey: driverKeys.lists() });
    },
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  return (
    <section aria-labelledby="drivers-title">
      <h1 id="drivers-title">{t("drivers.title")}</h1>
      <ErrorNote error={query.error} />
      {query.isPending ? <Loading /> : (
        <table className="cards">
          <thead>
            <tr>
              <th scope="col">{t("drivers.name")}</th>
              <th scope="col">{t("drivers.email")}</th>
              <th scope="col">{t("drivers.phoneColumn")}</th>
              <th scope="col">{t("drivers.active")}</th>
              <th scope="col">{t("drivers.online")}</th>
              <th scope="col">{t("drivers.lastSeen")}</th>
              {editable && (
                <th scope="col">
                  <span className="sr-only">{t("actions")}</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {query.data?.items.length === 0 && (
              <tr>
                <td colSpan={7}>{t("drivers.empty")}</td>
              </tr>
            )}
            {query.data?.items.map((d) => (
              <DriverRow key={d.id} driver={d} editable={editable} online={online.has(d.id)} seen={seen(d.id)} />
            ))}
          </tbody>
        </table>
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
      {editable && (
        <form
          className="card"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            setSubmitted(true);
            if (!phoneWrong) create.mutate();
          }}
          aria-labelledby="add-driver"
        >
          <h2 id="add-driver">{t("drivers.create")}</h2>
          <Field label={t("drivers.name")} required value={form.name} onChange={set("name")} />
          <Field label={t("drivers.email")} type="email" required value={form.email} onChange={set("email")} />
          <MaskedField
            label={t("drivers.phone")}
            type="tel"
            value={form.phone}
            mask={maskPhone}
            onValue={(phone) => setForm({ ...form, phone })}
            problem={phoneWrong}
            showProblem={submitted}
          />
          <Field
            label={t("drivers.password")}
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={form.password}
            onChange={set("password")}
          />
          <ErrorNote error={create.error} />
          {create.isSuccess && <Note>{t("drivers.created", { name: create.data.name })}</Note>}
          <button type="submit" disabled={create.isPending}>
            {create.isPending ? t("drivers.creating") : t("drivers.create")}
          </button>
        </form>
      )}
    </section>
  );
}

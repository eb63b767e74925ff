// Drivers: add, edit, deactivate; who is online (a position accepted in the last 2 minutes) and their last position.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, type FormEvent, type ReactNode, useContext, useState } from "react";
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
import { DataTable } from "../../../components/ui/table/index.ts";

/** A driver's row being edited: what its name cell and its buttons share. */
function useDriverEdit(driver: Driver) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [confirmingDeactivate, setConfirmingDeactivate] = useState(false);
  const patch = useMutation({
    mutationFn: (body: { name?: string; phone?: string; active?: boolean }) =>
      call(api.PATCH("/api/v1/drivers/{id}", { params: { path: { id: driver.id } }, body })),
    onSuccess: () => {
      setEditing(false);
      void client.invalidateQueries({ queryKey: driverKeys.lists() });
    },
  });
  return { editing, setEditing, confirmingDeactivate, setConfirmingDeactivate, patch };
}

const DriverEditContext = createContext<ReturnType<typeof useDriverEdit> | null>(null);
const useRowEdit = () => useContext(DriverEditContext)!;

function DriverEditRow({ item, children }: { item: Driver; children: ReactNode }) {
  return <DriverEditContext.Provider value={useDriverEdit(item)}>{children}</DriverEditContext.Provider>;
}

/** The driver's name, the form that edits it and the day's link. */
function DriverNameCell({ driver, editable }: { driver: Driver; editable: boolean }) {
  const { t } = useTranslation();
  const { editing, setEditing, patch } = useRowEdit();
  const [name, setName] = useState(driver.name);
  const [phone, setPhone] = useState(displayPhone(driver.phone));
  const [submitted, setSubmitted] = useState(false);
  const phoneWrong = phone && !isPhone(phone) ? t("input.phone") : null;
  return (
    <>
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
    </>
  );
}

/** Edit, deactivate or activate a driver. */
function DriverActionsCell({ driver }: { driver: Driver }) {
  const { t } = useTranslation();
  const { setEditing, confirmingDeactivate, setConfirmingDeactivate, patch } = useRowEdit();
  return (
    <>
      <button type="button" onClick={() => setEditing(true)}>{t("drivers.edit", { name: driver.name })}</button>{" "}
      <button
        type="button"
        onClick={() => (driver.active ? setConfirmingDeactivate(true) : patch.mutate({ active: true }))}
      >
        {driver.active ? t("drivers.deactivate", { name: driver.name }) : t("drivers.activate", { name: driver.name })}
      </button>
      <ConfirmDialog
        open={confirmingDeactivate}
        message={t("drivers.deactivateConfirm", { name: driver.name })}
        confirm={t("drivers.deactivateConfirmYes")}
        onConfirm={() => patch.mutate({ active: false })}
        onClose={() => setConfirmingDeactivate(false)}
      />
    </>
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
        <DataTable
          items={query.data?.items ?? []}
          itemKey={(d) => d.id}
          empty={query.data ? t("drivers.empty") : undefined}
          Row={DriverEditRow}
          columns={[
            { header: t("drivers.name"), cell: (d) => <DriverNameCell driver={d} editable={editable} /> },
            { header: t("drivers.email"), cell: (d) => d.email },
            { header: t("drivers.phoneColumn"), cell: (d) => displayPhone(d.phone) },
            {
              header: t("drivers.active"),
              cell: (d) => (
                <Badge
                  value={d.active ? "active" : "inactive"}
                  text={d.active ? t("drivers.active") : t("drivers.inactive")}
                />
              ),
            },
            {
              header: t("drivers.online"),
              cell: (d) => (
                <Badge
                  value={online.has(d.id) ? "online" : "offline"}
                  text={online.has(d.id) ? t("drivers.online") : t("drivers.offlineNow")}
                />
              ),
            },
            {
              header: t("drivers.lastSeen"),
              cell: (d) => {
                const at = seen(d.id);
                return at ? formatDateTime(at) : "—";
              },
            },
            editable && {
              header: t("actions"),
              hiddenHeader: true,
              className: "row-actions",
              cell: (d) => <DriverActionsCell driver={d} />,
            },
          ]}
        />
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

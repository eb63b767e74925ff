// The dispatcher's board (docs/dispatch.md): one map with every open delivery's pickup (pins by where each stands,
// told apart by shape and sign as well as colour) and every online driver with their load; the deliveries nobody
// took first, in a lane of their own; the rest in a list filtered by status, driver and text (filters in the
// address, as the deliveries list keeps them); several pending deliveries selected and assigned to one driver at
// once, each assignment its own request with its own Idempotency-Key and its own result; and each delivery's
// dispatch record a click away. Live: delivery_updated updates the cached lists (lib/deliveries.ts) and
// driver_location the positions (lib/realtime.tsx); nothing waits for a reload.
import { MutationObserver, useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, lazy, type ReactNode, Suspense, useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Delivery, type DriverLocationItem, type Page } from "../api/client.ts";
import { errorMessage } from "../api/errors.ts";
import type { MapMarker } from "../components/MapView.tsx";
import { type MarkerKind, SIGNS } from "../components/markers.ts";
import { Badge, ErrorNote, Field, Loading, Select } from "../components/ui.tsx";
import { formatDateTime, formatTime, shortId } from "../format.ts";
import { can, COMPANY_MANAGERS, useAuth } from "../lib/auth.tsx";
import { applyDelivery } from "../lib/deliveries.ts";
import { BOARD_STATUSES, type BoardFilters, type Lane, laneOf, LANES, loads, onBoard } from "../lib/dispatch.ts";
import { useDriverLocations, useOnlineDrivers } from "../lib/online-drivers.ts";
import { driverLabel } from "../lib/drivers.ts";
import { Link, useSearchParams } from "../lib/router.tsx";
import { WindowText } from "./Deliveries.tsx";
import { DispatchHistory } from "./DispatchHistory.tsx";

const MapView = lazy(() => import("../components/MapView.tsx"));

/** The most deliveries of one status the board reads (10 pages of 100). */
const MAX_PAGES = 10;

/** Every delivery of one status, page after page: the board shows them all, not the newest 20. */
async function everyDelivery(status: (typeof BOARD_STATUSES)[number]): Promise<Page<Delivery>> {
  const items: Delivery[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await call(api.GET("/api/v1/deliveries", { params: { query: { status, limit: 100, cursor } } }));
    items.push(...answer.items);
    if (!answer.next_cursor) break;
    cursor = answer.next_cursor;
  }
  return { items, next_cursor: null };
}

/** The filters the address holds: the lane, the driver, the text. */
const FILTERS = ["status", "driver_id", "q"] as const;
/** The delivery whose dispatch record is open, in the address too (a link to it opens it). */
const HISTORY = "history";

/** A pending delivery assigned from the board, and what came of it. */
interface Assignment {
  delivery: Delivery;
  driverName: string;
  error: unknown;
}

/** A lane's look: the marker's shape and sign beside its name, as the map draws it. */
function LaneSymbol({ kind, text }: { kind: MarkerKind; text?: string }) {
  return (
    <span className={`map-marker map-marker-${kind} symbol`} aria-hidden="true">
      <span>
        <b>{text ?? SIGNS[kind]}</b>
      </span>
    </span>
  );
}

function LaneBadge({ lane }: { lane: Lane }) {
  const { t } = useTranslation();
  return (
    <span className={`lane lane-${lane}`}>
      <LaneSymbol kind={lane} /> {t(`dispatch.lane.${lane}`)}
    </span>
  );
}

/** One delivery on the board: where it stands, its route, its driver, its window; select it, open its record. */
function BoardRow(
  { delivery, driverName, selectable, selected, onSelect, onHistory, historyOpen }: {
    delivery: Delivery;
    driverName: string | null;
    selectable: boolean;
    selected: boolean;
    onSelect: (on: boolean) => void;
    onHistory: () => void;
    historyOpen: boolean;
  },
) {
  const { t } = useTranslation();
  const lane = laneOf(delivery)!;
  return (
    <li className={`board-row lane-row-${lane}`} data-delivery={delivery.id}>
      {selectable && (
        <label className="check select">
          <input type="checkbox" checked={selected} onChange={(e) => onSelect(e.target.checked)} />
          <span className="sr-only">{t("dispatch.board.select", { to: delivery.destination_address })}</span>
        </label>
      )}
      <div className="board-row-body">
        <p className="board-row-head">
          <LaneBadge lane={lane} />
          {delivery.late && <Badge value="late" text={t("lifecycle.late")} />}
          <span className="muted">{formatDateTime(delivery.created_at)}</span>
        </p>
        <p>
          {delivery.origin_address} → <strong>{delivery.destination_address}</strong>
        </p>
        <p className="muted">
          {driverName ? t("dispatch.board.driverIs", { name: driverName }) : t("dispatch.board.noDriver")}
          {(delivery.window_start || delivery.window_end) && (
            <>
              {" · "}
              <WindowText delivery={delivery} />
            </>
          )}
        </p>
        <p className="board-row-actions">
          <button
            type="button"
            className="secondary"
            aria-expanded={historyOpen}
            aria-label={t("dispatch.board.historyOf", { to: delivery.destination_address })}
            onClick={onHistory}
          >
            {t("dispatch.board.history")}
          </button>
          <Link to={`/deliveries/${delivery.id}`} aria-label={t("deliveries.open", { id: shortId(delivery.id) })}>
            {t("dispatch.board.open")}
          </Link>
        </p>
      </div>
    </li>
  );
}

export default function DispatchBoard() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const client = useQueryClient();
  const assigns = can(identity, COMPANY_MANAGERS);
  const [params, setParams] = useSearchParams();
  const filters: BoardFilters = Object.fromEntries(
    FILTERS.map((name) => [name, params.get(name) ?? undefined]).filter(([, value]) => value),
  );
  const historyId = params.get(HISTORY);
  const setParam = (name: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next);
  };
  const [text, setText] = useState(filters.q ?? "");
  useEffect(() => setText(filters.q ?? ""), [filters.q]);

  const lists = useQueries({
    queries: BOARD_STATUSES.map((status) => ({
      // A list of deliveries like any other: applyDelivery keeps it current (a status filter, as the API's).
      queryKey: ["deliveries", { status, board: true }],
      queryFn: () => everyDelivery(status),
    })),
  });
  const deliveries = useMemo(
    () => lists.flatMap((list) => list.data?.items ?? []).sort((a, b) => b.created_at.localeCompare(a.created_at)),
    [lists.map((list) => list.dataUpdatedAt).join()],
  );
  const listError = lists.find((list) => list.error)?.error;
  const loading = lists.some((list) => list.isPending);

  const drivers = useQuery({
    queryKey: ["drivers", "all-active"],
    queryFn: () => call(api.GET("/api/v1/drivers", { params: { query: { limit: 100 } } })),
  });
  const locations = useDriverLocations();
  const online = useOnlineDrivers();
  const load = useMemo(() => loads(deliveries), [deliveries]);
  const nameOf = (id: string | null | undefined) =>
    id ? drivers.data?.items.find((d) => d.id === id)?.name ?? shortId(id) : null;
  const loadText = (id: string) => {
    const count = load.get(id) ?? 0;
    return count === 0 ? t("dispatch.board.noLoad") : t("dispatch.board.load", { count });
  };

  const unassigned = deliveries.filter((d) => laneOf(d) === "unassigned" && onBoard(d, { q: filters.q }));
  const listed = deliveries.filter((d) => laneOf(d) !== "unassigned" && onBoard(d, filters));
  const onlineDrivers: DriverLocationItem[] = useMemo(
    () => (locations.data?.items ?? []).filter((l) => online.has(l.driver_id) && l.lat != null && l.lng != null),
    [locations.data, online],
  );

  // The selection: pending deliveries only (assign takes a pending delivery), kept while they stay pending.
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const pending = new Set(deliveries.filter((d) => d.status === "pending").map((d) => d.id));
  const chosen = [...selected].filter((id) => pending.has(id));
  const select = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const [driverId, setDriverId] = useState("");
  const [assignments, setAssignments] = useState<Assignment[] | null>(null);
  const assign = useMutation({
    // Each delivery its own mutation, with its own key made once when the dispatcher asks: the results are per
    // delivery, and each is tried again as every mutation of the app is (main.tsx: no answer, or 502 to 504) with the
    // same key, so an assignment whose answer was lost happens once. The batch itself is never tried again.
    retry: false,
    mutationFn: async (
      { items, driver }: { items: { delivery: Delivery; key: string }[]; driver: string },
    ): Promise<Assignment[]> => {
      const driverName = nameOf(driver) ?? "";
      const results = await Promise.allSettled(items.map(({ delivery, key }) =>
        new MutationObserver(client, {
          mutationFn: () =>
            call(api.POST("/api/v1/deliveries/{id}/assign", {
              params: { path: { id: delivery.id } },
              body: { driver_id: driver },
              headers: { "Idempotency-Key": key },
            })),
        }).mutate()
      ));
      return results.map((result, i) => {
        if (result.status === "fulfilled") {
          applyDelivery(client, result.value);
          return { delivery: result.value, driverName, error: null };
        }
        return { delivery: items[i].delivery, driverName, error: result.reason };
      });
    },
    onSuccess: (results) => {
      setAssignments(results);
      // The assigned ones leave the selection; the others stay, to try again or assign elsewhere.
      setSelected(new Set(results.filter((r) => r.error).map((r) => r.delivery.id)));
    },
  });
  const submitAssign = (event: FormEvent) => {
    event.preventDefault();
    if (!driverId || chosen.length === 0) return;
    const byId = new Map(deliveries.map((d) => [d.id, d]));
    assign.mutate({
      driver: driverId,
      items: chosen.map((id) => ({ delivery: byId.get(id)!, key: crypto.randomUUID() })),
    });
  };

  const historyDelivery = deliveries.find((d) => d.id === historyId);
  const historyFallback = useQuery({
    queryKey: ["delivery", historyId],
    enabled: !!historyId && !historyDelivery,
    queryFn: () => call(api.GET("/api/v1/deliveries/{id}", { params: { path: { id: historyId! } } })),
  });
  const shownHistory = historyDelivery ?? historyFallback.data;
  const openHistory = (id: string) => setParam(HISTORY, historyId === id ? null : id);
  const closeHistory = () => {
    setParam(HISTORY, null);
    // Back to the delivery's own button, where the dispatcher was.
    document.querySelector<HTMLElement>(`li[data-delivery="${historyId}"] button[aria-expanded]`)?.focus();
  };
  // The record opened is where the focus goes (from a list a long way above it on a phone).
  useEffect(() => {
    if (historyId) document.getElementById("dispatch-history-title")?.focus();
  }, [historyId, !!shownHistory]);

  // Drivers first: a delivery's pin is drawn over a driver standing at its pickup.
  const markers: MapMarker[] = useMemo(() => [
    ...onlineDrivers.map((l) => ({
      id: `driver:${l.driver_id}`,
      kind: "load" as const,
      lat: l.lat!,
      lng: l.lng!,
      text: String(load.get(l.driver_id) ?? 0),
      label: t("dispatch.board.driverPin", { name: l.name, load: loadText(l.driver_id) }),
    })),
    ...[...unassigned, ...listed].map((d) => {
      const lane = laneOf(d)!;
      return {
        id: d.id,
        kind: lane,
        lat: d.origin.lat,
        lng: d.origin.lng,
        label: t("dispatch.board.pin", {
          lane: t(`dispatch.lane.${lane}`),
          from: d.origin_address,
          to: d.destination_address,
        }),
      };
    }),
  ], [
    unassigned.map((d) => d.id + d.updated_at).join(),
    listed.map((d) => d.id + d.updated_at).join(),
    onlineDrivers,
    load,
    t,
  ]);

  const rowOf = (d: Delivery): ReactNode => (
    <BoardRow
      key={d.id}
      delivery={d}
      driverName={nameOf(d.driver_id)}
      selectable={assigns && d.status === "pending"}
      selected={selected.has(d.id)}
      onSelect={(on) => select(d.id, on)}
      onHistory={() => openHistory(d.id)}
      historyOpen={historyId === d.id}
    />
  );
  const selectableShown = [...unassigned, ...listed].filter((d) => d.status === "pending").map((d) => d.id);
  const allShownSelected = selectableShown.length > 0 && selectableShown.every((id) => selected.has(id));
  const activeDrivers = (drivers.data?.items ?? []).filter((d) => d.active);

  return (
    <section aria-labelledby="board-title" className="board">
      <div className="heading">
        <h1 id="board-title">{t("dispatch.board.title")}</h1>
        {assigns && <Link to="/dispatch/settings">{t("dispatch.board.toRules")}</Link>}
      </div>
      <ErrorNote error={listError} />

      <section
        aria-labelledby="unassigned-title"
        className={unassigned.length > 0 ? "unassigned-lane attention" : "unassigned-lane"}
      >
        <h2 id="unassigned-title">
          <LaneSymbol kind="unassigned" /> {t("dispatch.board.unassignedTitle", { count: unassigned.length })}
        </h2>
        {loading ? <Loading /> : unassigned.length === 0 ? <p>{t("dispatch.board.unassignedNone")}</p> : (
          <>
            <p role="status">{t("dispatch.board.unassignedHint", { count: unassigned.length })}</p>
            <ul className="board-list" aria-labelledby="unassigned-title">{unassigned.map(rowOf)}</ul>
          </>
        )}
      </section>

      {assigns && (
        <form className="card assign-bar" onSubmit={submitAssign} aria-labelledby="assign-title">
          <h2 id="assign-title" className="sr-only">{t("dispatch.board.assignTitle")}</h2>
          <p role="status">
            {chosen.length === 0
              ? t("dispatch.board.selectHint")
              : t("dispatch.board.selected", { count: chosen.length })}
          </p>
          <div className="assign-fields">
            <Select
              label={t("dispatch.board.assignTo")}
              value={driverId}
              onChange={(e) => setDriverId(e.target.value)}
              options={[
                ["", "—"],
                ...activeDrivers.map((d) =>
                  [
                    d.id,
                    t("dispatch.board.driverOption", {
                      name: driverLabel(d, activeDrivers),
                      state: online.has(d.id) ? t("dispatch.board.online") : t("dispatch.board.offline"),
                      load: loadText(d.id),
                    }),
                  ] as const
                ),
              ]}
            />
            <button type="submit" disabled={assign.isPending || !driverId || chosen.length === 0}>
              {assign.isPending
                ? t("dispatch.board.assigning")
                : chosen.length === 0
                ? t("dispatch.board.assignNone")
                : t("dispatch.board.assign", { count: chosen.length })}
            </button>
            {chosen.length > 0 && (
              <button type="button" className="secondary" onClick={() => setSelected(new Set())}>
                {t("dispatch.board.clearSelection")}
              </button>
            )}
          </div>
          <ErrorNote error={assign.error} />
          {assignments && (
            <div className="assign-results" aria-labelledby="assign-results-title">
              <h3 id="assign-results-title">
                {t("dispatch.board.results", {
                  ok: assignments.filter((a) => !a.error).length,
                  count: assignments.length,
                })}
              </h3>
              <ul className="list" role="status">
                {assignments.map((a) => (
                  <li key={a.delivery.id} className={a.error ? "failed" : "done"}>
                    {a.error
                      ? t("dispatch.board.failedOne", {
                        to: a.delivery.destination_address,
                        why: errorMessage(a.error),
                      })
                      : t("dispatch.board.assignedOne", { to: a.delivery.destination_address, driver: a.driverName })}
                  </li>
                ))}
              </ul>
              <button type="button" className="secondary" onClick={() => setAssignments(null)}>
                {t("dispatch.board.dismissResults")}
              </button>
            </div>
          )}
        </form>
      )}

      <div className="board-grid">
        <section aria-labelledby="board-list-title" className="board-main">
          <h2 id="board-list-title">{t("dispatch.board.listTitle", { count: listed.length })}</h2>
          <form
            className="search"
            role="search"
            onSubmit={(e) => (e.preventDefault(), setParam("q", text.trim() || null))}
          >
            <Field
              label={t("dispatch.board.search")}
              type="search"
              value={text}
              placeholder={t("dispatch.board.searchHint")}
              onChange={(e) => setText(e.target.value)}
              maxLength={100}
            />
            <button type="submit">{t("lifecycle.search")}</button>
          </form>
          <div className="filters">
            <Select
              label={t("dispatch.board.filterStatus")}
              value={filters.status ?? ""}
              onChange={(e) => setParam("status", e.target.value || null)}
              options={[
                ["", t("deliveries.any")],
                ...LANES.filter((l) => l !== "unassigned").map((l) => [l, t(`dispatch.lane.${l}`)] as const),
              ]}
            />
            <Select
              label={t("lifecycle.filterDriver")}
              value={filters.driver_id ?? ""}
              onChange={(e) => setParam("driver_id", e.target.value || null)}
              options={[
                ["", t("deliveries.any")],
                ...(drivers.data?.items ?? []).map((d, _, all) => [d.id, driverLabel(d, all)] as const),
              ]}
            />
            {Object.keys(filters).length > 0 && (
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  const next = new URLSearchParams();
                  if (historyId) next.set(HISTORY, historyId);
                  setText("");
                  setParams(next);
                }}
              >
                {t("lifecycle.clearFilters")}
              </button>
            )}
          </div>
          {assigns && selectableShown.length > 0 && (
            <label className="check">
              <input
                type="checkbox"
                checked={allShownSelected}
                onChange={(e) =>
                  setSelected((old) => {
                    const next = new Set(old);
                    for (const id of selectableShown) e.target.checked ? next.add(id) : next.delete(id);
                    return next;
                  })}
              />{" "}
              {t("dispatch.board.selectAll", { count: selectableShown.length })}
            </label>
          )}
          {loading
            ? <Loading />
            : listed.length === 0
            ? <p>{t("dispatch.board.empty")}</p>
            : <ul className="board-list" aria-labelledby="board-list-title">{listed.map(rowOf)}</ul>}
        </section>

        <div className="board-side">
          {shownHistory && (
            <div className="card history-panel">
              <DispatchHistory
                delivery={shownHistory}
                headingId="dispatch-history-title"
                title={t("dispatch.board.historyTitle", { to: shownHistory.destination_address })}
              />
              <button type="button" className="secondary" onClick={closeHistory}>
                {t("dispatch.board.closeHistory")}
              </button>
            </div>
          )}
          <Suspense fallback={<Loading />}>
            <MapView
              markers={markers}
              // Every open delivery in view again when one comes or goes (drivers moving do not move the view).
              fitKey={[...unassigned, ...listed].map((d) => d.id).sort().join()}
              label={t("dispatch.board.map")}
              onMarkerClick={(id) => !id.startsWith("driver:") && openHistory(id)}
            />
          </Suspense>
          <ul className="legend" aria-label={t("dispatch.board.legend")}>
            {LANES.map((lane) => (
              <li key={lane}>
                <LaneSymbol kind={lane} /> {t(`dispatch.lane.${lane}`)}
              </li>
            ))}
            <li>
              <LaneSymbol kind="load" text="2" /> {t("dispatch.board.legendDriver")}
            </li>
          </ul>
          <section aria-labelledby="online-title">
            <h2 id="online-title">{t("dispatch.board.onlineTitle", { count: onlineDrivers.length })}</h2>
            <ErrorNote error={locations.error} />
            {onlineDrivers.length === 0 ? <p>{t("dispatch.board.onlineNone")}</p> : (
              <ul className="list online-drivers">
                {onlineDrivers.map((l) => (
                  <li key={l.driver_id} data-driver={l.driver_id}>
                    {t("dispatch.board.onlineLine", {
                      name: l.name,
                      load: loadText(l.driver_id),
                      at: formatTime(l.updated_at),
                    })}
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>
      </div>
    </section>
  );
}

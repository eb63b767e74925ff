// The dispatcher's board (docs/dispatch.md, DESIGN.md §11.5): one screen for an operation. On a wide screen the lists,
// the map and the drivers stand side by side at the window's full height (only the lists scroll, virtualized:
// BoardList.tsx), the assign bar above them always in view; on a phone the same parts are stacked, the assign bar
// kept at the top while the page scrolls. The deliveries nobody took come first, in a lane of their own; the rest
// in a list filtered by status, driver and text (filters in the address). A row says who receives, the order
// number, the window and how late it is. Pending deliveries are selected and assigned to one driver at once, by the
// assign bar, by dragging them onto a driver, or from the keyboard (BoardShortcuts lists the keys on screen), each
// assignment its own request with its own Idempotency-Key and its own result. The map shows each pickup place once
// (with how many deliveries wait there), each drop-off, the online drivers with their load and the live routes as
// lines. Live: delivery_updated updates the cached lists (features/deliveries/api/cache.ts) and driver_location the positions
// (lib/realtime.tsx); nothing waits for a reload.
import { MutationObserver, useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  type DragEvent,
  type FormEvent,
  type KeyboardEvent as ReactKeyboardEvent,
  lazy,
  Suspense,
  useEffect,
  useMemo,
  useRef,
  useState,
} from "react";
import { useTranslation } from "react-i18next";
import { api, call, type Delivery, type Page } from "../../../api/client.ts";
import { errorMessage } from "../../../api/errors.ts";
import type { MapLine, MapMarker } from "../../../components/MapView.tsx";
import { ErrorNote, Field, Loading, Select } from "../../../components/ui.tsx";
import { formatTime } from "../../../format.ts";
import { can, COMPANY_MANAGERS, useAuth } from "../../../lib/auth.tsx";
import { useClock } from "../../../lib/clock.ts";
import { applyDelivery } from "../../deliveries/api/cache.ts";
import {
  BOARD_STATUSES,
  type BoardFilters,
  laneOf,
  LANES,
  loads,
  onBoard,
  orderNumber,
  pickupGroups,
  ROUTE_LINE_COLOURS,
  routeLine,
} from "../dispatch.ts";
import { driverLabel } from "../../drivers/drivers.ts";
import { useDriverLocations, useOnlineDrivers } from "../../drivers/online-drivers.ts";
import { useRealtimeEvent } from "../../../lib/realtime.tsx";
import { Link, useSearchParams } from "../../../lib/router.tsx";
import { BoardList, DRAG_TYPE, LaneSymbol, type RowProps } from "./BoardList.tsx";
import { DispatchHistory } from "./DispatchHistory.tsx";
import { dispatchKeys } from "../api/keys.ts";
import { boardDeliveriesQuery } from "../api/queries.ts";
import { deliveryQuery } from "../../deliveries/api/queries.ts";
import { everyDriverQuery } from "../../drivers/api/queries.ts";
import { routeKeys } from "../../routes/api/keys.ts";
import { liveRoutesQuery } from "../../routes/api/queries.ts";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

/** The filters the address holds: the lane, the driver, the text. */
const FILTERS = ["status", "driver_id", "q"] as const;
/** The delivery whose dispatch record is open, in the address too (a link to it opens it). */
const HISTORY = "history";
const SHORTCUTS_ID = "board-shortcuts";

/** A pending delivery assigned from the board, and what came of it. */
interface Assignment {
  delivery: Delivery;
  driverName: string;
  error: unknown;
}

/** Whether a key was typed into a field (where the board's shortcuts must not act). */
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));

/** What each shortcut does, in words (dispatch.board.keys). */
const KEY_WORDS = {
  move: "dispatch.board.keys.move",
  select: "dispatch.board.keys.select",
  history: "dispatch.board.keys.history",
  open: "dispatch.board.keys.open",
  unassigned: "dispatch.board.keys.unassigned",
  list: "dispatch.board.keys.list",
  drivers: "dispatch.board.keys.drivers",
  assignTo: "dispatch.board.keys.assignTo",
  search: "dispatch.board.keys.search",
  escape: "dispatch.board.keys.escape",
  help: "dispatch.board.keys.help",
} as const;

/** The keys of the board, on screen (and describing the lists to screen readers). */
function BoardShortcuts({ open, onToggle }: { open: boolean; onToggle: (open: boolean) => void }) {
  const { t } = useTranslation();
  const keys: [string, keyof typeof KEY_WORDS][] = [
    ["↑ ↓", "move"],
    ["Espaço", "select"],
    ["Enter", "history"],
    ["o", "open"],
    ["u", "unassigned"],
    ["l", "list"],
    ["e", "drivers"],
    ["a", "assignTo"],
    ["/", "search"],
    ["Esc", "escape"],
    ["?", "help"],
  ];
  return (
    <details className="shortcuts" open={open} onToggle={(e) => onToggle((e.target as HTMLDetailsElement).open)}>
      <summary aria-keyshortcuts="?">{t("dispatch.board.keys.title")}</summary>
      <ul id={SHORTCUTS_ID}>
        {keys.map(([key, what]) => (
          <li key={what}>
            <kbd>{key === "Espaço" ? t("dispatch.board.keys.space") : key}</kbd> {t(KEY_WORDS[what])}
          </li>
        ))}
      </ul>
    </details>
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
  const now = useClock(10_000);

  const lists = useQueries({
    // Lists of deliveries like any other: applyDelivery keeps them current (a status filter, as the API's).
    queries: BOARD_STATUSES.map(boardDeliveriesQuery),
  });
  const deliveries = useMemo(
    () => lists.flatMap((list) => list.data?.items ?? []).sort((a, b) => b.created_at.localeCompare(a.created_at)),
    [lists.map((list) => list.dataUpdatedAt).join()],
  );
  const byId = useMemo(() => new Map(deliveries.map((d) => [d.id, d])), [deliveries]);
  const listError = lists.find((list) => list.error)?.error;
  const loading = lists.some((list) => list.isPending);

  const drivers = useQuery(everyDriverQuery());
  const allDrivers = drivers.data?.items ?? [];
  // Each driver as the board names it: namesakes told apart (their phone's last digits, else their e-mail).
  const labels = useMemo(
    () => new Map(allDrivers.map((d) => [d.id, driverLabel(d, allDrivers)])),
    [drivers.data],
  );
  const nameOf = (id: string | null | undefined) => (id ? labels.get(id) ?? id.slice(0, 8) : null);
  const locations = useDriverLocations();
  const online = useOnlineDrivers();
  const load = useMemo(() => loads(deliveries), [deliveries]);
  const loadText = (id: string) => {
    const count = load.get(id) ?? 0;
    return count === 0 ? t("dispatch.board.noLoad") : t("dispatch.board.load", { count });
  };

  // The routes out now, as lines: fetched again when a delivery changes (a stop done), a few times a minute at most.
  const routes = useQuery({ ...liveRoutesQuery(), refetchInterval: 60_000 });
  const routesStale = useRef<ReturnType<typeof setTimeout> | null>(null);
  useRealtimeEvent((event) => {
    if (event !== "delivery_updated" || routesStale.current) return;
    routesStale.current = setTimeout(() => {
      routesStale.current = null;
      void client.invalidateQueries({ queryKey: routeKeys.live() });
    }, 5_000);
  });
  useEffect(() => () => clearTimeout(routesStale.current ?? undefined), []);

  const unassigned = useMemo(
    () => deliveries.filter((d) => laneOf(d) === "unassigned" && onBoard(d, { q: filters.q })),
    [deliveries, filters.q],
  );
  const listed = useMemo(
    () => deliveries.filter((d) => laneOf(d) !== "unassigned" && onBoard(d, filters)),
    [deliveries, filters.q, filters.status, filters.driver_id],
  );
  const onlineDrivers = useMemo(
    () =>
      (locations.data?.items ?? [])
        .filter((l) => online.has(l.driver_id) && l.lat != null && l.lng != null)
        .map((l) => ({ ...l, label: labels.get(l.driver_id) ?? l.name }))
        .sort((a, b) => a.label.localeCompare(b.label, "pt-BR")),
    [locations.data, online, labels],
  );

  // The selection: pending deliveries only (assign takes a pending delivery), kept while they stay pending.
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const chosen = [...selected].filter((id) => byId.get(id)?.status === "pending");
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
          // On the board at once, in its new list (applyDelivery fetches that list again, which takes a while).
          client.setQueryData<Page<Delivery>>(
            dispatchKeys.board(result.value.status),
            (page) =>
              page && !page.items.some((d) => d.id === result.value.id)
                ? { ...page, items: [result.value, ...page.items] }
                : page,
          );
          return { delivery: result.value, driverName, error: null };
        }
        return { delivery: items[i].delivery, driverName, error: result.reason };
      });
    },
    onSuccess: (results) => {
      setAssignments(results);
      // The assigned ones leave the selection; the others stay, to try again or assign elsewhere.
      const failed = new Set(results.filter((r) => r.error).map((r) => r.delivery.id));
      const sent = new Set(results.map((r) => r.delivery.id));
      setSelected((old) => new Set([...old].filter((id) => !sent.has(id) || failed.has(id))));
    },
  });
  /** Assigns these pending deliveries to `driver`, each its own request. */
  const assignTo = (driver: string, ids: string[]) => {
    const items = ids.map((id) => byId.get(id)).filter((d): d is Delivery => d?.status === "pending");
    if (!driver || items.length === 0 || assign.isPending) return;
    assign.mutate({ driver, items: items.map((delivery) => ({ delivery, key: crypto.randomUUID() })) });
  };
  const submitAssign = (event: FormEvent) => {
    event.preventDefault();
    assignTo(driverId, chosen);
  };

  // Dragging: a selected row carries the whole selection, another row itself; a driver is where it is dropped.
  const [dropOn, setDropOn] = useState<string | null>(null);
  const dragOver = (event: DragEvent, driver: string) => {
    if (!event.dataTransfer.types.includes(DRAG_TYPE)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    setDropOn(driver);
  };
  const drop = (event: DragEvent, driver: string) => {
    setDropOn(null);
    const data = event.dataTransfer.getData(DRAG_TYPE);
    if (!data) return;
    event.preventDefault();
    assignTo(driver, JSON.parse(data) as string[]);
  };

  const historyDelivery = byId.get(historyId ?? "");
  const historyFallback = useQuery({
    ...deliveryQuery(historyId!),
    enabled: !!historyId && !historyDelivery,
  });
  const shownHistory = historyDelivery ?? historyFallback.data;
  const openHistory = (id: string) => setParam(HISTORY, historyId === id ? null : id);
  const closeHistory = () => {
    setParam(HISTORY, null);
    // Back to the delivery's row, where the dispatcher was.
    document.querySelector<HTMLElement>(`li[data-delivery="${historyId}"]`)?.focus();
  };
  // The record opened is where the focus goes when it was opened from a button (a row's Enter keeps the row's).
  useEffect(() => {
    if (historyId && !document.activeElement?.closest("li[data-delivery]")) {
      document.getElementById("dispatch-history-title")?.focus();
    }
  }, [historyId, !!shownHistory]);

  // The keys that act anywhere on the board (the lists' own are in BoardList.tsx).
  const [helpOpen, setHelpOpen] = useState(false);
  const board = useRef<HTMLElement>(null);
  const keys = useRef<(event: KeyboardEvent) => void>(() => {});
  keys.current = (event: KeyboardEvent) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      if (helpOpen) setHelpOpen(false);
      else if (historyId) closeHistory();
      else if (selected.size > 0) setSelected(new Set());
      else return;
      event.preventDefault();
      return;
    }
    if (typing(event.target) || document.querySelector("dialog[open]")) return;
    const root = board.current;
    const focusIn = (selector: string) => {
      const element = root?.querySelector<HTMLElement>(selector);
      if (!element) return false;
      element.focus();
      element.scrollIntoView({ block: "nearest" });
      return true;
    };
    const actions: Record<string, () => boolean> = {
      "/": () => focusIn("input[type=search]"),
      u: () => focusIn(".unassigned-lane li[tabindex='0']"),
      l: () => focusIn(".board-main li[tabindex='0']"),
      e: () => focusIn(".online-drivers button"),
      a: () => focusIn(".assign-bar select"),
      "?": () => (setHelpOpen(!helpOpen), true),
    };
    if (actions[event.key]?.()) event.preventDefault();
  };
  useEffect(() => {
    const listener = (event: KeyboardEvent) => keys.current(event);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);

  // The map: drivers first (a delivery's pin is drawn over a driver standing at its pickup), then each pickup place
  // once, then each drop-off; the live routes as lines.
  const shown = useMemo(() => [...unassigned, ...listed], [unassigned, listed]);
  const groups = useMemo(() => pickupGroups(shown), [shown]);
  const positions = useMemo(
    () => new Map(onlineDrivers.map((l) => [l.driver_id, { lat: l.lat!, lng: l.lng! }])),
    [onlineDrivers],
  );
  const markers: MapMarker[] = useMemo(() => [
    ...onlineDrivers.map((l) => ({
      id: `driver:${l.driver_id}`,
      kind: "load" as const,
      lat: l.lat!,
      lng: l.lng!,
      text: String(load.get(l.driver_id) ?? 0),
      label: t("dispatch.board.driverPin", { name: l.label, load: loadText(l.driver_id) }),
    })),
    ...groups.map((g) => ({
      id: `pickup:${g.key}`,
      kind: g.lane,
      lat: g.lat,
      lng: g.lng,
      text: g.ids.length > 1 ? String(g.ids.length) : undefined,
      label: t("dispatch.board.pickupPin", {
        count: g.ids.length,
        from: g.address,
        lane: t(`dispatch.lane.${g.lane}`),
      }),
    })),
    ...shown.map((d) => ({
      id: `dropoff:${d.id}`,
      kind: "dropoff" as const,
      lat: d.destination.lat,
      lng: d.destination.lng,
      color: laneOf(d) === "unassigned" ? "#b91c1c" : d.driver_id ? "#1d4ed8" : "#b45309",
      label: t("dispatch.board.dropoffPin", {
        to: d.destination_address,
        recipient: d.recipient_name || t("dispatch.board.noRecipient"),
        order: orderNumber(d),
        lane: t(`dispatch.lane.${laneOf(d)!}`),
      }),
    })),
  ], [shown, groups, onlineDrivers, load, t]);
  const routeColours = useRef(new Map<string, string>());
  const lines: MapLine[] = useMemo(() =>
    (routes.data ?? []).map((route) => {
      const colours = routeColours.current;
      if (!colours.has(route.id)) colours.set(route.id, ROUTE_LINE_COLOURS[colours.size % ROUTE_LINE_COLOURS.length]);
      return {
        id: route.id,
        kind: "route" as const,
        color: colours.get(route.id),
        points: routeLine(route, positions.get(route.driver_id)),
      };
    }), [routes.data, positions]);
  const onMarker = (id: string) => {
    if (id.startsWith("dropoff:")) openHistory(id.slice("dropoff:".length));
    else if (id.startsWith("pickup:")) {
      const group = groups.find((g) => `pickup:${g.key}` === id);
      if (group && group.ids.length === 1) openHistory(group.ids[0]);
      else if (group) setParam("q", group.address);
    }
  };

  const rowProps: RowProps = {
    driverName: nameOf,
    selectable: (d) => assigns && d.status === "pending",
    selected,
    onSelect: select,
    onHistory: openHistory,
    historyId,
    dragIds: (d) => (selected.has(d.id) ? chosen : [d.id]),
    now,
  };
  const selectableShown = shown.filter((d) => d.status === "pending").map((d) => d.id);
  const allShownSelected = selectableShown.length > 0 && selectableShown.every((id) => selected.has(id));
  const activeDrivers = allDrivers.filter((d) => d.active);
  const driverById = useMemo(() => new Map(allDrivers.map((d) => [d.id, d])), [drivers.data]);

  const moveAmongDrivers = (event: ReactKeyboardEvent<HTMLUListElement>) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
    const buttons = [...event.currentTarget.querySelectorAll<HTMLButtonElement>("button")];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const next = event.key === "Home"
      ? 0
      : event.key === "End"
      ? buttons.length - 1
      : Math.max(0, Math.min(buttons.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)));
    event.preventDefault();
    buttons[next]?.focus();
  };

  return (
    <section aria-labelledby="board-title" className="board board-screen" ref={board}>
      <div className="heading board-heading">
        <h1 id="board-title">{t("dispatch.board.title")}</h1>
        {assigns && <Link to="/dispatch/settings">{t("dispatch.board.toRules")}</Link>}
        <BoardShortcuts open={helpOpen} onToggle={setHelpOpen} />
      </div>
      <ErrorNote error={listError} />

      {assigns && (
        <form className="card assign-bar" onSubmit={submitAssign} aria-labelledby="assign-title">
          <h2 id="assign-title" className="sr-only">{t("dispatch.board.assignTitle")}</h2>
          <p role="status" className="assign-count">
            {chosen.length === 0
              ? t("dispatch.board.selectHint")
              : t("dispatch.board.selected", { count: chosen.length })}
          </p>
          <div className="assign-fields">
            <Select
              label={t("dispatch.board.assignTo")}
              value={driverId}
              aria-keyshortcuts="a"
              onChange={(e) => setDriverId(e.target.value)}
              options={[
                ["", "—"],
                ...activeDrivers.map((d) =>
                  [
                    d.id,
                    t("dispatch.board.driverOption", {
                      name: labels.get(d.id) ?? d.name,
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
        <div className="board-lists">
          <section
            aria-labelledby="unassigned-title"
            className={unassigned.length > 0 ? "unassigned-lane attention" : "unassigned-lane"}
          >
            <h2 id="unassigned-title">
              <LaneSymbol kind="unassigned" /> {t("dispatch.board.unassignedTitle", { count: unassigned.length })}
            </h2>
            {loading ? <Loading /> : unassigned.length === 0 ? <p>{t("dispatch.board.unassignedNone")}</p> : (
              <>
                <p className="hint">{t("dispatch.board.unassignedHint", { count: unassigned.length })}</p>
                <BoardList
                  items={unassigned}
                  labelledBy="unassigned-title"
                  rowProps={rowProps}
                  className="lane-scroll"
                  shortcutsId={SHORTCUTS_ID}
                />
              </>
            )}
          </section>

          <section aria-labelledby="board-list-title" className="board-main">
            <div className="board-list-top">
              <h2 id="board-list-title">{t("dispatch.board.listTitle", { count: listed.length })}</h2>
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
            </div>
            <div className="filters board-filters">
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
                  aria-keyshortcuts="/"
                  onChange={(e) => setText(e.target.value)}
                  maxLength={100}
                />
                <button type="submit">{t("lifecycle.search")}</button>
              </form>
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
                  ...allDrivers.map((d) => [d.id, labels.get(d.id) ?? d.name] as const),
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
            {loading ? <Loading /> : listed.length === 0 ? <p>{t("dispatch.board.empty")}</p> : (
              <BoardList
                items={listed}
                labelledBy="board-list-title"
                rowProps={rowProps}
                className="main-scroll"
                shortcutsId={SHORTCUTS_ID}
              />
            )}
          </section>
        </div>

        <div className="board-map">
          <Suspense fallback={<Loading />}>
            <MapView
              markers={markers}
              lines={lines}
              // Every open delivery in view again when one comes or goes (drivers moving do not move the view).
              fitKey={shown.map((d) => d.id).sort().join()}
              label={t("dispatch.board.map")}
              onMarkerClick={onMarker}
            />
          </Suspense>
          <ul className="legend" aria-label={t("dispatch.board.legend")}>
            {LANES.map((lane) => (
              <li key={lane}>
                <LaneSymbol kind={lane} /> {t(`dispatch.lane.${lane}`)}
              </li>
            ))}
            <li>
              <LaneSymbol kind="dropoff" text="" /> {t("dispatch.board.legendDropoff")}
            </li>
            <li>
              <LaneSymbol kind="load" text="2" /> {t("dispatch.board.legendDriver")}
            </li>
          </ul>
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
        </div>

        <section aria-labelledby="online-title" className="board-drivers">
          <h2 id="online-title">{t("dispatch.board.onlineTitle", { count: onlineDrivers.length })}</h2>
          <p className="hint" id="drivers-hint">
            {chosen.length > 0
              ? t("dispatch.board.driversAssignHint", { count: chosen.length })
              : t("dispatch.board.driversHint")}
          </p>
          <ErrorNote error={locations.error} />
          {onlineDrivers.length === 0
            ? <p>{t("dispatch.board.onlineNone")}</p>
            : (
              <ul className="online-drivers" onKeyDown={moveAmongDrivers} aria-keyshortcuts="e">
                {onlineDrivers.map((l) => {
                  const vehicle = driverById.get(l.driver_id)?.vehicle;
                  return (
                    <li key={l.driver_id} data-driver={l.driver_id}>
                      <button
                        type="button"
                        className={`driver-target${dropOn === l.driver_id ? " drop" : ""}${
                          filters.driver_id === l.driver_id ? " chosen" : ""
                        }`}
                        aria-describedby="drivers-hint"
                        aria-pressed={chosen.length === 0 ? filters.driver_id === l.driver_id : undefined}
                        onClick={() =>
                          chosen.length > 0
                            ? assignTo(l.driver_id, chosen)
                            : setParam("driver_id", filters.driver_id === l.driver_id ? null : l.driver_id)}
                        onDragOver={(e) => dragOver(e, l.driver_id)}
                        onDragEnter={(e) => dragOver(e, l.driver_id)}
                        onDragLeave={() => setDropOn((on) => (on === l.driver_id ? null : on))}
                        onDrop={(e) => drop(e, l.driver_id)}
                      >
                        <span className="driver-line">
                          {t("dispatch.board.onlineLine", {
                            name: l.label,
                            load: loadText(l.driver_id),
                            at: formatTime(l.updated_at),
                          })}
                        </span>
                        {vehicle && (
                          <span className="driver-vehicle">
                            {[t(`routes.vehicleType.${vehicle.type}`), vehicle.plate].filter(Boolean).join(" · ")}
                          </span>
                        )}
                      </button>
                    </li>
                  );
                })}
              </ul>
            )}
        </section>
      </div>
    </section>
  );
}

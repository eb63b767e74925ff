// The dispatcher board's lists (DispatchBoard.tsx): virtualized, so that 500 open deliveries scroll as smoothly as 5
// (only the rows in view, and a few around them, are in the page; TanStack Virtual measures each row), one compact
// row per delivery (recipient, order number, window, lateness, driver), a roving focus moved with the arrow keys, and
// pending rows that can be dragged onto a driver.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type DragEvent, type KeyboardEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Delivery } from "../../../api/client.ts";
import { type MarkerKind, SIGNS } from "../../../components/markers.ts";
import { formatDateTime } from "../../../format.ts";
import { type Lane, laneOf, minutesLate, orderNumber } from "../dispatch.ts";
import { Link, navigate } from "../../../lib/router.tsx";

/** The drag's data type: the ids of the deliveries dragged (the row's, or the whole selection it belongs to). */
export const DRAG_TYPE = "application/x-delivery-ids";

/** A lane's look: the marker's shape and sign beside its name, as the map draws it. */
export function LaneSymbol({ kind, text }: { kind: MarkerKind; text?: string }) {
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

/** A window in few characters: the times alone today, with the day otherwise. */
function compactTime(iso: string, today: string): string {
  const text = formatDateTime(iso);
  return text.startsWith(today) ? text.slice(11) : `${text.slice(0, 5)} ${text.slice(11)}`;
}

function RowWindow({ delivery, now }: { delivery: Delivery; now: number }) {
  const { t } = useTranslation();
  const { window_start: start, window_end: end } = delivery;
  if (!start && !end) return null;
  const today = formatDateTime(new Date(now).toISOString()).slice(0, 10);
  const text = start && end
    ? `${compactTime(start, today)}–${compactTime(end, today)}`
    : end
    ? t("lifecycle.windowUntil", { end: compactTime(end, today) })
    : t("lifecycle.windowFrom", { start: compactTime(start!, today) });
  return <span className="row-window" title={t("lifecycle.window")}>{text}</span>;
}

export interface RowProps {
  driverName: (id: string | null | undefined) => string | null;
  selectable: (d: Delivery) => boolean;
  selected: Set<string>;
  onSelect: (id: string, on: boolean) => void;
  onHistory: (id: string) => void;
  historyId: string | null;
  /** The ids a drag of this row carries. */
  dragIds: (d: Delivery) => string[];
  now: number;
}

function BoardRow({ delivery, props }: { delivery: Delivery; props: RowProps }) {
  const { t } = useTranslation();
  const lane = laneOf(delivery)!;
  const late = minutesLate(delivery, props.now);
  const driver = props.driverName(delivery.driver_id);
  const selectable = props.selectable(delivery);
  return (
    <>
      {selectable
        ? (
          <label className="check select">
            <input
              type="checkbox"
              tabIndex={-1}
              checked={props.selected.has(delivery.id)}
              onChange={(e) => props.onSelect(delivery.id, e.target.checked)}
            />
            <span className="sr-only">{t("dispatch.board.select", { to: delivery.destination_address })}</span>
          </label>
        )
        : <span className="select-space" />}
      <div className="board-row-body">
        <p className="board-row-head">
          <LaneBadge lane={lane} />
          <strong className="recipient">{delivery.recipient_name || t("dispatch.board.noRecipient")}</strong>
          <span className="order">{orderNumber(delivery)}</span>
          <RowWindow delivery={delivery} now={props.now} />
          {late != null
            ? <span className="badge badge-late">{t("dispatch.board.lateBy", { count: late })}</span>
            : delivery.late && <span className="badge badge-late">{t("lifecycle.late")}</span>}
        </p>
        <p className="board-row-line">
          <span className="destination" title={delivery.destination_address}>{delivery.destination_address}</span>
          <span className="driver">
            {driver ? t("dispatch.board.driverIs", { name: driver }) : t("dispatch.board.noDriver")}
          </span>
          <span className="board-row-actions">
            <button
              type="button"
              className="link"
              tabIndex={-1}
              aria-expanded={props.historyId === delivery.id}
              aria-label={t("dispatch.board.historyOf", { to: delivery.destination_address })}
              onClick={() => props.onHistory(delivery.id)}
            >
              {t("dispatch.board.history")}
            </button>
            <Link
              to={`/deliveries/${delivery.id}`}
              tabIndex={-1}
              aria-label={t("deliveries.open", { id: delivery.id.slice(0, 8) })}
            >
              {t("dispatch.board.openShort")}
            </Link>
          </span>
        </p>
      </div>
    </>
  );
}

/**
 * One list of the board, virtualized. The rows are reached with Tab once (the list keeps one row focusable) and then
 * with the arrow keys; Space selects, Enter opens the dispatch record (BoardShortcuts lists them on screen).
 */
export function BoardList(
  { items, labelledBy, rowProps, className, shortcutsId }: {
    items: Delivery[];
    labelledBy: string;
    rowProps: RowProps;
    className?: string;
    /** The on-screen list of the shortcuts, which describes the list to screen readers too. */
    shortcutsId: string;
  },
) {
  const { t } = useTranslation();
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 54,
    overscan: 8,
    getItemKey: (index) => items[index].id,
  });
  const [active, setActive] = useState(0);
  const [focusWanted, setFocusWanted] = useState<number | null>(null);
  const current = Math.min(active, Math.max(0, items.length - 1));

  // The row moved to gets the focus once it is drawn (it may have been out of view, so not in the page yet).
  useEffect(() => {
    if (focusWanted == null) return;
    let tries = 0;
    let frame = 0;
    const focus = () => {
      const row = scroller.current?.querySelector<HTMLElement>(`li[data-index="${focusWanted}"]`);
      if (row) {
        row.focus({ preventScroll: true });
        setFocusWanted(null);
      } else if (tries++ < 10) frame = requestAnimationFrame(focus);
    };
    focus();
    return () => cancelAnimationFrame(frame);
  }, [focusWanted, items.length]);

  const moveTo = (index: number) => {
    if (items.length === 0) return;
    const next = Math.max(0, Math.min(items.length - 1, index));
    setActive(next);
    virtualizer.scrollToIndex(next, { align: "auto" });
    // A row already drawn (the next one nearly always is) takes the focus at once, so that the next key acts on it.
    const row = scroller.current?.querySelector<HTMLElement>(`li[data-index="${next}"]`);
    if (row) row.focus({ preventScroll: true });
    else setFocusWanted(next);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    const row = target.closest<HTMLElement>("li[data-index]");
    if (!row || event.altKey || event.ctrlKey || event.metaKey) return;
    const index = Number(row.dataset.index);
    const onRow = target === row;
    const delivery = items[index];
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 400) / 54) - 1);
    const moves: Record<string, number> = {
      ArrowDown: index + 1,
      j: index + 1,
      ArrowUp: index - 1,
      k: index - 1,
      PageDown: index + page,
      PageUp: index - page,
      Home: 0,
      End: items.length - 1,
    };
    if (event.key in moves) {
      event.preventDefault();
      moveTo(moves[event.key]);
    } else if (onRow && (event.key === " " || event.key === "x") && delivery && rowProps.selectable(delivery)) {
      event.preventDefault();
      rowProps.onSelect(delivery.id, !rowProps.selected.has(delivery.id));
    } else if (onRow && event.key === "Enter" && delivery) {
      event.preventDefault();
      rowProps.onHistory(delivery.id);
    } else if (onRow && event.key === "o" && delivery) {
      event.preventDefault();
      navigate(`/deliveries/${delivery.id}`);
    }
  };

  const onDragStart = (event: DragEvent<HTMLLIElement>, delivery: Delivery) => {
    const ids = rowProps.dragIds(delivery);
    event.dataTransfer.setData(DRAG_TYPE, JSON.stringify(ids));
    event.dataTransfer.setData("text/plain", ids.join("\n"));
    event.dataTransfer.effectAllowed = "move";
  };

  return (
    <div ref={scroller} className={`board-scroll ${className ?? ""}`} onKeyDown={onKeyDown}>
      <ul
        className="board-list"
        aria-labelledby={labelledBy}
        aria-describedby={shortcutsId}
        style={{ height: virtualizer.getTotalSize() }}
      >
        {virtualizer.getVirtualItems().map((row) => {
          const delivery = items[row.index];
          const lane = laneOf(delivery)!;
          const draggable = rowProps.selectable(delivery);
          return (
            <li
              key={row.key}
              ref={virtualizer.measureElement}
              data-index={row.index}
              data-delivery={delivery.id}
              className={`board-row lane-row-${lane}${rowProps.selected.has(delivery.id) ? " selected" : ""}`}
              style={{ transform: `translateY(${row.start}px)` }}
              tabIndex={row.index === current ? 0 : -1}
              aria-setsize={items.length}
              aria-posinset={row.index + 1}
              aria-label={t("dispatch.board.rowLabel", {
                recipient: delivery.recipient_name || t("dispatch.board.noRecipient"),
                order: orderNumber(delivery),
                to: delivery.destination_address,
                lane: t(`dispatch.lane.${lane}`),
              })}
              draggable={draggable}
              onDragStart={draggable ? (e) => onDragStart(e, delivery) : undefined}
              onFocus={(e) => e.target === e.currentTarget && setActive(row.index)}
            >
              <BoardRow delivery={delivery} props={rowProps} />
            </li>
          );
        })}
      </ul>
    </div>
  );
}

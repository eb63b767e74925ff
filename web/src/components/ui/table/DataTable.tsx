// The panel's one data table: a header row of column names and a row per item; below 640 px each row is a card whose
// cells say their column's name (`table.cards` in styles.css, from each cell's `data-label`), so no list scrolls
// sideways on a phone. Screen readers keep the table's roles (columnheader, row, cell) at every width.
import type { ReactNode } from "react";

export interface Column<T> {
  /** The column's name: its header, and the cell's label when a row is a card. */
  header: string;
  /** A header for screen readers only, and no label on the card (a column of buttons). */
  hiddenHeader?: boolean;
  /** No label on the card, the header shown (a column of buttons that say what they do). */
  unlabelled?: boolean;
  cell: (item: T) => ReactNode;
  /** The cells' class (`code`, `hint`, `row-actions`). */
  className?: string;
}

export interface DataTableProps<T> {
  /** Columns; `false` leaves one out (a column only some people see). */
  columns: readonly (Column<T> | false)[];
  items: readonly T[];
  itemKey: (item: T) => string;
  /** The table's name for screen readers, as a hidden caption. */
  caption?: string;
  /** The table's name for screen readers, as `aria-label` (when a caption would be read twice). */
  label?: string;
  /** What an empty table says, in a row across every column; without it an empty table is only its header. */
  empty?: ReactNode;
  /** Classes besides `cards`. */
  className?: string;
  rowClassName?: (item: T) => string | undefined;
  /**
   * Wraps each row, for cells that share a row's state (a row being edited): it renders `children`, the row, inside
   * whatever the cells read (a context provider).
   */
  Row?: (props: { item: T; children: ReactNode }) => ReactNode;
}

export function DataTable<T>(
  { columns, items, itemKey, caption, label, empty, className, rowClassName, Row }: DataTableProps<T>,
) {
  const shown = columns.filter((c): c is Column<T> => c !== false);
  return (
    <table className={className ? `cards ${className}` : "cards"} aria-label={label}>
      {caption && <caption className="sr-only">{caption}</caption>}
      <thead>
        <tr>
          {shown.map((column) => (
            <th key={column.header} scope="col">
              {column.hiddenHeader ? <span className="sr-only">{column.header}</span> : column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {items.length === 0 && empty != null && (
          <tr>
            <td colSpan={shown.length}>{empty}</td>
          </tr>
        )}
        {items.map((item) => {
          const row = (
            <tr key={Row ? undefined : itemKey(item)} className={rowClassName?.(item)}>
              {shown.map((column) => (
                <td
                  key={column.header}
                  data-label={column.hiddenHeader || column.unlabelled ? undefined : column.header}
                  className={column.className}
                >
                  {column.cell(item)}
                </td>
              ))}
            </tr>
          );
          return Row ? <Row key={itemKey(item)} item={item}>{row}</Row> : row;
        })}
      </tbody>
    </table>
  );
}

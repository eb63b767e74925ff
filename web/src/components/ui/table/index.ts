export { type Column, DataTable, type DataTableProps } from "./DataTable.tsx";

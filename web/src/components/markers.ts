// What a map marker looks like, outside Leaflet (so that a legend can draw it without loading the map): the
// dispatcher board's kinds differ in shape (styles.css) and in the sign they carry, not only in colour.

/** The dispatcher board's deliveries, by where they stand (features/dispatch/dispatch.ts's lanes), and its drivers with their load. */
export type BoardMarkerKind =
  | "unassigned"
  | "queued"
  | "offered"
  | "open"
  | "accepted"
  | "in_progress"
  | "load"
  /** A delivery's drop-off: a small square in its own colour (the board gives it the colour of where it stands). */
  | "dropoff";
export type MarkerKind = "origin" | "destination" | "driver" | "offline" | BoardMarkerKind;

/** The sign each board kind carries. */
export const SIGNS: Partial<Record<MarkerKind, string>> = {
  unassigned: "!",
  queued: "…",
  offered: "?",
  open: "",
  accepted: "✓",
  in_progress: "→",
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The marker's inside: its sign (or `text`, a driver's load), hidden from screen readers (the label says it). */
export const markerHtml = (marker: { kind: MarkerKind; text?: string }) =>
  `<span aria-hidden="true"><b>${escapeHtml(marker.text ?? SIGNS[marker.kind] ?? "")}</b></span>`;

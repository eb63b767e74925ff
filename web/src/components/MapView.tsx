// A Leaflet map of markers and lines. Markers are HTML (divIcon) and lines
// SVG, so they draw with no tile server reachable; tiles are a setting. A
// marker may be draggable: where it is dropped is reported, not kept here.
// Markers of different kinds differ in shape and in the sign they carry, not
// only in colour (markers.ts).
import L from "leaflet";
import "leaflet/dist/leaflet.css";
import { useEffect, useRef } from "react";
import { config } from "../config.ts";
import { markerHtml, type MarkerKind, SIGNS } from "./markers.ts";

export interface MapMarker {
  id: string;
  lat: number;
  lng: number;
  label: string;
  kind: MarkerKind;
  /** A short sign drawn inside the marker (a driver's load); the kind's own sign otherwise. */
  text?: string;
  /** Movable by hand; `onMarkerMove` hears where it was dropped. */
  draggable?: boolean;
  /** A colour of its own (a route's stops), besides its kind's shape and sign. */
  color?: string;
}
export interface MapLine {
  id: string;
  points: [number, number][];
  kind: "route" | "trail";
  /** A colour of its own (one per route on the Routes page); the kind's otherwise. */
  color?: string;
}

/**
 * `follow`: keep every marker and line in view as they change (a moving driver), not only at first. `fitKey`: fit
 * them in view again whenever it changes (a point chosen), but not when a marker is dragged.
 */
export default function MapView(
  { markers, lines = [], label, follow = false, fitKey, onMarkerMove, onMarkerClick }: {
    markers: MapMarker[];
    lines?: MapLine[];
    label: string;
    follow?: boolean;
    fitKey?: string;
    onMarkerMove?: (id: string, lat: number, lng: number) => void;
    /** A marker clicked (the same is reachable by keyboard outside the map: a list beside it). */
    onMarkerClick?: (id: string) => void;
  },
) {
  const element = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map | null>(null);
  const layer = useRef<L.LayerGroup | null>(null);
  const fitted = useRef(false);
  const fittedKey = useRef(fitKey);
  const onMove = useRef(onMarkerMove);
  onMove.current = onMarkerMove;
  const onClick = useRef(onMarkerClick);
  onClick.current = onMarkerClick;

  useEffect(() => {
    if (!element.current) return;
    const m = L.map(element.current, { zoomControl: true, attributionControl: !!config.tileUrl });
    if (config.tileUrl) {
      L.tileLayer(config.tileUrl, { maxZoom: 19, attribution: "© OpenStreetMap contributors" }).addTo(m);
    }
    m.setView([-23.55, -46.63], 12);
    layer.current = L.layerGroup().addTo(m);
    map.current = m;
    // A map whose box changes size (a page laid out to the window's height, the window resized) draws to its new size.
    const resized = new ResizeObserver(() => m.invalidateSize({ animate: false }));
    resized.observe(element.current);
    return () => {
      resized.disconnect();
      m.remove();
      map.current = null;
      fitted.current = false;
    };
  }, []);

  useEffect(() => {
    const m = map.current;
    const group = layer.current;
    if (!m || !group) return;
    group.clearLayers();
    const bounds: [number, number][] = [];
    for (const line of lines) {
      if (line.points.length < 2) continue;
      L.polyline(line.points, {
        className: `map-line map-line-${line.kind}`,
        color: line.color ?? (line.kind === "route" ? "#2563eb" : "#16a34a"),
        weight: line.kind === "route" ? 4 : 3,
        dashArray: line.kind === "route" ? "8 6" : undefined,
      }).addTo(group);
      bounds.push(...line.points);
    }
    for (const marker of markers) {
      const signed = marker.text != null || SIGNS[marker.kind] != null;
      const icon = L.divIcon({
        className: `map-marker map-marker-${marker.kind}`,
        html: (signed ? markerHtml(marker) : `<span aria-hidden="true"></span>`).replace(
          "<span",
          marker.color ? `<span style="background:${marker.color}"` : "<span",
        ),
        iconSize: marker.kind === "load" ? [30, 20] : signed ? [22, 22] : [18, 18],
      });
      const pin = L.marker([marker.lat, marker.lng], {
        icon,
        title: marker.label,
        alt: marker.label,
        keyboard: false,
        draggable: !!marker.draggable,
      })
        .bindTooltip(marker.label)
        .addTo(group);
      pin.on("click", () => onClick.current?.(marker.id));
      if (marker.draggable) {
        pin.on("dragend", () => {
          const { lat, lng } = pin.getLatLng();
          onMove.current?.(marker.id, lat, lng);
        });
      }
      bounds.push([marker.lat, marker.lng]);
    }
    if (bounds.length && (!fitted.current || follow || fittedKey.current !== fitKey)) {
      fittedKey.current = fitKey;
      // Not animated: Leaflet's zoom animation ends on a timer that throws if the page has left the map by then.
      m.fitBounds(L.latLngBounds(bounds), { padding: [30, 30], maxZoom: 15, animate: false });
      fitted.current = true;
    }
  }, [markers, lines, follow, fitKey]);

  return <div ref={element} className="map" role="img" aria-label={label} />;
}

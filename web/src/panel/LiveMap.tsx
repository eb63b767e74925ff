// Every driver's last position, moving live with driver_location; who is online.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense } from "react";
import { api, call, type DriverLocation, type DriverLocationItem } from "../api/client.ts";
import { ErrorNote, Loading } from "../components/ui.tsx";
import { formatCoordinate, formatTime } from "../format.ts";
import { useTranslation } from "react-i18next";
import { useRealtime, useRealtimeEvent } from "../lib/realtime.tsx";
import type { MapMarker } from "../components/MapView.tsx";

const MapView = lazy(() => import("../components/MapView.tsx"));

export default function LiveMapPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const { online } = useRealtime();
  const query = useQuery({ queryKey: ["locations"], queryFn: () => call(api.GET("/api/v1/drivers/locations")) });
  useRealtimeEvent((event, payload) => {
    if (event !== "driver_location") return;
    const location = payload as unknown as DriverLocation;
    client.setQueryData<{ items: DriverLocationItem[] }>(["locations"], (old) =>
      old && {
        ...old,
        items: old.items.map((item) => (item.driver_id === location.driver_id ? { ...item, ...location } : item)),
      });
  });
  const items = query.data?.items ?? [];
  const markers: MapMarker[] = items.filter((i) => i.lat != null && i.lng != null).map((i) => ({
    id: i.driver_id,
    lat: i.lat!,
    lng: i.lng!,
    label: i.name,
    kind: online.has(i.driver_id) ? "driver" : "offline",
  }));
  return (
    <section aria-labelledby="map-title">
      <h1 id="map-title">{t("liveMap.title")}</h1>
      <p role="status">{t("liveMap.onlineCount", { count: online.size })}</p>
      <ErrorNote error={query.error} />
      <Suspense fallback={<Loading />}>
        <MapView markers={markers} label={t("liveMap.title")} />
      </Suspense>
      <ul className="list" aria-label={t("drivers.title")}>
        {items.map((i) => (
          <li key={i.driver_id} data-driver={i.driver_id}>
            <strong>{i.name}</strong> {i.lat != null && i.lng != null
              ? `${formatCoordinate(i.lat)}, ${formatCoordinate(i.lng)} (${formatTime(i.updated_at)})`
              : t("liveMap.noPosition")}
            {online.has(i.driver_id) && ` · ${t("drivers.online")}`}
          </li>
        ))}
      </ul>
    </section>
  );
}

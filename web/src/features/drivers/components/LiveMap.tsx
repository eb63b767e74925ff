// Every driver's last position, moving live with driver_location; who is online (a position in the last 2 minutes).
import { lazy, Suspense } from "react";
import { ErrorNote, Loading } from "../../../components/ui.tsx";
import { formatCoordinate, formatTime } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { useDriverLocations, useOnlineDrivers } from "../online-drivers.ts";
import type { MapMarker } from "../../../components/MapView.tsx";

const MapView = lazy(() => import("../../../components/MapView.tsx"));

export default function LiveMapPage() {
  const { t } = useTranslation();
  // Kept current by driver_location (lib/realtime.tsx).
  const query = useDriverLocations();
  const online = useOnlineDrivers();
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

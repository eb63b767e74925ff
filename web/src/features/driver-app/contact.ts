// Links that hand over to the phone's own apps: the maps app (a Google Maps directions link, which opens the
// installed maps app on Android and iOS, and the web map elsewhere), the dialer, and WhatsApp.
import { digitsOf } from "../../lib/brazil.ts";

export const directionsUrl = (to: { lat: number; lng: number }) =>
  `https://www.google.com/maps/dir/?api=1&destination=${to.lat},${to.lng}&travelmode=driving`;

/** A stored number is E.164 (+5511988887777). */
export const callUrl = (phone: string) => `tel:+${digitsOf(phone)}`;

export const whatsappUrl = (phone: string, text?: string) =>
  `https://wa.me/${digitsOf(phone)}${text ? `?text=${encodeURIComponent(text)}` : ""}`;

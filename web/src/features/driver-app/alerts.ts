// What makes a driver notice an offer (docs/push.md): a sound and a vibration when one arrives, a system
// notification through the service worker when the app is in the background, Web Push when it is closed (the
// browser's subscription registered with the API), and a screen wake lock while the driver is on shift.
import { useEffect } from "react";
import { api, call } from "../../api/client.ts";

/** A short two-tone chime (Web Audio: no file to load); silent where the browser has not allowed sound yet. */
export function chime() {
  try {
    const Context = window.AudioContext ?? (window as unknown as { webkitAudioContext?: typeof AudioContext })
      .webkitAudioContext;
    if (!Context) return;
    const audio = new Context();
    const at = audio.currentTime;
    for (const [i, frequency] of [880, 1175, 880, 1175].entries()) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = frequency;
      gain.gain.setValueAtTime(0.0001, at + i * 0.18);
      gain.gain.exponentialRampToValueAtTime(0.4, at + i * 0.18 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + i * 0.18 + 0.16);
      tone.connect(gain).connect(audio.destination);
      tone.start(at + i * 0.18);
      tone.stop(at + i * 0.18 + 0.17);
    }
    setTimeout(() => void audio.close().catch(() => {}), 1_500);
  } catch {
    // no sound: the screen and the vibration remain
  }
}

export function vibrate() {
  try {
    navigator.vibrate?.([400, 150, 400, 150, 400]);
  } catch {
    // not on this device
  }
}

/**
 * A system notification when the page is not visible (another app in front, the screen off), through the service
 * worker as a phone needs it (`new Notification` throws on Android), or the page's own where no worker runs.
 */
export async function notifyWhenHidden(title: string, body: string, tag: string): Promise<boolean> {
  if (document.visibilityState === "visible") return false;
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return false;
  const options = {
    body,
    tag,
    renotify: true,
    requireInteraction: true,
    data: { url: "/driver" },
  } as NotificationOptions;
  try {
    const registration = "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistration() : undefined;
    if (registration) {
      await registration.showNotification(title, options);
      return true;
    }
    new Notification(title, options);
    return true;
  } catch {
    return false;
  }
}

/** The screen kept on while `on` (taken again when the page comes back: the browser drops it when hidden). */
export function useWakeLock(on: boolean) {
  useEffect(() => {
    if (!on || !("wakeLock" in navigator)) return;
    let lock: WakeLockSentinel | null = null;
    let stopped = false;
    const take = async () => {
      if (document.visibilityState !== "visible" || (lock && !lock.released)) return;
      try {
        lock = await navigator.wakeLock.request("screen");
        if (stopped) void lock.release();
      } catch {
        // refused (battery saver): the app works on, the screen may sleep
      }
    };
    void take();
    document.addEventListener("visibilitychange", take);
    return () => {
      stopped = true;
      document.removeEventListener("visibilitychange", take);
      void lock?.release().catch(() => {});
    };
  }, [on]);
}

export type PushState = "unsupported" | "denied" | "off" | "on";

export function pushSupported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && typeof Notification !== "undefined";
}

/** Whether this browser is subscribed (the subscription registered with the API when it is). */
export async function pushState(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  if (Notification.permission === "denied") return "denied";
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = await registration?.pushManager.getSubscription();
  return subscription && Notification.permission === "granted" ? "on" : "off";
}

const base64urlBytes = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

/**
 * Asks for permission (a tap's answer: browsers allow the prompt only then), subscribes this browser with the
 * platform's VAPID key and registers the subscription, so offers reach the phone with the app closed. Without
 * Web Push (no service worker, an old browser), notifications still show while the app is open.
 */
export async function enableAlerts(): Promise<PushState> {
  if (typeof Notification === "undefined") return "unsupported";
  const permission = await Notification.requestPermission();
  if (permission !== "granted") return permission === "denied" ? "denied" : "off";
  if (!pushSupported()) return "on";
  const registration = await navigator.serviceWorker.getRegistration();
  if (!registration) return "on";
  const { public_key } = await call(api.GET("/api/v1/push/key"));
  let subscription = await registration.pushManager.getSubscription();
  subscription ??= await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: base64urlBytes(public_key),
  });
  const json = subscription.toJSON();
  await call(api.POST("/api/v1/push-subscriptions", {
    body: {
      endpoint: subscription.endpoint,
      expirationTime: json.expirationTime ?? null,
      keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" },
    },
  }));
  return "on";
}

/** Asks once before a decline: the offer then goes to another driver. */
export function confirmDecline(text: string): boolean {
  return window.confirm(text);
}

// The app's service worker: the app opens with no connection. Emitted as /sw.js by the `pwa` plugin of
// web/vite.config.ts, which puts the build's file list in place of BUILD below; it is plain JavaScript, not
// bundled. At install it keeps the app shell (the page and every built file); pages are asked from the network
// first (the page carries the deployment's settings) and served from the cache when there is no answer within a
// few seconds; built files, named by their content, come from the cache. Nothing of the platform (/api, /auth,
// /rest, /realtime, /storage, /functions) passes through it: the app keeps its own data (IndexedDB).
const BUILD = /* build */ { version: "dev", files: [] };

const CACHE = `app-shell-${BUILD.version}`;
const BASE = new URL(self.registration.scope).pathname;
const PLATFORM = /^(api|auth|rest|realtime|storage|functions|health|_sim)(\/|$)/;
const PAGE_TIMEOUT_MS = 4_000;

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll([BASE, ...BUILD.files.map((file) => BASE + file)]);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("app-shell-") && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

/** The page from the network (kept as the shell for next time), or the kept shell when the network fails or stalls. */
async function page(request) {
  const cache = await caches.open(CACHE);
  const network = fetch(request).then(async (response) => {
    if (response.ok && (response.headers.get("content-type") ?? "").startsWith("text/html")) {
      await cache.put(BASE, response.clone());
    }
    return response;
  });
  const stalled = new Promise((resolve) => setTimeout(resolve, PAGE_TIMEOUT_MS));
  try {
    const first = await Promise.race([network, stalled]);
    if (first) return first;
  } catch {
    // no connection: the kept shell below
  }
  const kept = await cache.match(BASE);
  return kept ?? network;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || !url.pathname.startsWith(BASE)) return;
  if (PLATFORM.test(url.pathname.slice(BASE.length))) return;
  if (request.mode === "navigate") {
    event.respondWith(page(request));
    return;
  }
  event.respondWith((async () => (await caches.match(request, { ignoreSearch: true })) ?? fetch(request))());
});

// Web Push (docs/push.md): an offer or a route pushed while the app is closed is shown as a notification, in the
// browser's language; a tap opens the app (or brings it to the front) on the driver's screen, where the offer waits.
const PT = !(self.navigator.language ?? "pt").toLowerCase().startsWith("en");
const TEXT = PT
  ? {
    offer: "Nova oferta de entrega",
    offerBody: (p) => `Retirada em ${p.origin_address}, entrega em ${p.destination_address}. Toque para responder.`,
    route: "Nova rota para você",
    routeBody: (p) => `${p.stops} paradas`,
  }
  : {
    offer: "New delivery offer",
    offerBody: (p) => `Pickup at ${p.origin_address}, drop-off at ${p.destination_address}. Tap to answer.`,
    route: "A new route for you",
    routeBody: (p) => `${p.stops} stops`,
  };

self.addEventListener("push", (event) => {
  let payload = {};
  try {
    payload = event.data?.json() ?? {};
  } catch {
    payload = {};
  }
  const offer = payload.type === "delivery_offered";
  const title = offer ? TEXT.offer : payload.type === "route_published" ? TEXT.route : null;
  if (!title) return;
  event.waitUntil(self.registration.showNotification(title, {
    body: offer ? TEXT.offerBody(payload) : TEXT.routeBody(payload),
    tag: offer ? `offer-${payload.delivery_id}` : `route-${payload.route_id}`,
    renotify: true,
    requireInteraction: offer,
    vibrate: [400, 150, 400, 150, 400],
    icon: `${BASE}icons/icon-192.png`,
    data: { url: `${BASE}driver` },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url ?? BASE, self.location.origin).href;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((w) => new URL(w.url).pathname.startsWith(BASE));
    if (open) {
      await open.focus();
      if (!open.url.startsWith(url)) await open.navigate(url).catch(() => {});
      return;
    }
    await self.clients.openWindow(url);
  })());
});

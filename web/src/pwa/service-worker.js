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

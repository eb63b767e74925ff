// The web app (company panel and driver app). `npm run dev:web` serves it with
// hot reload and proxies the platform paths to the local stack (STACK_URL,
// default http://127.0.0.1:54321), from which it takes the anon key.
import react from "@vitejs/plugin-react";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { defineConfig, type Plugin } from "vite";

const stackUrl = process.env.STACK_URL ?? "http://127.0.0.1:54321";

/** In dev, the page gets the same settings the local stack injects into the built page. */
function stackConfig(): Plugin {
  return {
    name: "stack-config",
    apply: "serve",
    async transformIndexHtml(html) {
      const res = await fetch(`${stackUrl}/_sim/web/config`).catch(() => null);
      if (!res?.ok) return html;
      // Same origin as the page: the proxy below forwards the platform paths.
      const config = { ...(await res.json()), supabaseUrl: "", apiUrl: "" };
      return html.replace("<!--app-config-->", `<script>window.APP_CONFIG=${JSON.stringify(config)}</script>`);
    },
  };
}

const pwaDir = new URL("./src/pwa/", import.meta.url);
const ICONS = ["icon.svg", "icon-192.png", "icon-512.png"];
const MANIFEST = {
  name: "Plataforma de entregas",
  short_name: "Entregas",
  description: "Entregas da empresa e o app do entregador.",
  lang: "pt-BR",
  start_url: "./",
  scope: "./",
  display: "standalone",
  background_color: "#f8fafc",
  theme_color: "#2563eb",
  icons: [
    { src: "icons/icon-192.png", sizes: "192x192", type: "image/png" },
    { src: "icons/icon-512.png", sizes: "512x512", type: "image/png" },
    { src: "icons/icon-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
    { src: "icons/icon.svg", sizes: "any", type: "image/svg+xml" },
  ],
};
const BUILD_PLACEHOLDER = `/* build */ { version: "dev", files: [] }`;

/**
 * The app is installable and opens offline: a web app manifest, its icons, and a service worker (written by hand
 * in src/pwa/service-worker.js: a page and a list of files to keep, no more) that gets the build's file list. The
 * page links the manifest; main.tsx registers the worker in built apps only.
 */
function pwa(): Plugin {
  const manifest = JSON.stringify(MANIFEST, null, 2);
  return {
    name: "pwa",
    transformIndexHtml: () => [
      { tag: "link", attrs: { rel: "manifest", href: "/manifest.webmanifest" }, injectTo: "head" },
      { tag: "link", attrs: { rel: "icon", href: "/icons/icon.svg", type: "image/svg+xml" }, injectTo: "head" },
      { tag: "link", attrs: { rel: "apple-touch-icon", href: "/icons/icon-192.png" }, injectTo: "head" },
      { tag: "meta", attrs: { name: "theme-color", content: MANIFEST.theme_color }, injectTo: "head" },
    ],
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = req.url?.split("?")[0] ?? "";
        if (path === "/manifest.webmanifest") {
          res.setHeader("content-type", "application/manifest+json");
          return res.end(manifest);
        }
        const icon = ICONS.find((name) => path === `/icons/${name}`);
        if (!icon) return next();
        res.setHeader("content-type", icon.endsWith(".svg") ? "image/svg+xml" : "image/png");
        res.end(readFileSync(new URL(icon, pwaDir)));
      });
    },
    generateBundle(_options, bundle) {
      this.emitFile({ type: "asset", fileName: "manifest.webmanifest", source: manifest });
      for (const icon of ICONS) {
        this.emitFile({ type: "asset", fileName: `icons/${icon}`, source: readFileSync(new URL(icon, pwaDir)) });
      }
      const files = [
        ...Object.keys(bundle).filter((name) => name !== "index.html" && !name.endsWith(".map")),
        "manifest.webmanifest",
        ...ICONS.map((icon) => `icons/${icon}`),
      ].sort();
      const version = createHash("sha256").update(files.join("\n")).update(manifest).digest("hex").slice(0, 16);
      const worker = readFileSync(new URL("service-worker.js", pwaDir), "utf8");
      if (!worker.includes(BUILD_PLACEHOLDER)) this.error("src/pwa/service-worker.js lost its build placeholder");
      this.emitFile({
        type: "asset",
        fileName: "sw.js",
        source: worker.replace(BUILD_PLACEHOLDER, JSON.stringify({ version, files })),
      });
    },
  };
}

const proxied = ["/api", "/auth", "/functions", "/health", "/_sim"];

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), stackConfig(), pwa()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 600 },
  server: {
    proxy: {
      ...Object.fromEntries(proxied.map((path) => [path, { target: stackUrl }])),
      "/realtime": { target: stackUrl, ws: true },
    },
  },
});

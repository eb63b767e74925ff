// The web app (company panel and driver app). `npm run dev:web` serves it with
// hot reload and proxies the platform paths to the local stack (STACK_URL,
// default http://127.0.0.1:54321), from which it takes the anon key.
import react from "@vitejs/plugin-react";
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

const proxied = ["/api", "/auth", "/functions", "/health", "/_sim"];

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), stackConfig()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 600 },
  server: {
    proxy: {
      ...Object.fromEntries(proxied.map((path) => [path, { target: stackUrl }])),
      "/realtime": { target: stackUrl, ws: true },
    },
  },
});

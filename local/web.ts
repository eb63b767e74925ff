// The web app (company panel and driver app) on the local stack: the built
// files of web/dist at `/` with a fallback to index.html for the app's own
// paths, the app's runtime settings injected into that page, and two
// local-only helpers under /_sim/web for the app's simulators page (behind
// local/simulators/local-only.ts's checks, mounted by local/server.ts). Also
// builds the app when web/dist is missing or older than its sources.
import { Hono } from "hono";
import { hmacHex } from "../common/crypto.ts";
import { projectRoot } from "./config.ts";
import type { GatewaySimulator } from "./simulators/gateway.ts";

export interface WebOptions {
  apiUrl: string;
  anonKey: string;
  platformWebhookSecret: string;
  /** The built-in gateway simulator, kept in step with the events the simulators page sends. */
  gateway: GatewaySimulator;
  /** Map tiles; "" draws maps without tiles. */
  tileUrl?: string;
}

const distDir = new URL("web/dist/", projectRoot);
const sources = ["web/src/", "web/index.html", "web/vite.config.ts", "package-lock.json"].map((p) =>
  new URL(p, projectRoot)
);

/** Paths that belong to the platform, never to the app's fallback page. */
// graphql: pg_graphql's endpoint, which the local stack does not have (README.md), is a 404, not the app's page.
const PLATFORM_PATHS = /^\/(api|auth|rest|realtime|functions|health|_sim|graphql|storage)(\/|$)/;

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  json: "application/json",
  webmanifest: "application/manifest+json",
  txt: "text/plain; charset=utf-8",
};

/** The payment and transfer statuses the gateway reports with each event. */
const EVENT_STATUS: Record<string, { kind: "payment" | "transfer"; status: string }> = {
  PAYMENT_RECEIVED: { kind: "payment", status: "RECEIVED" },
  PAYMENT_CONFIRMED: { kind: "payment", status: "CONFIRMED" },
  PAYMENT_OVERDUE: { kind: "payment", status: "OVERDUE" },
  PAYMENT_REFUNDED: { kind: "payment", status: "REFUNDED" },
  TRANSFER_DONE: { kind: "transfer", status: "DONE" },
  TRANSFER_FAILED: { kind: "transfer", status: "FAILED" },
  TRANSFER_CANCELLED: { kind: "transfer", status: "CANCELLED" },
};

async function newestMtime(url: URL): Promise<number> {
  const info = await Deno.stat(url).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory) return info.mtime?.getTime() ?? 0;
  let newest = info.mtime?.getTime() ?? 0;
  for await (const entry of Deno.readDir(url)) {
    const child = new URL(entry.name + (entry.isDirectory ? "/" : ""), url);
    newest = Math.max(newest, await newestMtime(child));
  }
  return newest;
}

/**
 * Builds the app with Vite when web/dist is missing or older than web/src
 * (a build takes seconds; a warm start stays fast). Returns a line for the
 * banner; a failed build is reported, and the API is served all the same.
 */
export async function buildWebIfStale(log: (line: string) => void): Promise<string> {
  const built = await Deno.stat(new URL("index.html", distDir)).then((s) => s.mtime?.getTime() ?? 0, () => 0);
  const newest = Math.max(...(await Promise.all(sources.map(newestMtime))));
  if (built > 0 && built >= newest) return "up to date";
  if (newest === 0) return "not present";
  const started = performance.now();
  log("Building the web app (web/dist)...");
  const vite = new URL("node_modules/vite/bin/vite.js", projectRoot);
  const result = await new Deno.Command("node", {
    args: [vite.pathname, "build", "--config", "web/vite.config.ts", "--logLevel", "warn"],
    cwd: projectRoot,
    // A production build whoever starts the stack: under vitest NODE_ENV is "test", which makes Vite build React's
    // development bundle with import.meta.env.PROD false (no service worker).
    env: { NODE_ENV: "production" },
    stdout: "inherit",
    stderr: "inherit",
  }).output().catch((error) => ({ success: false, error }));
  if (!result.success) return "build failed (see above); `npm run build:web` to retry";
  return `built in ${((performance.now() - started) / 1000).toFixed(1)} s`;
}

export interface WebApp {
  /** The built app at `/` (GET and HEAD); mount it last, as the fallback of every other path. */
  app: Hono;
  /** The simulators page's helpers: GET /config, POST /events; mount it at /_sim/web. */
  simulators: Hono;
}

export function createWebApp(options: WebOptions): WebApp {
  // The page is served by the stack itself: the app talks to its own origin.
  const appConfig = {
    supabaseUrl: "",
    apiUrl: "",
    anonKey: options.anonKey,
    tileUrl: options.tileUrl ?? Deno.env.get("TILE_URL") ?? "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
    localStack: true,
  };

  /**
   * The simulators page's gateway event, as the gateway would send it: the
   * gateway's own record moves first (so the webhook, which checks every event
   * with the gateway, finds it there), then the event is delivered, signed with
   * the platform secret to the platform webhook, or with `webhook_secret` to
   * the company webhook of `company_id`.
   */
  async function sendEvent(req: Request): Promise<Response> {
    const input = await req.json().catch(() => null) as Record<string, unknown> | null;
    const text = (name: string) => typeof input?.[name] === "string" ? input[name] as string : undefined;
    const event = text("event") ?? "";
    const mapping = EVENT_STATUS[event];
    const reference = text("external_reference");
    const stored = [...(mapping?.kind === "payment" ? options.gateway.payments : options.gateway.transfers).values()]
      .find((object) => reference !== undefined && object.externalReference === reference);
    const objectId = text("object_id") ?? stored?.id;
    const companyId = text("company_id");
    const secret = companyId ? text("webhook_secret") : options.platformWebhookSecret;
    if (!mapping || !objectId || !secret) {
      return Response.json({
        detail: "event must be one of the known events, with an object_id or external_reference the gateway knows " +
          "(and a webhook_secret with a company_id)",
      }, { status: 400 });
    }
    options.gateway.setStatus(objectId, mapping.status);
    const object = { id: objectId, status: mapping.status, value: input?.value, externalReference: reference };
    const body = JSON.stringify({ event, [mapping.kind]: object });
    const path = companyId ? `/api/v1/webhooks/gateway/${encodeURIComponent(companyId)}` : "/api/v1/webhooks/gateway";
    const res = await fetch(`${options.apiUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "gateway-signature": hmacHex(secret, new TextEncoder().encode(body)),
      },
      body,
    });
    return new Response(res.body, { status: res.status, headers: { "content-type": "application/json" } });
  }

  async function file(path: string): Promise<Response | null> {
    let relative: string;
    try {
      relative = decodeURIComponent(path).replace(/^\/+/, "");
    } catch {
      return null; // a malformed escape names no file
    }
    if (relative.split("/").some((part) => part === ".." || part.startsWith("."))) return null;
    const url = new URL(relative, distDir);
    const info = await Deno.stat(url).catch(() => null);
    if (!info?.isFile) return null;
    const ext = relative.split(".").pop() ?? "";
    return new Response(await Deno.readFile(url), {
      headers: {
        "content-type": CONTENT_TYPES[ext] ?? "application/octet-stream",
        // Vite names built assets by their content hash.
        "cache-control": relative.startsWith("assets/") ? "public, max-age=31536000, immutable" : "no-cache",
      },
    });
  }

  async function indexPage(): Promise<Response> {
    const html = await Deno.readTextFile(new URL("index.html", distDir)).catch(() => null);
    if (html === null) {
      return new Response("The web app is not built: run `npm run build:web`.", {
        status: 503,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    }
    const script = `<script>window.APP_CONFIG=${JSON.stringify(appConfig).replace(/</g, "\\u003c")}</script>`;
    return new Response(html.replace("<!--app-config-->", script), {
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
    });
  }

  const simulators = new Hono();
  simulators.get("/config", (c) => c.json(appConfig, 200, { "access-control-allow-origin": "*" }));
  simulators.post("/events", (c) => sendEvent(c.req.raw));

  const app = new Hono();
  app.get("*", async (c) => {
    const path = new URL(c.req.url).pathname;
    if (PLATFORM_PATHS.test(path)) return c.notFound();
    if (path === "/" || path === "/index.html") return await indexPage();
    return (await file(path)) ?? (/\.[a-z0-9]+$/i.test(path) ? c.notFound() : await indexPage());
  });
  return { app, simulators };
}

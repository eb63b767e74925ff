// A local stand-in for Supabase Storage (/storage/v1), following storage-api
// (local/versions.ts names the version): the bucket API, the object API that
// supabase-js's storage client calls (upload, update, download, public and
// signed URLs, signed upload URLs, info, exists, list, list-v2, move, copy,
// remove), each as the caller under the policies on storage.buckets and
// storage.objects, with Storage's error bodies. The bytes are files under
// DATA_DIR/storage. Routed with Hono; a route Storage does not have answers
// Storage's own 404. Not offered (answered as Storage answers a route it does
// not have): image transformations (/render/image), resumable uploads (TUS),
// the S3 protocol, analytics and vector buckets, CDN purges.
import { Hono } from "hono";
import { cors } from "hono/cors";
import type postgres from "postgres";
import { parse as parseToml } from "smol-toml";
import type { Claims } from "../../common/jwt.ts";
import { projectRoot } from "../config.ts";
import { EMULATED } from "../versions.ts";
import { mountBuckets } from "./buckets.ts";
import { BASE_PATH, type StorageContext } from "./context.ts";
import { StorageDb } from "./database.ts";
import { badUrl, errorResponse, ERRORS, FrameworkError, routeNotFound, StorageError } from "./errors.ts";
import { ObjectFiles } from "./files.ts";
import { mountObjects } from "./objects.ts";
import { parseConfigSize } from "./validate.ts";

export interface StorageOptions {
  sql: postgres.Sql;
  verifyToken: (token: string) => Promise<Claims>;
  /** The legacy HS256 secret, which Storage signs its URL tokens with. */
  jwtSecret: string;
  dataDir: string;
  /** The project's API keys (anon, service_role): the gateway turns one of them, and only one of them, into the bearer. */
  apiKeys: string[];
  /** The project's config.toml; its [storage] file_size_limit caps every upload. */
  configUrl?: URL;
}

export interface Storage {
  fetch(req: Request): Promise<Response>;
}

/** The Supabase CLI's default for [storage] file_size_limit. */
const DEFAULT_FILE_SIZE_LIMIT = "50MiB";
/** Storage's default uploadSignedUrlExpirationTime. */
const UPLOAD_URL_SECONDS = 7200;

function projectFileSizeLimit(configUrl: URL): number {
  const config = parseToml(Deno.readTextFileSync(configUrl)) as { storage?: { file_size_limit?: unknown } };
  const limit = config.storage?.file_size_limit;
  return parseConfigSize(typeof limit === "string" ? limit : DEFAULT_FILE_SIZE_LIMIT);
}

/** Whether every segment of a raw path decodes (Fastify refuses the request before routing otherwise). */
function decodes(path: string): boolean {
  try {
    for (const part of path.split("/")) decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

function withHeader(res: Response, name: string, value: string): Response {
  try {
    res.headers.set(name, value);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    copy.headers.set(name, value);
    return copy;
  }
}

export function createStorage(options: StorageOptions): Storage {
  const ctx: StorageContext = {
    db: new StorageDb(options.sql),
    files: new ObjectFiles(`${options.dataDir}/storage`),
    verifyToken: options.verifyToken,
    apiKeys: options.apiKeys,
    urlSigningKey: new TextEncoder().encode(options.jwtSecret),
    fileSizeLimit: projectFileSizeLimit(options.configUrl ?? new URL("supabase/config.toml", projectRoot)),
    uploadUrlSeconds: UPLOAD_URL_SECONDS,
  };

  const app = new Hono().basePath(BASE_PATH);
  // Browsers call Storage directly (the API gateway answers their CORS on a hosted project).
  app.use(
    "*",
    cors({
      origin: "*",
      allowMethods: ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"],
      exposeHeaders: ["Content-Length", "Content-Range", "Content-Disposition", "ETag", "Last-Modified"],
      maxAge: 86_400,
    }),
  );
  app.use("*", async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (!decodes(path)) {
      c.res = errorResponse(badUrl(path.slice(BASE_PATH.length)));
    } else {
      await next();
    }
    // Nothing Storage serves is to be sniffed into another type (an uploaded "image" run as HTML).
    c.res = withHeader(c.res, "X-Content-Type-Options", "nosniff");
  });

  app.get("/status", () => new Response(null, { status: 200 }));
  app.get("/version", (c) => c.text(EMULATED.storage.replace(/^v/, "")));
  mountBuckets(app, ctx);
  mountObjects(app, ctx);

  app.notFound((c) => errorResponse(routeNotFound(c.req.method, new URL(c.req.url).pathname.slice(BASE_PATH.length))));
  app.onError((error, c) => {
    if (error instanceof StorageError || error instanceof FrameworkError) return errorResponse(error);
    console.error(JSON.stringify({
      event: "storage_error",
      path: new URL(c.req.url).pathname,
      error: String(error),
    }));
    return errorResponse(ERRORS.internal());
  });

  return { fetch: async (req) => await app.fetch(req) };
}

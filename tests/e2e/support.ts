// What every browser journey shares: the stack's address, contexts whose pages are watched for errors, signing in,
// screenshots, and the checks run on many pages. A journey fails on any uncaught error in a page it opened, and on
// any console error other than the browser's own line for an HTTP refusal (4xx) the app answered in words.
import {
  type APIRequestContext,
  type Browser,
  type BrowserContext,
  expect,
  type Locator,
  type Page,
  type Request,
  request,
  test as base,
} from "@playwright/test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";

export { expect };
export const baseURL = () => process.env.E2E_BASE_URL!;

/** Where each journey's last screen is written (gitignored). */
export const SCREENSHOTS = resolve(import.meta.dirname, "screenshots");
mkdirSync(SCREENSHOTS, { recursive: true });
export const shot = (page: Page, name: string) =>
  page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });

const problems: string[] = [];
const REFUSAL = /^Failed to load resource: the server responded with a status of 4\d\d\b/;
/** The browser's own line for a request made while a test has cut the connection (`context.setOffline(true)`). */
const CUT = /net::ERR_INTERNET_DISCONNECTED/;
/** Lines a test causes on purpose (a failure it fakes), allowed for that test only. */
const expected: RegExp[] = [];
export const allowBrowserLine = (line: RegExp) => void expected.push(line);

/** The pages the running test opened, whose screens a failure prints (CI keeps no test-results). */
const pages = new Set<Page>();
/** The platform requests the running test's pages made, last ones last, which a failure prints. */
const traffic: string[] = [];
const PLATFORM = /^\/(api|auth|rest|storage|functions)\//;
/** The path of a request to the platform, or undefined for any other (the app's own files). */
const platformPath = (r: Request) => {
  const path = new URL(r.url()).pathname;
  return PLATFORM.test(path) ? path : undefined;
};
const seen = (line: string) => void (traffic.push(line) > 40 && traffic.shift());

/** Records the uncaught errors, console errors and platform requests of every page the context opens. */
export function watch(context: BrowserContext): BrowserContext {
  context.on("page", (page) => pages.add(page));
  const stamp = () => new Date().toISOString().slice(11, 23);
  context.on("requestfinished", async (r) => {
    const path = platformPath(r);
    if (!path) return;
    const status = (await r.response().catch(() => null))?.status() ?? "?";
    seen(`${stamp()} ${r.method()} ${path} ${status} (${Math.round(r.timing().responseEnd)} ms)`);
  });
  context.on("requestfailed", (r) => {
    const path = platformPath(r);
    if (path) seen(`${stamp()} ${r.method()} ${path} failed: ${r.failure()?.errorText}`);
  });
  context.on("weberror", (error) => problems.push(`uncaught in ${error.page()?.url()}: ${error.error().stack}`));
  context.on("console", (message) => {
    const text = message.text();
    if (message.type() === "error" && !REFUSAL.test(text) && !CUT.test(text) && !expected.some((e) => e.test(text))) {
      problems.push(`console error in ${message.page()?.url()}: ${text}`);
    }
  });
  return context;
}

export async function newContext(browser: Browser, options: Parameters<Browser["newContext"]>[0] = {}) {
  return watch(await browser.newContext({ baseURL: baseURL(), ...options }));
}

/** Playwright's test, failing a test whose pages had an uncaught or console error while it ran. */
export const test = base.extend<{ noBrowserErrors: void }>({
  // Playwright reads the fixtures a fixture needs from its first parameter's pattern: this one needs none.
  // deno-lint-ignore no-empty-pattern
  noBrowserErrors: [async ({}, run, info) => {
    problems.length = 0;
    expected.length = 0;
    traffic.length = 0;
    pages.clear();
    await run();
    if (info.status !== info.expectedStatus) {
      console.error(
        `--- the last platform requests of the test's pages (now ${new Date().toISOString().slice(11, 23)}):\n${
          traffic.join("\n")
        }`,
      );
      for (const page of pages) {
        if (page.isClosed()) continue;
        // The driver's queued actions (lib/outbox.ts), where the page has a queue.
        const queue = await page.evaluate(outboxOf).catch((e) => `(${e})`);
        if (queue !== "[]") console.error(`--- the actions queued in ${page.url()}: ${queue}`);
        // The page's main content (the app's #content), or the whole page where there is none (the tracking page).
        const main = (await page.locator("#content").count()) ? page.locator("#content") : page.locator("body");
        const screen = await main.ariaSnapshot({ timeout: 2_000 }).catch((e) => `(${e})`);
        console.error(`--- what ${page.url()} showed when the test failed:\n${screen.slice(0, 6_000)}`);
      }
    }
    expect(problems, "errors in the browser").toEqual([]);
  }, { auto: true }],
});

/** The page's queue of driver actions (lib/device.ts's IndexedDB), without the files, as JSON. */
async function outboxOf(): Promise<string> {
  // Opening a database that is not there would make one.
  if (!(await indexedDB.databases()).some((d) => d.name === "delivery-app")) return "[]";
  return await new Promise((done, fail) => {
    const open = indexedDB.open("delivery-app");
    open.onerror = () => fail(open.error);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains("outbox")) return done("[]");
      const all = db.transaction("outbox").objectStore("outbox").getAll();
      all.onerror = () => fail(all.error);
      all.onsuccess = () =>
        done(JSON.stringify(all.result.map(({ proof, body: _body, ...item }) => ({ ...item, files: proof?.length }))));
    };
  });
}

/** Signs in through the form, in the language the page speaks. */
export async function signIn(
  page: Page,
  email: string,
  password: string,
  labels = { email: "E-mail", password: "Senha", submit: "Entrar" },
) {
  await page.goto("/");
  await page.getByLabel(labels.email, { exact: true }).fill(email);
  await page.getByLabel(labels.password, { exact: true }).fill(password);
  await page.getByRole("button", { name: labels.submit, exact: true }).click();
}

export const ENGLISH = { email: "Email", password: "Password", submit: "Sign in" };

/** The signed-in user's access token, from supabase-js's storage. */
export const accessToken = (page: Page) =>
  page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("sb-") && k.endsWith("-auth-token"))!;
    return JSON.parse(localStorage.getItem(key)!).access_token as string;
  });

/** Every input, select and textarea on the page has an accessible label. */
export async function expectLabelled(page: Page) {
  const unlabelled = await page.locator("input, select, textarea").evaluateAll((elements) =>
    elements
      .filter((e) => (e as HTMLInputElement).type !== "hidden")
      .filter((e) =>
        !((e as HTMLInputElement).labels?.length || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby"))
      )
      .map((e) => e.outerHTML.slice(0, 120))
  );
  expect(unlabelled).toEqual([]);
}

/** The page does not scroll sideways: nothing is wider than the window. */
export async function expectNoSidewaysScroll(page: Page) {
  const widths = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    path: location.pathname,
  }));
  expect(widths.scrollWidth, `page width at ${widths.path}`).toBeLessThanOrEqual(widths.innerWidth);
}

/** What `iso` reads as in São Paulo, dd/mm/aaaa HH:mm, whatever the browser's own time zone. */
export function saoPauloDateTime(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", {
      timeZone: "America/Sao_Paulo",
      day: "2-digit",
      month: "2-digit",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).formatToParts(new Date(iso)).map((p) => [p.type, p.value]),
  );
  return `${parts.day}/${parts.month}/${parts.year} ${parts.hour}:${parts.minute}`;
}

/** Drags an element (a map marker) by (dx, dy) pixels with the mouse, in steps, as a hand would. */
export async function dragBy(page: Page, element: Locator, dx: number, dy: number) {
  await element.scrollIntoViewIfNeeded();
  const box = (await element.boundingBox())!;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx / 2, y + dy / 2, { steps: 5 });
  await page.mouse.move(x + dx, y + dy, { steps: 5 });
  await page.mouse.up();
}

/**
 * The demo company's payment gateway settings in the journeys: the built-in simulator's sandbox key, and the secret
 * the simulator signs the company's webhooks with (journeys.spec.ts types them into the Gateway page).
 */
export const COMPANY_GATEWAY = {
  api_key: "$aact_hmlg_e2e_key",
  webhook_secret: "e2e-company-webhook-secret-0123456789abcdef",
};

/** A 2x2 red PNG: a photo of a delivery. */
export const PHOTO = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

/** Signs on a signature pad with the mouse: a zigzag across it. */
export async function drawSignature(page: Page, pad: ReturnType<Page["getByRole"]>) {
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await page.mouse.move(box.x + 20, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(box.x + 20 + i * 25, box.y + box.height / 2 + (i % 2 ? -20 : 20));
  }
  await page.mouse.up();
}

/** The API as one signed-in user, for a journey's setup and its checks of what the server holds. */
export class Api {
  private constructor(
    readonly http: APIRequestContext,
    readonly token: string,
    readonly userId: string,
    readonly anonKey: string,
  ) {}

  static async signIn(email: string, password: string): Promise<Api> {
    const http = await request.newContext({ baseURL: baseURL() });
    const config = await (await http.get("/_sim/web/config")).json() as { anonKey: string };
    const res = await http.post("/auth/v1/token?grant_type=password", {
      headers: { apikey: config.anonKey },
      data: { email, password },
    });
    expect(res.status(), await res.text()).toBe(200);
    const session = await res.json() as { access_token: string; user: { id: string } };
    return new Api(http, session.access_token, session.user.id, config.anonKey);
  }

  async call<T = Record<string, unknown>>(
    method: "GET" | "POST" | "PUT" | "PATCH",
    path: string,
    data?: unknown,
    status = method === "POST" && /\/(deliveries|drivers)$/.test(path) ? 201 : 200,
  ): Promise<T> {
    const res = await this.http.fetch(path, {
      method,
      headers: { authorization: `Bearer ${this.token}` },
      data: data as never,
    });
    expect(res.status(), `${method} ${path}: ${await res.text()}`).toBe(status);
    return await res.json() as T;
  }

  async dispose() {
    await this.http.dispose();
  }
}

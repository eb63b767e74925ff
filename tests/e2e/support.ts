// What every browser journey shares: the stack's address, contexts whose pages are watched for errors, signing in,
// screenshots, and the checks run on many pages. A journey fails on any uncaught error in a page it opened, and on
// any console error other than the browser's own line for an HTTP refusal (4xx) the app answered in words.
import { type Browser, type BrowserContext, expect, type Locator, type Page, test as base } from "@playwright/test";
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

/** Records the uncaught errors and console errors of every page the context opens. */
export function watch(context: BrowserContext): BrowserContext {
  context.on("weberror", (error) => problems.push(`uncaught in ${error.page()?.url()}: ${error.error().stack}`));
  context.on("console", (message) => {
    if (message.type() === "error" && !REFUSAL.test(message.text())) {
      problems.push(`console error in ${message.page()?.url()}: ${message.text()}`);
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
  noBrowserErrors: [async ({}, run) => {
    problems.length = 0;
    await run();
    expect(problems, "errors in the browser").toEqual([]);
  }, { auto: true }],
});

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

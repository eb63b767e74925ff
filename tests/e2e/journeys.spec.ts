// The company panel and the driver app in a real browser, one journey after
// another on one local stack: an owner's Pix delivery paid through the
// webhook, a driver carrying it out live, a withdrawal completed live, and
// the webhook log, roles and sign-in errors. Every assertion reads the screen.
import { type Browser, type BrowserContext, expect, type Page, test } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";

/** Where each journey's last screen is written (gitignored). */
const SCREENSHOTS = resolve(import.meta.dirname, "screenshots");
mkdirSync(SCREENSHOTS, { recursive: true });
const shot = (page: Page, name: string) =>
  page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });

const COMPANY_ID = "c0000000-0000-4000-8000-000000000001";
const WEBHOOK_SECRET = "e2e-company-webhook-secret-0123456789abcdef";
const SE = { latitude: -23.5503, longitude: -46.6339 };
const baseURL = () => process.env.E2E_BASE_URL!;
const formatBRL = (value: number) =>
  new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" }).format(value);
const brl = (text: string | null) => Number(text!.replace(/[^\d,-]/g, "").replace(",", "."));

async function newContext(browser: Browser, options: Parameters<Browser["newContext"]>[0] = {}) {
  return await browser.newContext({ baseURL: baseURL(), ...options });
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto("/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Every input, select and textarea on the page has an accessible label. */
async function expectLabelled(page: Page) {
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

/** A delivery's row in the deliveries table, found by its link. */
const deliveryRow = (page: Page, id: string) =>
  page.getByRole("row").filter({ has: page.getByRole("link", { name: `Open delivery ${id.slice(0, 8)}` }) });

let owner: BrowserContext;
let driver: BrowserContext;
let ownerPage: Page;
let driverPage: Page;
let deliveryId = "";

test.describe.serial("the company panel and the driver app", () => {
  test.beforeAll(async ({ browser }) => {
    owner = await newContext(browser);
    driver = await newContext(browser, {
      viewport: { width: 390, height: 844 },
      geolocation: SE,
      permissions: ["geolocation"],
    });
    ownerPage = await owner.newPage();
    driverPage = await driver.newPage();
  });
  test.afterAll(async () => {
    await owner?.close();
    await driver?.close();
  });

  test("1. an owner creates a Pix delivery with a live quote, sees its QR code, and the payment turns it pending live", async () => {
    const page = ownerPage;
    // Signed in with the keyboard only.
    await page.goto("/");
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expectLabelled(page);
    await expect(page.getByLabel("Email")).toBeFocused();
    await page.keyboard.type("owner@demo.test");
    await page.keyboard.press("Tab");
    await page.keyboard.type("demo-owner-pass");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Deliveries" })).toBeVisible();
    await expect(page.getByText("Signed in as owner@demo.test (Owner)")).toBeVisible();

    // The owner gives the company its gateway configuration (the built-in simulator, sandbox key).
    await page.getByRole("link", { name: "Gateway" }).click();
    await expect(page.getByText("Not configured")).toBeVisible();
    await page.getByLabel("API key").fill("$aact_hmlg_e2e_key");
    await page.getByLabel("Webhook secret (at least 32 characters)").fill(WEBHOOK_SECRET);
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Gateway configuration saved.")).toBeVisible();
    await expect(page.getByText("Configured (sandbox).")).toBeVisible();

    // The driver's app is open before the delivery is paid: nothing to take yet.
    await signIn(driverPage, "driver1@demo.test", "demo-driver-pass");
    await expect(driverPage.getByRole("heading", { name: "Available deliveries" })).toBeVisible();
    await expect(driverPage.getByText("No deliveries available right now.")).toBeVisible();

    await page.getByRole("link", { name: "New delivery" }).first().click();
    await expect(page.getByRole("heading", { name: "New delivery" })).toBeVisible();
    await expectLabelled(page);
    await page.getByLabel("Pick-up address").fill("Praça da Sé, São Paulo");
    await page.getByLabel("Drop-off address").fill("Av. Paulista, 1000");
    // The quote follows the points as they are typed.
    const quote = page.getByRole("region", { name: "Quote" }).getByText(/ km, about /);
    await expect(quote).toHaveText(/km, about \d+ min: R\$\s?\d/);
    const firstQuote = await quote.textContent();
    await page.getByLabel("Drop-off latitude").fill("-23.5700");
    await expect(quote).not.toHaveText(firstQuote!);
    await page.getByLabel("Client name").fill("Carla Client");
    await page.getByLabel("Client CPF or CNPJ").fill("529.982.247-25");
    await page.getByRole("button", { name: "Create delivery" }).click();

    await expect(page.getByRole("heading", { name: /^Delivery / })).toBeVisible();
    deliveryId = page.url().split("/").pop()!;
    await expect(page.getByText("Awaiting payment").first()).toBeVisible();
    const qr = page.getByRole("img", { name: "Pix QR code" });
    await expect(qr).toBeVisible();
    // A real PNG that the browser decoded, not a broken image.
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100)).toBe(true);
    await expect(page.getByLabel("Pix copy-paste code")).toHaveValue(/^000201.*br\.gov\.bcb\.pix/);

    await page.getByRole("link", { name: "Back to deliveries" }).click();
    const row = deliveryRow(page, deliveryId);
    await expect(row.getByText("Awaiting payment")).toBeVisible();

    // The client pays: the gateway records it and reports it to the company's webhook, signed with the
    // company's secret; the row changes without a reload.
    const res = await page.request.post("/_sim/web/events", {
      data: {
        event: "PAYMENT_RECEIVED",
        external_reference: deliveryId,
        company_id: COMPANY_ID,
        webhook_secret: WEBHOOK_SECRET,
      },
    });
    expect(res.status()).toBe(200);
    await expect(row.getByText("Pending")).toBeVisible();
    await expect(row.getByText("Pix: Received")).toBeVisible();
    await shot(page, "1-owner-delivery-paid");
  });

  test("2. a driver sees it appear live, accepts, starts (an early location update is a 429 in words), moves on the owner's map, completes, and is credited", async () => {
    const page = driverPage;
    const offer = page.getByRole("listitem", { name: "Praça da Sé, São Paulo → Av. Paulista, 1000" });
    await expect(offer).toBeVisible();
    await offer.getByRole("button", { name: "Accept" }).click();
    await expect(page.getByRole("heading", { name: "Current delivery" })).toBeVisible();
    await expect(page.getByText("Accepted", { exact: true })).toBeVisible();
    // A position sent a moment ago from elsewhere (the driver's own session, through the API) makes the
    // app's first update too early: the 429 is shown as a sentence, and the app sends again when allowed.
    const token = await page.evaluate(() => {
      const key = Object.keys(localStorage).find((k) => k.startsWith("sb-") && k.endsWith("-auth-token"))!;
      return JSON.parse(localStorage.getItem(key)!).access_token as string;
    });
    const early = await page.request.put("/api/v1/locations/me", {
      headers: { authorization: `Bearer ${token}` },
      data: { lat: SE.latitude, lng: SE.longitude },
    });
    expect(early.status()).toBe(200);
    await page.getByRole("button", { name: "Start delivery" }).click();
    await expect(page.getByText("In progress", { exact: true })).toBeVisible();
    await expect(page.getByText(/^Too many updates\. The next one goes in \d+ s\.$/)).toBeVisible();
    await expect(page.getByText(/^Location sent at /)).toBeVisible({ timeout: 15_000 });
    await expect(page.getByRole("img", { name: "Route map" }).getByTitle("You are here")).toHaveCount(1);
    await expect(page.getByText(/^Too many updates/)).toHaveCount(0);

    // The owner follows the delivery on its page: the driver's position, then the next one.
    await deliveryRow(ownerPage, deliveryId).getByRole("link").click();
    await expect(ownerPage.getByText("In progress", { exact: true })).toBeVisible();
    const position = ownerPage.getByText(/^Driver at /);
    await expect(position).toContainText("-23.55030, -46.63390");
    await expect(ownerPage.getByRole("img", { name: "Route map" }).getByTitle("Driver", { exact: true })).toHaveCount(
      1,
    );
    await driver.setGeolocation({ latitude: -23.5561, longitude: -46.6449 });
    // At most one update per 10 s: the next one arrives within about that.
    await expect(position).toContainText("-23.55610, -46.64490", { timeout: 20_000 });
    await expect(ownerPage.getByText(/Trail: [2-9]\d* points/)).toBeVisible();
    await shot(ownerPage, "2-owner-map-driver-moving");

    await page.getByRole("button", { name: "Complete delivery" }).click();
    await expect(page.getByText("You have no delivery in progress.")).toBeVisible();
    await expect(ownerPage.getByText("Completed", { exact: true }).first()).toBeVisible();

    await page.getByRole("link", { name: "Wallet" }).click();
    await expect(page.getByRole("heading", { name: "Wallet" })).toBeVisible();
    const credit = page.getByRole("listitem").filter({ hasText: "Delivery credit" });
    await expect(credit).toHaveCount(1);
    const amount = (await credit.locator("strong").textContent())!;
    await expect(page.getByRole("status", { name: "Balance" })).toHaveText(amount);
    expect(amount).not.toMatch(/0,00$/);
    await shot(page, "2-driver-wallet-credited");
  });

  test("3. the driver requests a withdrawal and sees it complete live when TRANSFER_DONE arrives", async () => {
    const page = driverPage;
    await expectLabelled(page);
    // More than the balance: refused, and said in words, not as the API's JSON.
    await page.getByLabel("Amount (R$)").fill("1000");
    await page.getByLabel("Pix key type").selectOption("email");
    await page.getByLabel("Pix key", { exact: true }).fill("dora@pix.example.com");
    await page.getByRole("button", { name: "Request withdrawal" }).click();
    const refusal = page.getByRole("alert");
    await expect(refusal).toHaveText(/^That cannot be done now: .+\.$/);
    await expect(refusal).not.toContainText("{");

    await page.getByLabel("Amount (R$)").fill("5");
    await page.getByLabel("Pix key type").selectOption("email");
    await page.getByLabel("Pix key", { exact: true }).fill("dora@pix.example.com");
    await page.getByRole("button", { name: "Request withdrawal" }).click();
    const withdrawal = page.getByRole("listitem", { name: /R\$\s?5,00 / });
    await expect(withdrawal).toHaveAccessibleName(/Processing/);

    // The owner fires the gateway's TRANSFER_DONE from the local simulators page.
    await ownerPage.getByRole("link", { name: "Simulators" }).click();
    await expect(ownerPage.getByRole("heading", { name: "Simulators (local stack only)" })).toBeVisible();
    await ownerPage.getByRole("button", { name: /^TRANSFER_DONE for / }).click();
    await expect(ownerPage.getByText("TRANSFER_DONE sent: accepted by the webhook.")).toBeVisible();

    await expect(withdrawal).toHaveAccessibleName(/Completed/);
    await expect(page.getByRole("listitem").filter({ hasText: "Withdrawal:" })).toHaveCount(1);
    // The debit is in the balance, also without a reload.
    const credit = brl(
      await page.getByRole("listitem").filter({ hasText: "Delivery credit" }).locator("strong").textContent(),
    );
    await expect(page.getByRole("status", { name: "Balance" })).toHaveText(formatBRL(credit - 5));
    await shot(page, "3-driver-withdrawal-completed");
  });

  test("4. the webhook log shows the events; roles see only their pages; a wrong password is explained", async ({ browser }) => {
    await ownerPage.getByRole("link", { name: "Webhook log" }).click();
    const log = ownerPage.getByRole("table");
    await expect(log.getByRole("row").filter({ hasText: "PAYMENT_RECEIVED" }).getByText("Processed")).toBeVisible();
    await expect(log.getByRole("row").filter({ hasText: "TRANSFER_DONE" }).getByText("Processed")).toBeVisible();
    await shot(ownerPage, "4-owner-webhook-log");

    // The panel works from the keyboard: a navigation link followed with Enter.
    await ownerPage.getByRole("link", { name: "Drivers" }).focus();
    await ownerPage.keyboard.press("Enter");
    await expect(ownerPage.getByRole("heading", { name: "Drivers" })).toBeVisible();
    await expectLabelled(ownerPage);

    const admin = await newContext(browser);
    const adminPage = await admin.newPage();
    await signIn(adminPage, "admin@demo.test", "demo-admin-pass");
    await expect(adminPage.getByRole("heading", { name: "Deliveries" })).toBeVisible();
    const nav = adminPage.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Webhook log" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Billing" })).toHaveCount(0);
    await expect(nav.getByRole("link", { name: "Gateway" })).toHaveCount(0);
    await adminPage.goto("/billing");
    await expect(adminPage.getByText("Your role cannot open this page.")).toBeVisible();
    await adminPage.goto("/gateway");
    await expect(adminPage.getByText("Your role cannot open this page.")).toBeVisible();
    await shot(adminPage, "4-admin-no-gateway");
    await admin.close();

    // The legacy admin (older token form) runs deliveries, but not the company's money or its log.
    const legacy = await newContext(browser);
    const legacyPage = await legacy.newPage();
    await signIn(legacyPage, "legacy-admin@demo.test", "demo-legacy-pass");
    await expect(legacyPage.getByRole("heading", { name: "Deliveries" })).toBeVisible();
    await expect(deliveryRow(legacyPage, deliveryId).getByText("Completed")).toBeVisible();
    // Its token has no company_id claim; the company channel lets it in all the same.
    await expect(legacyPage.getByText("Live", { exact: true })).toBeVisible();
    const legacyNav = legacyPage.getByRole("navigation", { name: "Main" });
    for (const name of ["Webhook log", "Withdrawals", "Gateway", "Billing"]) {
      await expect(legacyNav.getByRole("link", { name })).toHaveCount(0);
    }
    await legacy.close();

    await driverPage.goto("/deliveries");
    await expect(driverPage.getByText("Your role cannot open this page.")).toBeVisible();
    await expect(driverPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deliveries" }))
      .toHaveCount(0);
    await shot(driverPage, "4-driver-no-panel");

    const stranger = await newContext(browser);
    const strangerPage = await stranger.newPage();
    await signIn(strangerPage, "owner@demo.test", "not-the-password");
    await expect(strangerPage.getByRole("alert")).toHaveText(
      "The email or password is wrong. Check them and try again.",
    );
    await shot(strangerPage, "4-wrong-password");
    await stranger.close();
  });

  test("5. the owner assigns an invoice delivery and cancels another; every panel page labels its inputs", async () => {
    const page = ownerPage;
    async function createInvoice(to: string) {
      await page.getByRole("link", { name: "New delivery" }).first().click();
      await page.getByLabel("Pick-up address").fill("Praça da Sé, São Paulo");
      await page.getByLabel("Drop-off address").fill(to);
      await page.getByLabel("Payment method", { exact: true }).selectOption("invoice");
      await expect(page.getByLabel("Client name")).toHaveCount(0);
      await page.getByRole("button", { name: "Create delivery" }).click();
      await expect(page.getByRole("heading", { name: /^Delivery / })).toBeVisible();
      await expect(page.getByText("Invoice: Invoiced")).toBeVisible();
    }

    await createInvoice("Rua Augusta, 500");
    await page.getByLabel("Assign to driver").selectOption({ label: "Dino Driver" });
    await page.getByRole("button", { name: "Assign", exact: true }).click();
    await expect(page.getByText("Accepted", { exact: true }).first()).toBeVisible();
    await expect(page.locator("dd").filter({ hasText: "Dino Driver" })).toBeVisible();

    await createInvoice("Rua Oscar Freire, 10");
    await page.getByLabel("Reason for cancelling").fill("The client changed their mind");
    await page.getByRole("button", { name: "Cancel delivery" }).click();
    await expect(page.getByText("Cancelled", { exact: true }).first()).toBeVisible();
    await expect(page.getByText("Reason for cancelling: The client changed their mind")).toBeVisible();
    await shot(page, "5-owner-cancelled");

    for (
      const [link, heading] of [
        ["Deliveries", "Deliveries"],
        ["Drivers", "Drivers"],
        ["Live map", "Live map of drivers"],
        ["Prices", "Prices"],
        ["Withdrawals", "Withdrawals"],
        ["Webhook log", "Webhook log"],
        ["Gateway", "Payment gateway"],
        ["Billing", "Billing"],
        ["Simulators", "Simulators (local stack only)"],
      ]
    ) {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link, exact: true }).click();
      await expect(page.getByRole("heading", { name: heading, exact: true })).toBeVisible();
      await expectLabelled(page);
      if (link === "Live map") {
        // Dora's last position, from journey 2.
        await expect(page.getByRole("listitem").filter({ hasText: "Dora Driver" })).toContainText(
          "-23.55610, -46.64490",
        );
      }
    }
  });

  test("the first load of the built app is under 300 KB of JavaScript, gzipped", async ({ browser }) => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const scripts: Promise<number>[] = [];
    page.on("response", (res) => {
      if (res.url().endsWith(".js")) scripts.push(res.body().then((body) => gzipSync(body, { level: 9 }).length));
    });
    await page.goto("/", { waitUntil: "networkidle" });
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    const sizes = await Promise.all(scripts);
    const total = sizes.reduce((a, b) => a + b, 0);
    console.log(`first load: ${sizes.length} JavaScript files, ${(total / 1024).toFixed(1)} KB gzipped`);
    expect(sizes.length).toBeGreaterThan(0);
    expect(total).toBeLessThan(300 * 1024);
    await context.close();
  });
});

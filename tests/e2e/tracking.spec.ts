// The recipient's tracking page follows a driver to the door: the owner copies
// the link from the delivery's page, the recipient opens it without an account,
// and sees the driver assigned, on the way on the map with an ETA, then arrived.
// The driver's moves go through the API, as the driver app would send them.
import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { resolve } from "node:path";

const baseURL = () => process.env.E2E_BASE_URL!;

async function driverToken(request: APIRequestContext, anonKey: string) {
  const res = await request.post("/auth/v1/token?grant_type=password", {
    headers: { apikey: anonKey },
    data: { email: "driver2@demo.test", password: "demo-driver-pass" },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token as string;
}

/** A position, sent again when the 10-second limit asks to wait (an earlier spec may have sent one). */
async function putLocation(page: Page, token: string, data: { lat: number; lng: number }) {
  for (;;) {
    const res = await page.request.put("/api/v1/locations/me", { headers: { authorization: `Bearer ${token}` }, data });
    if (res.status() !== 429) {
      expect(res.status(), await res.text()).toBe(200);
      return await res.json();
    }
    await page.waitForTimeout(Number(res.headers()["retry-after"]) * 1000);
  }
}

async function asDriver(page: Page, token: string, path: string) {
  const res = await page.request.post(path, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status(), await res.text()).toBe(200);
  return await res.json();
}

test("the recipient's page follows a driver to the door; the panel shows and copies the link", async ({ browser }) => {
  const owner = await browser.newContext({ baseURL: baseURL(), permissions: ["clipboard-read", "clipboard-write"] });
  const recipient = await browser.newContext({ baseURL: baseURL(), viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  const page = await recipient.newPage();

  await ownerPage.goto("/");
  await ownerPage.getByLabel("Email").fill("owner@demo.test");
  await ownerPage.getByLabel("Password").fill("demo-owner-pass");
  await ownerPage.getByRole("button", { name: "Sign in" }).click();
  await expect(ownerPage.getByRole("heading", { name: "Deliveries" })).toBeVisible();
  // This journey completes without proof: the company requires none (whatever an earlier spec left).
  const ownerToken = await ownerPage.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("sb-") && k.endsWith("-auth-token"))!;
    return JSON.parse(localStorage.getItem(key)!).access_token as string;
  });
  const none = await ownerPage.request.put("/api/v1/companies/me/proof-requirements", {
    headers: { authorization: `Bearer ${ownerToken}` },
    data: { photo: false, signature: false, note: false },
  });
  expect(none.status()).toBe(200);
  await ownerPage.getByRole("link", { name: "New delivery" }).first().click();
  await ownerPage.getByLabel("Pick-up address").fill("Praça da Sé, São Paulo");
  await ownerPage.getByLabel("Drop-off address").fill("Rua Vergueiro, 1000");
  await ownerPage.getByLabel("Payment method", { exact: true }).selectOption("invoice");
  await ownerPage.getByRole("button", { name: "Create delivery" }).click();
  await expect(ownerPage.getByRole("heading", { name: /^Delivery / })).toBeVisible();
  const deliveryId = ownerPage.url().split("/").pop()!;
  await ownerPage.getByLabel("Assign to driver").selectOption({ label: "Dino Driver" });
  await ownerPage.getByRole("button", { name: "Assign", exact: true }).click();
  await expect(ownerPage.getByText("Accepted", { exact: true }).first()).toBeVisible();

  // The link is on the delivery's page, and copies.
  const link = ownerPage.getByLabel("Tracking link for the recipient");
  await expect(link).toHaveValue(new RegExp(`^${baseURL()}/track/[A-Za-z0-9_-]{22}$`));
  const url = await link.inputValue();
  await ownerPage.getByRole("button", { name: "Copy link" }).click();
  await expect(ownerPage.getByRole("button", { name: "Link copied" })).toBeVisible();
  expect(await ownerPage.evaluate(() => navigator.clipboard.readText())).toBe(url);

  // The recipient opens it with no account: the driver is assigned, not yet on the way.
  await page.goto(url);
  await expect(page.getByRole("heading", { name: "Your delivery" })).toBeVisible();
  const summary = page.getByRole("status", { name: "Delivery status" });
  await expect(summary).toHaveText("Dino will pick up your delivery soon.");
  await expect(page.getByRole("img", { name: "Driver's position" })).toHaveCount(0);
  await expect(page.getByText("Driver Dino")).toHaveCount(0); // only the first name, in the sentence
  expect(await page.evaluate(() => localStorage.length)).toBe(0); // nobody is signed in

  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );
  const token = await driverToken(page.request, anonKey);
  await asDriver(page, token, `/api/v1/deliveries/${deliveryId}/start`);
  // Live, through the link's channel: no reload.
  await expect(summary).toHaveText("Dino is on the way with your delivery.");
  const map = page.getByRole("img", { name: "Driver's position" });
  await expect(map).toBeVisible();

  const first = await putLocation(page, token, { lat: -23.5540, lng: -46.6380 });
  await expect(map.getByTitle("Your driver")).toHaveCount(1);
  const seen = page.getByText(/^Position updated at /);
  await expect(seen).toBeVisible();
  const firstSeen = await seen.textContent();
  // The ETA, refreshed from the routing service after the position.
  await expect(page.getByRole("status", { name: "Arrival" })).toHaveText(
    /^Arriving around .+ \(\d+(\.\d)? km to go\)\.$/,
  );
  await expect(ownerPage.getByText(/^around .+, \d+(\.\d)? km to go$/)).toBeVisible();

  // The next position is accepted 10 s after the first: the marker follows it.
  await page.waitForTimeout(Math.max(0, Date.parse(first.updated_at) + 10_200 - Date.now()));
  await putLocation(page, token, { lat: -23.5790, lng: -46.6400 });
  await expect(seen).not.toHaveText(firstSeen!);
  await expect(map.getByTitle("Your driver")).toHaveCount(1);
  await page.screenshot({
    path: resolve(import.meta.dirname, "screenshots", "tracking-on-the-way.png"),
    fullPage: true,
  });

  // At the door.
  await asDriver(page, token, `/api/v1/deliveries/${deliveryId}/complete`);
  await expect(summary).toHaveText("Your delivery has arrived.");
  await expect(page.getByText("Delivered", { exact: true }).first()).toBeVisible();
  await expect(page.getByRole("img", { name: "Driver's position" })).toHaveCount(0);
  await expect(page.getByRole("status", { name: "Arrival" })).toHaveCount(0);
  await expect(page.getByRole("listitem").filter({ hasText: "Picked up" })).toHaveCount(1);

  // A link that is not one.
  await page.goto(`${url.slice(0, -1)}${url.endsWith("A") ? "B" : "A"}`);
  await expect(page.getByRole("alert")).toHaveText("This tracking link is not valid. Check that you copied all of it.");

  await owner.close();
  await recipient.close();
});

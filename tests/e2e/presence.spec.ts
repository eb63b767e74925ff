// Who is online (Realtime presence on company:{company_id}): the driver app
// tracks itself there, the panel's Drivers page and live map show it. Runs
// when the project's realtime policies let drivers use presence (they come
// with the local Realtime's presence support); skipped, and saying so, before.
import { expect, test } from "@playwright/test";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";

const migrations = resolve(import.meta.dirname, "../../supabase/migrations");
const presenceInStack = readdirSync(migrations).some((file) =>
  readFileSync(resolve(migrations, file), "utf8").includes("extension = 'presence'")
);

test("the owner sees a driver come online and go offline", async ({ browser }) => {
  test.skip(!presenceInStack, "no presence policy on realtime.messages in supabase/migrations yet");
  const owner = await browser.newContext({ baseURL: process.env.E2E_BASE_URL });
  const driver = await browser.newContext({ baseURL: process.env.E2E_BASE_URL });
  const ownerPage = await owner.newPage();
  const driverPage = await driver.newPage();
  for (
    const [page, email, password] of [
      [ownerPage, "owner@demo.test", "demo-owner-pass"],
      [driverPage, "driver1@demo.test", "demo-driver-pass"],
    ] as const
  ) {
    await page.goto("/");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  }
  await ownerPage.getByRole("link", { name: "Drivers" }).click();
  const dora = ownerPage.getByRole("row").filter({ hasText: "Dora Driver" });
  await expect(dora.getByText("Online", { exact: true })).toBeVisible();
  await expect(ownerPage.getByRole("row").filter({ hasText: "Dino Driver" }).getByText("Offline", { exact: true }))
    .toBeVisible();
  await ownerPage.getByRole("link", { name: "Live map" }).click();
  await expect(ownerPage.getByText("1 online now")).toBeVisible();

  await driver.close();
  await expect(ownerPage.getByText("0 online now")).toBeVisible({ timeout: 15_000 });
  await owner.close();
});

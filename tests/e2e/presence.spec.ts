// Who is online (Realtime presence on company:{company_id}): the driver app
// tracks itself there, the panel's Drivers page and live map show it. Runs
// when the project's realtime policies let drivers use presence (they come
// with the local Realtime's presence support); skipped, and saying so, before.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, newContext, signIn, test } from "./support.ts";

const migrations = resolve(import.meta.dirname, "../../supabase/migrations");
const presenceInStack = readdirSync(migrations).some((file) =>
  readFileSync(resolve(migrations, file), "utf8").includes("extension = 'presence'")
);

test("the owner sees a driver come online and go offline", async ({ browser }) => {
  test.skip(!presenceInStack, "no presence policy on realtime.messages in supabase/migrations yet");
  const owner = await newContext(browser);
  const driver = await newContext(browser);
  const ownerPage = await owner.newPage();
  const driverPage = await driver.newPage();
  for (
    const [page, email, password] of [
      [ownerPage, "owner@demo.test", "demo-owner-pass"],
      [driverPage, "driver1@demo.test", "demo-driver-pass"],
    ] as const
  ) {
    await signIn(page, email, password);
    await expect(page.getByRole("button", { name: "Sair" })).toBeVisible();
  }
  await ownerPage.getByRole("link", { name: "Entregadores" }).click();
  const dora = ownerPage.getByRole("row").filter({ hasText: "Dora Driver" });
  await expect(dora.getByText("Online", { exact: true })).toBeVisible();
  await expect(ownerPage.getByRole("row").filter({ hasText: "Dino Driver" }).getByText("Offline", { exact: true }))
    .toBeVisible();
  await ownerPage.getByRole("link", { name: "Mapa ao vivo" }).click();
  await expect(ownerPage.getByText("1 online agora")).toBeVisible();

  await driver.close();
  await expect(ownerPage.getByText("0 online agora")).toBeVisible({ timeout: 15_000 });
  await owner.close();
});

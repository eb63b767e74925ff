// Proof of delivery in the browser: the driver app captures a photo (the file
// input the phone's camera fills), the recipient's signature on the pad and a
// note; after completion the panel's delivery page shows the photo and the
// signature, read from the private bucket through signed URLs.
import { expect, test } from "@playwright/test";
import { resolve } from "node:path";

const baseURL = () => process.env.E2E_BASE_URL!;
// A 2x2 red PNG.
const PHOTO = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

test("the driver captures a photo and a signature; the panel shows them after completion", async ({ browser }) => {
  const owner = await browser.newContext({ baseURL: baseURL() });
  const driver = await browser.newContext({ baseURL: baseURL(), viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  const driverPage = await driver.newPage();

  await ownerPage.goto("/");
  await ownerPage.getByLabel("Email").fill("owner@demo.test");
  await ownerPage.getByLabel("Password").fill("demo-owner-pass");
  await ownerPage.getByRole("button", { name: "Sign in" }).click();
  // The company requires a photo and a signature.
  await ownerPage.getByRole("link", { name: "Prices" }).click();
  const required = ownerPage.getByRole("group", { name: "Proof of delivery required to complete" });
  // Each box saves when clicked, and shows the saved state.
  await required.getByLabel("A photo").click();
  await expect(required.getByLabel("A photo")).toBeChecked();
  await expect(required.getByText("Saved.")).toBeVisible();
  await required.getByLabel("The recipient's signature").click();
  await expect(required.getByLabel("The recipient's signature")).toBeChecked();

  await ownerPage.getByRole("link", { name: "New delivery" }).first().click();
  await ownerPage.getByLabel("Pick-up address").fill("Praça da Sé, São Paulo");
  await ownerPage.getByLabel("Drop-off address").fill("Rua da Consolação, 200");
  await ownerPage.getByLabel("Payment method", { exact: true }).selectOption("invoice");
  await ownerPage.getByRole("button", { name: "Create delivery" }).click();
  await expect(ownerPage.getByRole("heading", { name: /^Delivery / })).toBeVisible();
  const deliveryPath = new URL(ownerPage.url()).pathname;
  await ownerPage.getByLabel("Assign to driver").selectOption({ label: "Dora Driver" });
  await ownerPage.getByRole("button", { name: "Assign", exact: true }).click();
  await expect(ownerPage.getByText("Accepted", { exact: true }).first()).toBeVisible();

  await driverPage.goto("/");
  await driverPage.getByLabel("Email").fill("driver1@demo.test");
  await driverPage.getByLabel("Password").fill("demo-driver-pass");
  await driverPage.getByRole("button", { name: "Sign in" }).click();
  await expect(driverPage.getByText("Rua da Consolação, 200")).toBeVisible();
  await driverPage.getByRole("button", { name: "Start delivery" }).click();
  const proof = driverPage.getByRole("group", { name: "Proof of delivery" });
  await expect(proof).toBeVisible();

  // A file that is not an image is refused with a sentence, before anything is sent.
  await proof.getByLabel("Photo of the delivery").setInputFiles({
    name: "notes.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("hi"),
  });
  await expect(driverPage.getByRole("alert")).toHaveText("The photo must be a JPEG, PNG or WebP image.");
  await proof.getByLabel("Photo of the delivery").setInputFiles({
    name: "door.png",
    mimeType: "image/png",
    buffer: PHOTO,
  });
  await expect(driverPage.getByRole("alert")).toHaveCount(0);

  await expect(proof.getByText("Photo of the delivery (required)")).toBeVisible();
  // Without the signature the company requires, completing is refused in words (the photo is sent already).
  await driverPage.getByRole("button", { name: "Complete delivery" }).click();
  await expect(driverPage.getByRole("alert")).toHaveText(
    "That cannot be done now: proof of delivery required: signature missing.",
  );

  // The recipient signs on the pad.
  const pad = proof.getByRole("img", { name: "Recipient's signature" });
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await driverPage.mouse.move(box.x + 20, box.y + box.height / 2);
  await driverPage.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await driverPage.mouse.move(box.x + 20 + i * 25, box.y + box.height / 2 + (i % 2 ? -20 : 20));
  }
  await driverPage.mouse.up();
  await expect(proof.getByText("Signed.")).toBeVisible();
  await proof.getByLabel("Note for the company").fill("Left with the doorman");
  await driverPage.getByRole("button", { name: "Complete delivery" }).click();
  await expect(driverPage.getByText("You have no delivery in progress.")).toBeVisible();

  await ownerPage.goto(deliveryPath);
  await expect(ownerPage.getByText("Completed", { exact: true }).first()).toBeVisible();
  const shown = ownerPage.getByRole("region", { name: "Proof of delivery" });
  for (const name of ["Photo of the delivery", "Recipient's signature"]) {
    const img = shown.getByRole("img", { name });
    await expect(img).toBeVisible();
    await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
  }
  // The signature is the pad's drawing: a wide PNG.
  expect(
    await shown.getByRole("img", { name: "Recipient's signature" }).evaluate((i: HTMLImageElement) => i.naturalWidth),
  ).toBe(600);
  await expect(shown.getByText("Driver's note: Left with the doorman")).toBeVisible();
  // Back to requiring nothing, for the journeys that follow.
  await ownerPage.getByRole("link", { name: "Prices" }).click();
  for (const kind of ["A photo", "The recipient's signature"]) {
    await required.getByLabel(kind).click();
    await expect(required.getByLabel(kind)).not.toBeChecked();
  }
  await ownerPage.goto(deliveryPath);
  await expect(shown.getByRole("img", { name: "Photo of the delivery" })).toBeVisible();
  await ownerPage.screenshot({
    path: resolve(import.meta.dirname, "screenshots", "proof-on-panel.png"),
    fullPage: true,
  });

  await owner.close();
  await driver.close();
});

// Proof of delivery in the browser: the driver app captures a photo (the file
// input the phone's camera fills), the recipient's signature on the pad and a
// note; after completion the panel's delivery page shows the photo and the
// signature, read from the private bucket through signed URLs.
import { expect, newContext, shot, signIn, test } from "./support.ts";
// A 2x2 red PNG.
const PHOTO = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

test("the driver captures a photo and a signature; the panel shows them after completion", async ({ browser }) => {
  const owner = await newContext(browser);
  const driver = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const ownerPage = await owner.newPage();
  const driverPage = await driver.newPage();

  await signIn(ownerPage, "owner@demo.test", "demo-owner-pass");
  // The company requires a photo and a signature.
  await ownerPage.getByRole("link", { name: "Preços" }).click();
  const required = ownerPage.getByRole("group", { name: "Prova de entrega exigida para concluir" });
  // Each box saves when clicked, and shows the saved state.
  await required.getByLabel("Uma foto").click();
  await expect(required.getByLabel("Uma foto")).toBeChecked();
  await expect(required.getByText("Salvo.")).toBeVisible();
  await required.getByLabel("A assinatura de quem recebe").click();
  await expect(required.getByLabel("A assinatura de quem recebe")).toBeChecked();

  await ownerPage.getByRole("link", { name: "Nova entrega" }).first().click();
  await ownerPage.getByLabel("Endereço de retirada").fill("Praça da Sé, São Paulo");
  await ownerPage.getByLabel("Endereço de entrega").fill("Rua da Consolação, 200");
  await ownerPage.getByLabel("Forma de pagamento", { exact: true }).selectOption("invoice");
  await ownerPage.getByRole("button", { name: "Criar entrega" }).click();
  await expect(ownerPage.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  const deliveryPath = new URL(ownerPage.url()).pathname;
  await ownerPage.getByLabel("Atribuir a um entregador").selectOption({ label: "Dora Driver" });
  await ownerPage.getByRole("button", { name: "Atribuir", exact: true }).click();
  await expect(ownerPage.getByText("Aceita", { exact: true }).first()).toBeVisible();

  await signIn(driverPage, "driver1@demo.test", "demo-driver-pass");
  await expect(driverPage.getByText("Rua da Consolação, 200")).toBeVisible();
  await driverPage.getByRole("button", { name: "Iniciar entrega" }).click();
  const proof = driverPage.getByRole("group", { name: "Prova de entrega" });
  await expect(proof).toBeVisible();

  // A file that is not an image is refused with a sentence, before anything is sent.
  await proof.getByLabel("Foto da entrega").setInputFiles({
    name: "notes.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("hi"),
  });
  await expect(driverPage.getByRole("alert")).toHaveText("A foto precisa ser uma imagem JPEG, PNG ou WebP.");
  await proof.getByLabel("Foto da entrega").setInputFiles({
    name: "door.png",
    mimeType: "image/png",
    buffer: PHOTO,
  });
  await expect(driverPage.getByRole("alert")).toHaveCount(0);

  await expect(proof.getByText("Foto da entrega (obrigatório)")).toBeVisible();
  // Without the signature the company requires, completing is refused in words (the photo is sent already).
  await driverPage.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(driverPage.getByRole("alert")).toHaveText(
    "Falta a prova de entrega que a empresa exige: assinatura.",
  );

  // The recipient signs on the pad.
  const pad = proof.getByRole("img", { name: "Assinatura de quem recebe" });
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await driverPage.mouse.move(box.x + 20, box.y + box.height / 2);
  await driverPage.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await driverPage.mouse.move(box.x + 20 + i * 25, box.y + box.height / 2 + (i % 2 ? -20 : 20));
  }
  await driverPage.mouse.up();
  await expect(proof.getByText("Assinado.")).toBeVisible();
  await proof.getByLabel("Observação para a empresa").fill("Deixado com o porteiro");
  await driverPage.getByRole("button", { name: "Concluir entrega" }).click();
  await expect(driverPage.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();

  await ownerPage.goto(deliveryPath);
  await expect(ownerPage.getByText("Concluída", { exact: true }).first()).toBeVisible();
  const shown = ownerPage.getByRole("region", { name: "Prova de entrega" });
  for (const name of ["Foto da entrega", "Assinatura de quem recebe"]) {
    const img = shown.getByRole("img", { name });
    await expect(img).toBeVisible();
    await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
  }
  // The signature is the pad's drawing: a wide PNG.
  expect(
    await shown.getByRole("img", { name: "Assinatura de quem recebe" }).evaluate((i: HTMLImageElement) =>
      i.naturalWidth
    ),
  ).toBe(600);
  await expect(shown.getByText("Observação do entregador: Deixado com o porteiro")).toBeVisible();
  // Back to requiring nothing, for the journeys that follow.
  await ownerPage.getByRole("link", { name: "Preços" }).click();
  for (const kind of ["Uma foto", "A assinatura de quem recebe"]) {
    await required.getByLabel(kind).click();
    await expect(required.getByLabel(kind)).not.toBeChecked();
  }
  await ownerPage.goto(deliveryPath);
  await expect(shown.getByRole("img", { name: "Foto da entrega" })).toBeVisible();
  await shot(ownerPage, "proof-on-panel");

  await owner.close();
  await driver.close();
});

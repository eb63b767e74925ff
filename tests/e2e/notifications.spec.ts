// The recipient is told: a delivery with the recipient's WhatsApp number and
// e-mail is started by its driver; the message the WhatsApp simulator got and
// the e-mail in the local mailbox show on the Simulators page with the
// tracking link, the recipient opens that link, and the delivery's page lists
// the messages sent. The company chooses the events on the notifications page.
import { randomInt } from "node:crypto";
import { accessToken, expect, newContext, shot, signIn, test } from "./support.ts";

test("the recipient's WhatsApp message carries a tracking link that opens their delivery", async ({ browser }) => {
  const owner = await newContext(browser);
  const page = await owner.newPage();
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const ownerToken = await accessToken(page);
  const headers = { authorization: `Bearer ${ownerToken}` };

  // The company's choice: every event but `created`, on WhatsApp and e-mail (as by default).
  await page.getByRole("link", { name: "Notificações" }).click();
  await expect(page.getByRole("heading", { name: "Notificações para quem recebe" })).toBeVisible();
  const created = page.getByLabel("Entrega registrada (oferecida aos entregadores)");
  const started = page.getByLabel("Saiu para entrega", { exact: true });
  await expect(started).toBeChecked();
  if (await created.isChecked()) await created.uncheck();
  await expect(created).not.toBeChecked();
  await expect(page.getByLabel("WhatsApp", { exact: true })).toBeChecked();

  // A delivery for Carla, given to Dora, who sets off.
  const digits = String(randomInt(10_000_000, 99_999_999));
  const drivers = await (await page.request.get("/api/v1/drivers?limit=100", { headers })).json();
  const dora = drivers.items.find((d: { email: string }) => d.email === "driver1@demo.test");
  const create = await page.request.post("/api/v1/deliveries", {
    headers,
    data: {
      origin_address: "Praça da Sé, São Paulo",
      origin: { lat: -23.5505, lng: -46.6333 },
      destination_address: "Av. Paulista, 1000",
      destination: { lat: -23.5614, lng: -46.6559 },
      payment_method: "invoice",
      recipient_name: "Carla Dias",
      recipient_phone: `(21) 9${digits.slice(0, 4)}-${digits.slice(4)}`,
      recipient_email: `carla-${digits}@example.com`,
      driver_id: dora.id,
    },
  });
  expect(create.status(), await create.text()).toBe(201);
  const delivery = await create.json();
  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );
  const signedIn = await page.request.post("/auth/v1/token?grant_type=password", {
    headers: { apikey: anonKey },
    data: { email: "driver1@demo.test", password: "demo-driver-pass" },
  });
  const driverToken = (await signedIn.json()).access_token;
  const start = await page.request.post(`/api/v1/deliveries/${delivery.id}/start`, {
    headers: { authorization: `Bearer ${driverToken}` },
  });
  expect(start.status(), await start.text()).toBe(200);

  // The message, as the simulator received it.
  await page.getByRole("link", { name: "Simuladores" }).click();
  const inbox = page.getByRole("region", { name: "WhatsApp (mensagens que o simulador recebeu)" });
  const message = inbox.getByRole("listitem").filter({ hasText: `Para +55219${digits}` });
  await expect(message).toHaveCount(1);
  await expect(message).toContainText("Olá, Carla! Sua entrega de Demo Deliveries saiu para entrega");
  const link = message.getByRole("link");
  await expect(link).toHaveAttribute("href", new URL(delivery.tracking_url, page.url()).href);
  // The e-mail, as the local mailbox received it: from the company, in Portuguese, with the same link.
  const mailbox = page.getByRole("region", { name: "E-mail (mensagens na caixa de correio local)" });
  const mail = mailbox.getByRole("listitem").filter({
    hasText: `Para carla-${digits}@example.com, de Demo Deliveries`,
  });
  await expect(mail).toHaveCount(1);
  await expect(mail).toContainText("Sua entrega de Demo Deliveries está a caminho");
  await expect(mail).toContainText("Olá, Carla! Sua entrega de Demo Deliveries saiu para entrega");
  await expect(mail.getByRole("link")).toHaveAttribute("href", new URL(delivery.tracking_url, page.url()).href);
  await shot(page, "simulators-whatsapp");

  // The recipient opens it.
  const [tracking] = await Promise.all([owner.waitForEvent("page"), link.click()]);
  await expect(tracking.getByRole("heading", { name: "Sua entrega" })).toBeVisible();
  await expect(tracking.getByRole("status", { name: "Situação da entrega" })).toHaveText(
    "Dora está a caminho com sua entrega.",
  );

  // The delivery's page lists the messages: masked, sent.
  await page.goto(`/deliveries/${delivery.id}`);
  const messages = page.getByRole("region", { name: "Mensagens para quem recebe" });
  const row = messages.getByRole("row").filter({ hasText: "WhatsApp" });
  await expect(row).toContainText("Saiu para entrega");
  await expect(row).toContainText(`*****${digits.slice(4)}`);
  await expect(row).toContainText("Enviada");
  const email = messages.getByRole("row").filter({ hasText: "E-mail" });
  await expect(email).toContainText("c***@example.com");
  await expect(email).toContainText("Enviada");
  await expect(messages).not.toContainText(digits.slice(0, 4));
  await shot(page, "delivery-messages");

  // Dora delivers (requiring no proof, whatever an earlier journey left), and the defaults are back for the others.
  const none = await page.request.put("/api/v1/companies/me/proof-requirements", {
    headers,
    data: { photo: false, signature: false, note: false },
  });
  expect(none.status()).toBe(200);
  const complete = await page.request.post(`/api/v1/deliveries/${delivery.id}/complete`, {
    headers: { authorization: `Bearer ${driverToken}` },
  });
  expect(complete.status(), await complete.text()).toBe(200);
  const reset = await page.request.put("/api/v1/notifications/settings", {
    headers,
    data: { events: ["started", "nearby", "completed", "failed"], channels: ["whatsapp", "email"] },
  });
  expect(reset.status()).toBe(200);
  await owner.close();
});

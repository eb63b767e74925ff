// Integrations in the panel: the owner creates an API key (shown once) and a
// webhook endpoint pointed at a loopback receiver of this test (its secret
// shown once), sends a test event, which arrives signed as Standard Webhooks
// sign and verifies with the standardwebhooks package, and its attempt shows
// with the receiver's status; the key works, and once revoked is refused.
import { createServer, type IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import {
  accessToken,
  expect,
  expectLabelled,
  expectNoSidewaysScroll,
  newContext,
  shot,
  signIn,
  test,
} from "./support.ts";

/** A loopback webhook receiver: what it received (headers and body), answered 200. */
async function receiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { received, port: (server.address() as { port: number }).port, server };
}

test("an API key and a webhook endpoint made in the panel: the test event arrives and its attempt shows", async ({ browser }) => {
  const { received, port, server } = await receiver();
  try {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, "owner@demo.test", "demo-owner-pass");
    await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
    await page.getByRole("link", { name: "Integrações" }).click();
    await expect(page.getByRole("heading", { name: "Integrações", level: 1 })).toBeVisible();

    // An API key, shown once.
    const keyName = `loja ${Date.now()}`;
    await page.getByLabel("Nome").fill(keyName);
    await page.getByRole("button", { name: "Criar chave" }).click();
    const keyBox = page.getByLabel("Chave", { exact: true });
    await expect(keyBox).toHaveValue(/^dp_live_/);
    const key = await keyBox.inputValue();
    await expect(page.getByRole("cell", { name: new RegExp(`^${keyName} dp_live_`) })).toBeVisible();
    expect((await page.request.get("/api/v1/deliveries?limit=1", { headers: { authorization: `Bearer ${key}` } }))
      .status()).toBe(200);

    // An endpoint at the receiver, its secret shown once; the test event.
    const url = `http://127.0.0.1:${port}/hooks`;
    await page.getByLabel("Endereço (URL)").fill(url);
    await page.getByRole("button", { name: "Adicionar endpoint" }).click();
    const secretBox = page.getByLabel("Segredo de assinatura");
    await expect(secretBox).toHaveValue(/^whsec_/);
    const secret = await secretBox.inputValue();
    const endpoint = page.getByRole("article", { name: url });
    await endpoint.getByRole("button", { name: "Enviar evento de teste" }).click();
    await expect(page.getByText("Evento de teste enviado.")).toBeVisible();
    await expect.poll(() => received.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const event = new Webhook(secret).verify(received[0].body, received[0].headers as Record<string, string>);
    expect(event).toMatchObject({ type: "webhook.test" });

    // Its attempt, with the receiver's answer.
    await endpoint.getByText("Tentativas").click();
    const attempts = endpoint.getByRole("table", { name: "Tentativas" });
    await expect(attempts.getByRole("cell", { name: "webhook.test" })).toBeVisible({ timeout: 10_000 });
    await expect(attempts.getByRole("cell", { name: "200" })).toBeVisible();

    // Revoked, the key is refused at once.
    await page.getByRole("button", { name: `Revogar ${keyName}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revogar" }).click();
    await expect(page.getByRole("cell", { name: new RegExp(`^${keyName} dp_live_`) })).toHaveCount(0);
    expect((await page.request.get("/api/v1/deliveries?limit=1", { headers: { authorization: `Bearer ${key}` } }))
      .status()).toBe(401);
  } finally {
    server.close();
  }
});

test("on a phone (390x844): a key and an endpoint made, the test event's attempt shown and resent, nothing wider than the screen", async ({ browser }) => {
  const { received, port, server } = await receiver();
  const context = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  let endpointId: string | undefined;
  try {
    await signIn(page, "admin@demo.test", "demo-admin-pass");
    await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
    await page.getByRole("button", { name: "Menu" }).click();
    await page.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: "Integrações" }).click();
    await expect(page.getByRole("heading", { name: "Integrações", level: 1 })).toBeVisible();
    await expectLabelled(page);
    await expectNoSidewaysScroll(page);

    const keyName = `celular ${Date.now()}`;
    await page.getByLabel("Nome").fill(keyName);
    await page.getByRole("button", { name: "Criar chave" }).click();
    await expect(page.getByLabel("Chave", { exact: true })).toHaveValue(/^dp_live_/);
    // One card per row on a phone: each cell is read with its column's name.
    await expect(page.getByRole("cell", { name: new RegExp(`^Nome ${keyName} dp_live_`) })).toBeVisible();
    await expectNoSidewaysScroll(page);

    const url = `http://127.0.0.1:${port}/phone-hooks`;
    await page.getByLabel("Endereço (URL)").fill(url);
    await page.getByRole("button", { name: "Adicionar endpoint" }).click();
    const secret = await page.getByLabel("Segredo de assinatura").inputValue();
    expect(secret).toMatch(/^whsec_/);
    const endpoint = page.getByRole("article", { name: url });
    await endpoint.getByRole("button", { name: "Enviar evento de teste" }).click();
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
    const first = new Webhook(secret).verify(received[0].body, received[0].headers as Record<string, string>);
    expect(first).toMatchObject({ type: "webhook.test" });

    // The attempt, one card on the phone, and the event resent from it: the same id and body again.
    await endpoint.getByText("Tentativas").click();
    const attempts = endpoint.getByRole("table", { name: "Tentativas" });
    await expect(attempts.getByRole("cell", { name: "Resposta 200" })).toBeVisible({ timeout: 10_000 });
    await expectNoSidewaysScroll(page);
    await shot(page, "390-integrations");
    await attempts.getByRole("button", { name: "Reenviar" }).click();
    await expect(endpoint.getByText("Evento reenviado.")).toBeVisible();
    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(2);
    expect(received[1].headers["webhook-id"]).toBe(received[0].headers["webhook-id"]);
    expect(received[1].body).toBe(received[0].body);
    await expect(attempts.getByRole("cell", { name: "Resposta 200" })).toHaveCount(2, { timeout: 10_000 });
    await expectNoSidewaysScroll(page);
    // Disabled, it says why in Portuguese.
    await endpoint.getByRole("button", { name: "Desativar" }).click();
    await expect(endpoint.getByText("Desativado (pela empresa)")).toBeVisible();
    const listed = await page.request.get("/api/v1/webhook-endpoints", {
      headers: { authorization: `Bearer ${await accessToken(page)}` },
    });
    endpointId = (await listed.json()).items.find((e: { url: string }) => e.url === url)?.id;
  } finally {
    // Later specs create deliveries: nothing more goes to a receiver that is gone.
    if (endpointId) {
      await page.request.delete(`/api/v1/webhook-endpoints/${endpointId}`, {
        headers: { authorization: `Bearer ${await accessToken(page)}` },
      });
    }
    server.close();
  }
});

// Integrations in the panel: the owner creates an API key (shown once) and a
// webhook endpoint pointed at a loopback receiver of this test (its secret
// shown once), sends a test event, which arrives signed as Standard Webhooks
// sign and verifies with the standardwebhooks package, and its attempt shows
// with the receiver's status; the key works, and once revoked is refused.
import { createServer, type IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import { expect, newContext, signIn, test } from "./support.ts";

test("an API key and a webhook endpoint made in the panel: the test event arrives and its attempt shows", async ({ browser }) => {
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
  const port = (server.address() as { port: number }).port;
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

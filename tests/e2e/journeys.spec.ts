// The company panel and the driver app in a real browser, one journey after
// another on one local stack: an owner's Pix delivery paid through the
// webhook, a driver carrying it out live, a withdrawal completed live, and
// the webhook log, roles and sign-in errors. Every assertion reads the screen,
// in Brazilian Portuguese (the browsers prefer pt-BR: playwright.config.ts).
import type { BrowserContext, Page } from "@playwright/test";
import { gzipSync } from "node:zlib";
import {
  accessToken,
  COMPANY_GATEWAY,
  dragBy,
  expect,
  expectLabelled,
  newContext,
  shot,
  signIn,
  test,
} from "./support.ts";

const COMPANY_ID = "c0000000-0000-4000-8000-000000000001";
const WEBHOOK_SECRET = COMPANY_GATEWAY.webhook_secret;
const SE = { latitude: -23.5503, longitude: -46.6339 };
/** The addresses the New delivery form sends: the CEP's fields joined, and the suggestion chosen as it reads. */
const ORIGIN = "Praça da Sé, São Paulo - SP, 01001-000";
const DESTINATION = "Avenida Paulista, 1000 - Bela Vista, São Paulo - SP, 01310-100";
const formatBRL = (value: number) =>
  new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" }).format(value);
const brl = (text: string | null) => Number(text!.replace(/[^\d,-]/g, "").replace(",", "."));

/** A delivery's row in the deliveries table, found by its link. */
const deliveryRow = (page: Page, id: string) =>
  page.getByRole("row").filter({ has: page.getByRole("link", { name: `Abrir a entrega ${id.slice(0, 8)}` }) });

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
    await expect(page.getByRole("heading", { name: "Entrar" })).toBeVisible();
    await expect(page.locator("html")).toHaveAttribute("lang", "pt-BR");
    await expectLabelled(page);
    await expect(page.getByLabel("E-mail")).toBeFocused();
    await page.keyboard.type("owner@demo.test");
    await page.keyboard.press("Tab");
    await page.keyboard.type("demo-owner-pass");
    await page.keyboard.press("Enter");
    await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
    await expect(page.getByText("Conectado como owner@demo.test (Proprietário)")).toBeVisible();

    // The owner gives the company its gateway configuration (the built-in simulator, sandbox key).
    await page.getByRole("link", { name: "Gateway de pagamento" }).click();
    await expect(page.getByText("Não configurado")).toBeVisible();
    await page.getByLabel("Chave de API").fill(COMPANY_GATEWAY.api_key);
    await page.getByLabel("Segredo do webhook (no mínimo 32 caracteres)").fill(WEBHOOK_SECRET);
    await page.getByRole("button", { name: "Salvar" }).click();
    await expect(page.getByText("Configuração do gateway salva.")).toBeVisible();
    await expect(page.getByText("Configurado (ambiente de testes).")).toBeVisible();

    // The driver's app is open before the delivery is paid: nothing to take yet.
    await signIn(driverPage, "driver1@demo.test", "demo-driver-pass");
    await expect(driverPage.getByRole("heading", { name: "Entregas disponíveis" })).toBeVisible();
    await expect(driverPage.getByText("Nenhuma entrega disponível agora.")).toBeVisible();

    await page.getByRole("link", { name: "Nova entrega" }).first().click();
    await expect(page.getByRole("heading", { name: "Nova entrega" })).toBeVisible();
    await expectLabelled(page);
    // The pick-up by its CEP, which fills the street, neighbourhood and city and pins the street on the map.
    await page.getByLabel("CEP da retirada").pressSequentially("01001000");
    await expect(page.getByLabel("Endereço de retirada")).toHaveValue("Praça da Sé");
    await expect(page.getByLabel("Bairro da retirada")).toHaveValue("Sé");
    await expect(page.getByLabel("Cidade da retirada")).toHaveValue("São Paulo - SP");
    // The drop-off by a suggestion, chosen with the keyboard.
    const to = page.getByLabel("Endereço de entrega");
    await to.pressSequentially("Av. Paulista, 1000");
    await expect(page.getByRole("option", { name: DESTINATION })).toBeVisible();
    await expect(to).toHaveAttribute("aria-expanded", "true");
    await to.press("ArrowDown");
    await expect(page.getByRole("option", { name: DESTINATION })).toHaveAttribute("aria-selected", "true");
    await to.press("Enter");
    await expect(to).toHaveValue(DESTINATION);
    await expect(page.getByLabel("CEP da entrega")).toHaveValue("01310-100");
    const map = page.getByRole("img", { name: "Mapa da retirada e da entrega" });
    await expect(map.getByTitle("Ponto de retirada")).toHaveCount(1);
    await expect(map.getByTitle("Ponto de entrega")).toHaveCount(1);
    // The quote appears as soon as both ends are known, and follows the pin when it is dragged.
    const quote = page.getByRole("region", { name: "Orçamento" }).getByText(/ km, cerca de /);
    await expect(quote).toHaveText(/km, cerca de \d+ min: R\$\s?\d/);
    const firstQuote = await quote.textContent();
    await dragBy(page, map.getByTitle("Ponto de entrega"), 0, 150);
    await expect(page.getByText("Ponto ajustado no mapa.")).toBeVisible();
    await expect(quote).not.toHaveText(firstQuote!);
    await page.getByLabel("Nome do cliente").fill("Carla Cliente");
    await page.getByLabel("CPF ou CNPJ do cliente").fill("529.982.247-25");
    await page.getByRole("button", { name: "Criar entrega" }).click();

    await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
    deliveryId = page.url().split("/").pop()!;
    await expect(page.getByText("Aguardando pagamento").first()).toBeVisible();
    const qr = page.getByRole("img", { name: "QR code do Pix" });
    await expect(qr).toBeVisible();
    // A real PNG that the browser decoded, not a broken image.
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100)).toBe(true);
    await expect(page.getByLabel("Código Pix copia e cola")).toHaveValue(/^000201.*br\.gov\.bcb\.pix/);

    await page.getByRole("link", { name: "Voltar para as entregas" }).click();
    const row = deliveryRow(page, deliveryId);
    await expect(row.getByText("Aguardando pagamento")).toBeVisible();

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
    await expect(row.getByText("Aguardando entregador")).toBeVisible();
    await expect(row.getByText("Pix: Recebido")).toBeVisible();
    await shot(page, "1-owner-delivery-paid");
  });

  test("2. a driver sees it appear live, accepts, starts (an early location update is waited out, not an error), moves on the owner's map, completes, and is credited", async () => {
    const page = driverPage;
    const offer = page.getByRole("listitem", { name: `${ORIGIN} → ${DESTINATION}` });
    await expect(offer).toBeVisible();
    await offer.getByRole("button", { name: "Aceitar" }).click();
    await expect(page.getByRole("heading", { name: "Entrega atual" })).toBeVisible();
    await expect(page.getByText("Aceita", { exact: true })).toBeVisible();
    // A position sent a moment ago from elsewhere (the driver's own session, through the API) makes the
    // app's first update too early: the app waits out the 429's Retry-After, says when it sends next (a
    // status, not an error), and sends then.
    const token = await accessToken(page);
    const early = await page.request.put("/api/v1/locations/me", {
      headers: { authorization: `Bearer ${token}` },
      data: { lat: SE.latitude, lng: SE.longitude },
    });
    expect(early.status()).toBe(200);
    await page.getByRole("button", { name: "Iniciar entrega" }).click();
    await expect(page.getByText("Em andamento", { exact: true })).toBeVisible();
    const sharing = page.getByRole("status", { name: "Localização" });
    await expect(sharing).toHaveText(/^Próximo envio da localização em \d+ s\.$/);
    await expect(page.getByRole("alert")).toHaveCount(0);
    await expect(sharing).toHaveText(/^Localização enviada às \d{2}:\d{2}:\d{2}\.$/, { timeout: 15_000 });
    await expect(page.getByRole("img", { name: "Mapa do trajeto" }).getByTitle("Você está aqui")).toHaveCount(1);
    await expect(page.getByText(/^Atualizações demais/)).toHaveCount(0);

    // The owner follows the delivery on its page: the driver's position, then the next one.
    await deliveryRow(ownerPage, deliveryId).getByRole("link").click();
    await expect(ownerPage.getByText("Em andamento", { exact: true })).toBeVisible();
    const position = ownerPage.getByText(/^Entregador em /);
    await expect(position).toContainText("-23.55030, -46.63390");
    await expect(ownerPage.getByRole("img", { name: "Mapa do trajeto" }).getByTitle("Entregador", { exact: true }))
      .toHaveCount(1);
    await driver.setGeolocation({ latitude: -23.5561, longitude: -46.6449 });
    // At most one update per 10 s: the next one arrives within about that.
    await expect(position).toContainText("-23.55610, -46.64490", { timeout: 20_000 });
    await expect(ownerPage.getByText(/Rastro: [2-9]\d* pontos/)).toBeVisible();
    await shot(ownerPage, "2-owner-map-driver-moving");

    await page.getByRole("button", { name: "Concluir entrega" }).click();
    await expect(page.getByText("Você não tem nenhuma entrega em andamento.")).toBeVisible();
    await expect(ownerPage.getByText("Concluída", { exact: true }).first()).toBeVisible();

    await page.getByRole("link", { name: "Carteira" }).click();
    await expect(page.getByRole("heading", { name: "Carteira" })).toBeVisible();
    const credit = page.getByRole("listitem").filter({ hasText: "Crédito de entrega" });
    await expect(credit).toHaveCount(1);
    const amount = (await credit.locator("strong").textContent())!;
    await expect(page.getByRole("status", { name: "Saldo" })).toHaveText(amount);
    expect(amount).not.toMatch(/0,00$/);
    await shot(page, "2-driver-wallet-credited");
  });

  test("3. the driver requests a withdrawal and sees it complete live when TRANSFER_DONE arrives", async () => {
    const page = driverPage;
    await expectLabelled(page);
    // More than the balance: refused, and said in words with the amounts in reais, not as the API's JSON.
    const balance = (await page.getByRole("status", { name: "Disponível para saque" }).textContent())!;
    await page.getByLabel("Valor (R$)").fill("1000");
    await page.getByLabel("Tipo de chave Pix").selectOption("email");
    await page.getByLabel("Chave Pix", { exact: true }).fill("dora@pix.example.com");
    await page.getByRole("button", { name: "Pedir saque" }).click();
    const refusal = page.getByRole("alert");
    await expect(refusal).toHaveText(/^Saldo insuficiente: .+\.$/);
    await expect(refusal).toHaveText(
      `Saldo insuficiente: há ${balance} disponível e o pedido foi de R$\u00a01.000,00.`,
    );
    await expect(refusal).not.toContainText("{");

    await page.getByLabel("Valor (R$)").fill("5");
    await page.getByLabel("Tipo de chave Pix").selectOption("email");
    await page.getByLabel("Chave Pix", { exact: true }).fill("dora@pix.example.com");
    await page.getByRole("button", { name: "Pedir saque" }).click();
    const withdrawal = page.getByRole("listitem", { name: /R\$\s?5,00 / });
    await expect(withdrawal).toHaveAccessibleName(/Processando/);
    // The form is ready for the next one: its emptied amount is not pointed at as a mistake.
    await expect(page.getByLabel("Valor (R$)")).toHaveValue("");
    await expect(page.getByText("Preencha este campo.")).toHaveCount(0);

    // The owner fires the gateway's TRANSFER_DONE from the local simulators page.
    await ownerPage.getByRole("link", { name: "Simuladores" }).click();
    await expect(ownerPage.getByRole("heading", { name: "Simuladores (só no ambiente local)" })).toBeVisible();
    await ownerPage.getByRole("button", { name: /^Transferência concluída para / }).click();
    await expect(ownerPage.getByText("Transferência concluída: enviado, aceito pelo webhook.")).toBeVisible();

    await expect(withdrawal).toHaveAccessibleName(/Concluído/);
    await expect(page.getByRole("listitem").filter({ hasText: "Saque:" })).toHaveCount(1);
    // The debit is in the balance, also without a reload.
    const credit = brl(
      await page.getByRole("listitem").filter({ hasText: "Crédito de entrega" }).locator("strong").textContent(),
    );
    await expect(page.getByRole("status", { name: "Saldo" })).toHaveText(formatBRL(credit - 5));
    await shot(page, "3-driver-withdrawal-completed");

    // Another the gateway fails: said as the gateway's event in words, to the driver and to the owner.
    await page.getByLabel("Valor (R$)").fill("1,50");
    await page.getByLabel("Tipo de chave Pix").selectOption("email");
    await page.getByLabel("Chave Pix", { exact: true }).fill("dora@pix.example.com");
    await page.getByRole("button", { name: "Pedir saque" }).click();
    const failing = page.getByRole("listitem", { name: /R\$\s?1,50 / });
    await expect(failing).toHaveAccessibleName(/Processando/);
    await ownerPage.getByRole("button", { name: /^Transferência falhou para / }).click();
    await expect(ownerPage.getByText("Transferência falhou: enviado, aceito pelo webhook.")).toBeVisible();
    await expect(failing).toHaveAccessibleName(/Falhou/);
    await expect(failing).toContainText("Transferência falhou");
    await expect(page.getByRole("status", { name: "Saldo" })).toHaveText(formatBRL(credit - 5));
    await ownerPage.getByRole("link", { name: "Saques" }).click();
    const failedRow = ownerPage.getByRole("row").filter({ hasText: "R$ 1,50" });
    await expect(failedRow).toContainText("Falhou");
    await expect(failedRow).toContainText("Transferência falhou");
    await expect(ownerPage.getByRole("table")).not.toContainText(/[A-Z]+_[A-Z]+|\b[a-z]+_[a-z]+\b/);
  });

  test("4. the webhook log shows the events; roles see only their pages; a wrong password is explained", async ({ browser }) => {
    await ownerPage.getByRole("link", { name: "Registro de webhooks" }).click();
    const log = ownerPage.getByRole("table");
    await expect(log.getByRole("row").filter({ hasText: "Pagamento recebido" }).getByText("Processado")).toBeVisible();
    await expect(log.getByRole("row").filter({ hasText: "Transferência concluída" }).getByText("Processado"))
      .toBeVisible();
    // Events, and what the platform checked and did, in words: never a code.
    await expect(log.getByRole("row").filter({ hasText: "Transferência falhou" })).toContainText(
      "Conferido com o gateway, que informa “falhou”. O saque agora está “Falhou”.",
    );
    await expect(log.getByRole("row").filter({ hasText: "Pagamento recebido" })).toContainText(
      "A entrega está “Aguardando entregador” e o pagamento “Recebido”.",
    );
    const rows = await log.getByRole("row").evaluateAll((rows) => rows.slice(1).map((row) => row.textContent));
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) expect(row).not.toMatch(/[A-Z]+_[A-Z]+|\b[a-z]+_[a-z]+\b|checked with/);
    await shot(ownerPage, "4-owner-webhook-log");

    // The panel works from the keyboard: a navigation link followed with Enter.
    await ownerPage.getByRole("link", { name: "Entregadores" }).focus();
    await ownerPage.keyboard.press("Enter");
    await expect(ownerPage.getByRole("heading", { name: "Entregadores" })).toBeVisible();
    await expectLabelled(ownerPage);

    const admin = await newContext(browser);
    const adminPage = await admin.newPage();
    await signIn(adminPage, "admin@demo.test", "demo-admin-pass");
    await expect(adminPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
    const nav = adminPage.getByRole("navigation", { name: "Principal" });
    await expect(nav.getByRole("link", { name: "Registro de webhooks" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Assinatura" })).toHaveCount(0);
    await expect(nav.getByRole("link", { name: "Gateway" })).toHaveCount(0);
    await adminPage.goto("/billing");
    await expect(adminPage.getByText("Seu perfil não tem acesso a esta página.")).toBeVisible();
    await adminPage.goto("/gateway");
    await expect(adminPage.getByText("Seu perfil não tem acesso a esta página.")).toBeVisible();
    await shot(adminPage, "4-admin-no-gateway");
    await admin.close();

    // The legacy admin (older token form) runs deliveries, but not the company's money or its log.
    const legacy = await newContext(browser);
    const legacyPage = await legacy.newPage();
    await signIn(legacyPage, "legacy-admin@demo.test", "demo-legacy-pass");
    await expect(legacyPage.getByRole("heading", { name: "Entregas" })).toBeVisible();
    await expect(deliveryRow(legacyPage, deliveryId).getByText("Concluída")).toBeVisible();
    // Its token has no company_id claim; the company channel lets it in all the same.
    await expect(legacyPage.getByText("Ao vivo", { exact: true })).toBeVisible();
    const legacyNav = legacyPage.getByRole("navigation", { name: "Principal" });
    for (const name of ["Registro de webhooks", "Saques", "Gateway", "Assinatura"]) {
      await expect(legacyNav.getByRole("link", { name })).toHaveCount(0);
    }
    await legacy.close();

    await driverPage.goto("/deliveries");
    await expect(driverPage.getByText("Seu perfil não tem acesso a esta página.")).toBeVisible();
    await expect(driverPage.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: "Entregas" }))
      .toHaveCount(0);
    await shot(driverPage, "4-driver-no-panel");

    const stranger = await newContext(browser);
    const strangerPage = await stranger.newPage();
    await signIn(strangerPage, "owner@demo.test", "not-the-password");
    await expect(strangerPage.getByRole("alert")).toHaveText(
      "E-mail ou senha incorretos. Confira e tente de novo.",
    );
    await shot(strangerPage, "4-wrong-password");
    await stranger.close();
  });

  test("5. the owner assigns an invoice delivery and cancels another; every panel page labels its inputs", async () => {
    const page = ownerPage;
    async function createInvoice(to: string) {
      await page.getByRole("link", { name: "Nova entrega" }).first().click();
      await page.getByLabel("Endereço de retirada").fill("Praça da Sé, São Paulo");
      await page.getByLabel("Endereço de entrega").fill(to);
      await page.getByLabel("Forma de pagamento", { exact: true }).selectOption("invoice");
      await expect(page.getByLabel("Nome do cliente")).toHaveCount(0);
      await page.getByRole("button", { name: "Criar entrega" }).click();
      await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
      await expect(page.getByText("Fatura: Faturado")).toBeVisible();
    }

    await createInvoice("Rua Augusta, 500");
    await page.getByLabel("Atribuir a um entregador").selectOption({ label: "Dino Driver" });
    await page.getByRole("button", { name: "Atribuir", exact: true }).click();
    await expect(page.getByText("Aceita", { exact: true }).first()).toBeVisible();
    await expect(page.locator("dd").filter({ hasText: "Dino Driver" })).toBeVisible();

    await createInvoice("Rua Oscar Freire, 10");
    await page.getByLabel("Motivo do cancelamento").fill("O cliente desistiu");
    // Cancelling asks first; going back leaves the delivery as it was.
    await page.getByRole("button", { name: "Cancelar entrega" }).click();
    const question = page.getByRole("dialog", { name: /^Cancelar esta entrega\?/ });
    await question.getByRole("button", { name: "Voltar" }).click();
    await expect(question).toBeHidden();
    await expect(page.getByText("Aguardando entregador", { exact: true }).first()).toBeVisible();
    await page.getByRole("button", { name: "Cancelar entrega" }).click();
    await question.getByRole("button", { name: "Sim, cancelar a entrega" }).click();
    await expect(page.getByText("Cancelada", { exact: true }).first()).toBeVisible();
    await expect(page.getByText("Motivo do cancelamento: O cliente desistiu")).toBeVisible();
    await shot(page, "5-owner-cancelled");

    for (
      const [link, heading] of [
        ["Entregas", "Entregas"],
        ["Entregadores", "Entregadores"],
        ["Mapa ao vivo", "Mapa ao vivo dos entregadores"],
        ["Preços", "Preços"],
        ["Saques", "Saques"],
        ["Registro de webhooks", "Registro de webhooks"],
        ["Gateway de pagamento", "Gateway de pagamento"],
        ["Assinatura", "Assinatura"],
        ["Simuladores", "Simuladores (só no ambiente local)"],
      ]
    ) {
      await page.getByRole("navigation", { name: "Principal" }).getByRole("link", { name: link, exact: true }).click();
      await expect(page.getByRole("heading", { name: heading, exact: true })).toBeVisible();
      await expectLabelled(page);
      if (link === "Mapa ao vivo") {
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
    await expect(page.getByRole("heading", { name: "Entrar" })).toBeVisible();
    const sizes = await Promise.all(scripts);
    const total = sizes.reduce((a, b) => a + b, 0);
    console.log(`first load: ${sizes.length} JavaScript files, ${(total / 1024).toFixed(1)} KB gzipped`);
    expect(sizes.length).toBeGreaterThan(0);
    expect(total).toBeLessThan(300 * 1024);
    await context.close();
  });
});

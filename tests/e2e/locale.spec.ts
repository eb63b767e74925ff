// The app speaks the browser's language: Brazilian Portuguese by default, English for an English browser. A
// dispatcher creates a delivery by CEP and address suggestions only (a pin dragged on the map sets the point sent),
// sees money in reais and dates as dd/mm/aaaa HH:mm in São Paulo's time (the browsers here sit in other zones), types
// the delivery's window the same way (a 24-hour clock in English too), numbers with a decimal comma, and sees CPF/CNPJ
// and phone numbers masked as they are typed; an order number used twice is refused in words. Each journey cancels
// its delivery and puts the prices back as it found them.
import type { Page } from "@playwright/test";
import { accessToken, dragBy, ENGLISH, expect, newContext, saoPauloDateTime, shot, signIn, test } from "./support.ts";

interface Prices {
  base_fee: number;
  per_km: number;
  minimum_fee: number;
  driver_share: number;
}

/** The API as the signed-in page's user. */
async function apiOf(page: Page) {
  const headers = { authorization: `Bearer ${await accessToken(page)}` };
  return {
    get: async (path: string) => {
      const res = await page.request.get(path, { headers });
      expect(res.status(), await res.text()).toBe(200);
      return await res.json();
    },
    send: async (method: "put" | "post", path: string, data: unknown) => {
      const res = await page.request[method](path, { headers, data });
      expect(res.status(), await res.text()).toBe(200);
      return await res.json();
    },
  };
}

/** Rua Augusta, 1500 as the geocoding simulator's gazetteer places it. */
const AUGUSTA = "Rua Augusta, 1500 - Consolação, São Paulo - SP, 01304-001";

/** The minute `hours` from now, as an instant (the window a journey types, read back from the API). */
const minuteFromNow = (hours: number) => new Date(Math.floor((Date.now() + hours * 3_600_000) / 60_000) * 60_000);
const digits = (text: string) => text.replace(/\D/g, "");

const money = (locale: string, value: number) =>
  new Intl.NumberFormat(locale, { style: "currency", currency: "BRL" }).format(value);
/** The fact shown after a term (`<dt>Preço</dt><dd>...</dd>`). */
const fact = (page: Page, term: string) =>
  page.locator("dt", { hasText: new RegExp(`^${term}$`) }).locator("xpath=following-sibling::dd[1]");

test("pt-BR: a delivery by CEP and address suggestions, reais with a decimal comma, Brazilian dates in São Paulo's time, masks, and 5,50 typed in Prices", async ({ browser }) => {
  const context = await newContext(browser, { locale: "pt-BR", timezoneId: "Asia/Tokyo" });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator("html")).toHaveAttribute("lang", "pt-BR");
  await expect(page.getByRole("heading", { name: "Entrar" })).toBeVisible();
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await expect(page.getByRole("heading", { name: "Entregas" })).toBeVisible();
  const api = await apiOf(page);
  const pricesBefore: Prices = await api.get("/api/v1/prices");

  // The two ends by CEP and by address suggestions only: nobody types coordinates.
  await page.getByRole("link", { name: "Nova entrega" }).first().click();
  await expect(page.getByLabel(/Latitude|Longitude/)).toHaveCount(0);
  const cep = page.getByLabel("CEP da retirada");
  await cep.pressSequentially("01001000");
  await expect(cep).toHaveValue("01001-000");
  await expect(page.getByLabel("Endereço de retirada")).toHaveValue("Praça da Sé");
  await expect(page.getByLabel("Bairro da retirada")).toHaveValue("Sé");
  await expect(page.getByLabel("Cidade da retirada")).toHaveValue("São Paulo - SP");
  await expect(page.getByText("Ponto aproximado pelo CEP: escolha o endereço com o número ou arraste o marcador."))
    .toBeVisible();
  // A CEP nobody knows is said in words.
  await page.getByLabel("CEP da entrega").pressSequentially("99999999");
  await expect(page.getByText("Não encontramos este CEP. Confira os números ou digite o endereço.")).toBeVisible();
  await page.getByLabel("CEP da entrega").fill("");
  // Accents, case and abbreviations do not matter to the suggestions.
  const to = page.getByLabel("Endereço de entrega");
  await to.pressSequentially("av paulista 1578");
  await expect(page.getByText("1 endereço encontrado. Use as setas para escolher.")).toBeVisible();
  await page.getByRole("option", { name: "Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200" }).click();
  await expect(to).toHaveValue("Avenida Paulista, 1578 - Bela Vista, São Paulo - SP, 01310-200");
  await expect(page.getByRole("listbox", { name: "Endereços sugeridos" })).toBeHidden();
  const quote = page.getByRole("region", { name: "Orçamento" }).getByText(/ km, cerca de /);
  await expect(quote).toHaveText(/^\d+(,\d)? km, cerca de \d+ min: R\$\s\d{1,3}(\.\d{3})*,\d{2}$/);
  await shot(page, "locale-pt-BR-new-delivery");

  // The client's CPF or CNPJ is masked as it is typed, and its check digits are verified.
  const document = page.getByLabel("CPF ou CNPJ do cliente");
  await document.pressSequentially("52998224725");
  await expect(document).toHaveValue("529.982.247-25");
  await document.fill("");
  await document.pressSequentially("11111111111");
  await document.blur();
  await expect(page.getByText("Este CPF não é válido: confira os dígitos.")).toBeVisible();
  await document.fill("");
  await document.pressSequentially("11222333000181");
  await expect(document).toHaveValue("11.222.333/0001-81");
  await expect(page.getByText("Este CPF não é válido")).toHaveCount(0);
  // So is the recipient's phone.
  const phone = page.getByLabel("Telefone de quem recebe (opcional)");
  await phone.pressSequentially("11988887777");
  await expect(phone).toHaveValue("(11) 98888-7777");
  await page.getByLabel("Nome de quem recebe (opcional)").fill("Rita Recebedora");
  await page.getByLabel("E-mail de quem recebe (opcional)").fill("rita@example.com");
  await page.getByLabel("Forma de pagamento", { exact: true }).selectOption("invoice");

  // The window typed as digits, masked dd/mm/aaaa HH:mm, read on São Paulo's clocks (this browser is in Tokyo's).
  const opens = minuteFromNow(2);
  const closes = minuteFromNow(5);
  const windowStart = page.getByLabel("Início da janela");
  const windowEnd = page.getByLabel("Fim da janela");
  await expect(windowStart).toHaveAttribute("placeholder", "dd/mm/aaaa hh:mm");
  // A window already over is said so under its field, and nothing is sent.
  const over = saoPauloDateTime(minuteFromNow(-1).toISOString());
  await windowEnd.pressSequentially(digits(over));
  await expect(windowEnd).toHaveValue(over);
  await page.getByRole("button", { name: "Criar entrega" }).click();
  await expect(page.getByText("O fim da janela precisa estar no futuro.")).toBeVisible();
  await windowEnd.fill("");
  await windowEnd.pressSequentially("31022027 1000");
  await expect(page.getByText("Digite a data e a hora (24 h), como 31/12/2026 14:30.")).toBeVisible();
  await expect(page).toHaveURL(/\/deliveries\/new$/);
  await windowEnd.fill("");
  await windowStart.pressSequentially(digits(saoPauloDateTime(opens.toISOString())));
  await windowEnd.pressSequentially(digits(saoPauloDateTime(closes.toISOString())));
  await expect(page.getByText("O fim da janela precisa estar no futuro.")).toHaveCount(0);
  const order = `PED-${Date.now()}`;
  await page.getByLabel("Código do pedido (opcional)").fill(order);
  await page.getByRole("button", { name: "Criar entrega" }).click();
  await expect(page.getByRole("heading", { name: /^Entrega / })).toBeVisible();
  const id = page.url().split("/").pop()!;
  const delivery = await api.get(`/api/v1/deliveries/${id}`);
  expect(delivery.origin).toEqual({ lat: -23.5503, lng: -46.6339 });
  expect(delivery.destination).toEqual({ lat: -23.5614, lng: -46.6559 });
  expect(delivery.recipient_phone).toBe("+5511988887777");
  expect(delivery).toMatchObject({ recipient_email: "rita@example.com", external_id: order });
  expect(Date.parse(delivery.window_start)).toBe(opens.getTime());
  expect(Date.parse(delivery.window_end)).toBe(closes.getTime());
  await expect(fact(page, "Janela de entrega")).toHaveText(
    `${saoPauloDateTime(opens.toISOString())} a ${saoPauloDateTime(closes.toISOString())}`,
  );
  await expect(fact(page, "E-mail de quem recebe")).toHaveText("rita@example.com");
  await expect(fact(page, "Código do pedido")).toHaveText(order);

  // Money as R$ 1.234,56; the date as dd/mm/aaaa HH:mm in São Paulo, not in the browser's Tokyo.
  await expect(fact(page, "Preço")).toHaveText(money("pt-BR", delivery.price));
  await expect(fact(page, "Preço")).toHaveText(/^R\$\s\d{1,3}(\.\d{3})*,\d{2}$/);
  await expect(fact(page, "Quem recebe")).toHaveText("Rita Recebedora (11) 98888-7777");
  const created = saoPauloDateTime(delivery.created_at);
  expect(created).toMatch(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/);
  const timeline = page.getByRole("region", { name: "Linha do tempo" });
  await expect(timeline.getByRole("listitem").filter({ hasText: "Criada" }).locator("time")).toHaveText(created);
  await expect(page.getByText("Fatura: Faturado")).toBeVisible();
  await shot(page, "locale-pt-BR-delivery");

  await page.getByRole("link", { name: "Voltar para as entregas" }).click();
  const row = page.getByRole("row").filter({
    has: page.getByRole("link", { name: `Abrir a entrega ${id.slice(0, 8)}` }),
  });
  await expect(row.getByRole("link")).toHaveText(created);
  await expect(row).toContainText(money("pt-BR", delivery.price));
  await expect(row).toContainText("Aguardando entregador");
  // Statuses and payment states are words, never codes.
  await expect(page.getByRole("table")).not.toContainText(/\b[a-z]+_[a-z_]+\b|\b[A-Z]+_[A-Z_]+\b/);

  // The same order number again: the API's 409 said in Portuguese, naming the delivery that has it.
  await page.getByRole("link", { name: "Nova entrega" }).first().click();
  await page.getByLabel("CEP da retirada").pressSequentially("01001000");
  await expect(page.getByLabel("Endereço de retirada")).toHaveValue("Praça da Sé");
  await page.getByLabel("CEP da entrega").pressSequentially("01310200");
  await expect(page.getByLabel("Endereço de entrega")).not.toHaveValue("");
  await page.getByLabel("Forma de pagamento", { exact: true }).selectOption("invoice");
  await page.getByLabel("Código do pedido (opcional)").fill(order);
  await page.getByRole("button", { name: "Criar entrega" }).click();
  await expect(page.getByRole("alert")).toHaveText(
    `Já existe uma entrega com o código do pedido ${order} (entrega ${id.slice(0, 8)}).`,
  );

  // Prices: a value the app cannot read is a sentence and nothing is sent; 5,50 is saved as 5.5.
  await page.getByRole("link", { name: "Preços", exact: true }).click();
  const baseFee = page.getByLabel("Taxa base (R$)");
  await expect(baseFee).toHaveValue(/^\d+,\d{2}$/);
  await baseFee.fill("5,5,0");
  await page.getByRole("button", { name: "Salvar" }).click();
  await expect(page.getByText("Digite um número, como 5,50.")).toBeVisible();
  await expect(baseFee).toHaveAttribute("aria-invalid", "true");
  expect((await api.get("/api/v1/prices")).base_fee).toBe(pricesBefore.base_fee);
  await baseFee.fill("5,50");
  await page.getByLabel("Por km (R$)").fill("1,75");
  await page.getByLabel("Parte do entregador (de 0 a 1)").fill("0,8");
  await page.getByRole("button", { name: "Salvar" }).click();
  await expect(page.getByText("Preços salvos.")).toBeVisible();
  const saved: Prices = await api.get("/api/v1/prices");
  expect(saved).toMatchObject({ base_fee: 5.5, per_km: 1.75, driver_share: 0.8 });
  await page.reload();
  await expect(baseFee).toHaveValue("5,50");
  await expect(page.getByLabel("Por km (R$)")).toHaveValue("1,75");

  await api.send("post", `/api/v1/deliveries/${id}/cancel`, { reason: null });
  await api.send("put", "/api/v1/prices", pricesBefore);
  await context.close();
});

test("en: an English browser gets English, money still in reais, the same dates, and a decimal comma still works", async ({ browser }) => {
  const context = await newContext(browser, { locale: "en-US", timezoneId: "America/New_York" });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  await signIn(page, "owner@demo.test", "demo-owner-pass", ENGLISH);
  await expect(page.getByRole("heading", { name: "Deliveries" })).toBeVisible();
  await expect(page.getByText("Signed in as owner@demo.test (Owner)")).toBeVisible();
  const api = await apiOf(page);
  const pricesBefore: Prices = await api.get("/api/v1/prices");

  await page.getByRole("link", { name: "New delivery" }).first().click();
  await page.getByLabel("Pick-up CEP").pressSequentially("01001-000");
  await expect(page.getByLabel("Pick-up address")).toHaveValue("Praça da Sé");
  await expect(page.getByLabel("Pick-up neighbourhood")).toHaveValue("Sé");
  await expect(page.getByLabel("Pick-up city")).toHaveValue("São Paulo - SP");
  const to = page.getByLabel("Drop-off address");
  await to.pressSequentially("Rua Augusta, 1500");
  await expect(page.getByText("1 address found. Use the arrow keys to choose.")).toBeVisible();
  await page.getByRole("option", { name: AUGUSTA }).click();
  await expect(page.getByLabel("Drop-off CEP")).toHaveValue("01304-001");
  const quote = page.getByRole("region", { name: "Quote" }).getByText(/ km, about /);
  await expect(quote).toHaveText(/^\d+(\.\d)? km, about \d+ min: R\$\d{1,3}(,\d{3})*\.\d{2}$/);
  // The drop-off pin dragged by hand: the point sent is where it was dropped.
  const firstQuote = await quote.textContent();
  const map = page.getByRole("img", { name: "Map of the pick-up and the drop-off" });
  await dragBy(page, map.getByTitle("Drop-off point"), 120, 0);
  await expect(page.getByText("Point adjusted on the map.")).toBeVisible();
  await expect(quote).not.toHaveText(firstQuote!);
  const document = page.getByLabel("Client CPF or CNPJ");
  await document.pressSequentially("52998224726");
  await document.blur();
  await expect(page.getByText("This CPF is not valid: check its digits.")).toBeVisible();
  await page.getByLabel("Payment method", { exact: true }).selectOption("invoice");
  // The window's day first and a 24-hour clock in English too, on São Paulo's clocks (this browser is in New York's).
  const closes = minuteFromNow(3);
  await expect(page.getByLabel("Window closes")).toHaveAttribute("placeholder", "dd/mm/yyyy hh:mm");
  await page.getByLabel("Window closes").pressSequentially(digits(saoPauloDateTime(closes.toISOString())));
  await page.getByRole("button", { name: "Create delivery" }).click();
  await expect(page.getByRole("heading", { name: /^Delivery / })).toBeVisible();
  const id = page.url().split("/").pop()!;
  const delivery = await api.get(`/api/v1/deliveries/${id}`);
  expect(delivery.origin).toEqual({ lat: -23.5503, lng: -46.6339 });
  expect(delivery.destination_address).toBe(AUGUSTA);
  expect(Date.parse(delivery.window_end)).toBe(closes.getTime());
  // Dragged east: the same latitude, a longitude east of the suggestion's.
  expect(delivery.destination.lat).toBeCloseTo(-23.5562, 3);
  expect(delivery.destination.lng).toBeGreaterThan(-46.6576 + 0.001);

  // Reais with the English separators (R$1,234.56), decided in web/src/format.ts; the day first, 24 h, São Paulo.
  await expect(fact(page, "Price")).toHaveText(money("en-US", delivery.price));
  await expect(fact(page, "Price")).toHaveText(/^R\$\d{1,3}(,\d{3})*\.\d{2}$/);
  const timeline = page.getByRole("region", { name: "Timeline" });
  await expect(timeline.getByRole("listitem").filter({ hasText: "Created" }).locator("time")).toHaveText(
    saoPauloDateTime(delivery.created_at),
  );
  await expect(page.getByText("Invoice: Invoiced")).toBeVisible();
  await expect(fact(page, "Delivery window")).toHaveText(`by ${saoPauloDateTime(closes.toISOString())}`);
  await shot(page, "locale-en-delivery");

  // A decimal comma is read in English too: 5,50 is saved as 5.5, and shown back as 5.50.
  await page.getByRole("link", { name: "Prices", exact: true }).click();
  const baseFee = page.getByLabel("Base fee (R$)");
  await expect(baseFee).toHaveValue(/^\d+\.\d{2}$/);
  await baseFee.fill("5,50");
  await page.getByLabel("Per km (R$)").fill("2.25");
  await page.getByLabel("Driver share (0 to 1)").fill("1,5");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Enter 1 or less.")).toBeVisible();
  expect((await api.get("/api/v1/prices")).base_fee).toBe(pricesBefore.base_fee);
  await page.getByLabel("Driver share (0 to 1)").fill("0.75");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Prices saved.")).toBeVisible();
  expect(await api.get("/api/v1/prices")).toMatchObject({ base_fee: 5.5, per_km: 2.25, driver_share: 0.75 });
  await page.reload();
  await expect(baseFee).toHaveValue("5.50");

  // Choosing Portuguese changes the page and <html lang> at once, and is remembered.
  await page.getByLabel("Language").selectOption("pt-BR");
  await expect(page.locator("html")).toHaveAttribute("lang", "pt-BR");
  await expect(page.getByRole("heading", { name: "Preços" })).toBeVisible();
  await page.reload();
  await expect(page.getByRole("heading", { name: "Preços" })).toBeVisible();
  await expect(page.getByLabel("Taxa base (R$)")).toHaveValue("5,50");

  await api.send("post", `/api/v1/deliveries/${id}/cancel`, { reason: null });
  await api.send("put", "/api/v1/prices", pricesBefore);
  await context.close();
});

// The dispatch board as one screen for a real operation (issue 35, DESIGN.md §11.5): a company of its own (so that
// no other journey sees its 500 deliveries and 60 drivers) with 500 open deliveries (499 created through the API,
// one created with a window that ends a few seconds later, so that it shows late) and 60 drivers online, two of them
// namesakes. On a 1366×768 screen the map, the list and the assign bar are all in view without scrolling the page;
// the dispatcher assigns three deliveries by dragging them onto drivers and three from the keyboard alone; the list
// scrolls through all 500 while holding only a few rows in the page. On a phone the same board is stacked, the
// assign bar kept in view. Every check of an effect reads the server.
import { type Locator, type Page, request } from "@playwright/test";
import postgres from "postgres";
import {
  Api,
  baseURL,
  expect,
  expectLabelled,
  expectNoSidewaysScroll,
  newContext,
  saoPauloDateTime,
  shot,
  signIn,
  test,
} from "./support.ts";

interface Delivery {
  id: string;
  status: string;
  driver_id: string | null;
  external_id: string | null;
  recipient_name: string | null;
  destination_address: string;
  window_end: string | null;
}

const run = Date.now().toString(36).slice(-5);
const PASSWORD = "quadro-correct-horse";
const OWNER = { email: `quadro-${run}@example.com`, password: PASSWORD };
const DRIVERS = 60;
const CREATED = 499;
/** Ten shops in São Paulo, each a pickup for a tenth of the deliveries. */
const SHOPS = Array.from({ length: 10 }, (_, i) => ({
  lat: -23.55 + 0.012 * (i % 5),
  lng: -46.66 + 0.02 * Math.floor(i / 5),
}));
/** Two drivers with one name, told apart by their phones' last digits. */
const NAMESAKE = "Maria Oliveira";
const NAMESAKE_PHONES = ["+5511911112222", "+5511933334444"];

let owner: Api;
const drivers: { id: string; name: string; email: string }[] = [];
let late: Delivery;

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    results.push(...await Promise.all(items.slice(i, i + width).map((item, k) => work(item, i + k))));
  }
  return results;
}

const orderOf = (i: number) => `Q${run}-${String(i).padStart(3, "0")}`;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  const anon = await request.newContext({ baseURL: baseURL() });
  const registered = await anon.post("/api/v1/companies/register", {
    data: { company_name: `Transportes Quadro ${run}`, owner_name: "Dona Quadro", ...OWNER },
  });
  expect(registered.status(), await registered.text()).toBe(201);
  await anon.dispose();
  owner = await Api.signIn(OWNER.email, OWNER.password);
  // Open to every driver: nothing is offered or assigned by dispatch while the board is watched.
  await owner.call("PUT", "/api/v1/dispatch/settings", { mode: "broadcast" });

  // 60 drivers: two namesakes, the others with names of their own.
  const hires = Array.from({ length: DRIVERS }, (_, i) => ({
    name: i < 2 ? NAMESAKE : `Entregador ${String(i).padStart(2, "0")} ${run}`,
    email: `quadro-${run}-${i}@example.com`,
    password: PASSWORD,
    phone: i < 2 ? NAMESAKE_PHONES[i] : undefined,
    vehicle: { type: i % 3 === 0 ? "car" : "moto", plate: `QDR${String(i).padStart(2, "0")}${run.slice(0, 2)}` },
  }));
  // A few at a time: each is a password hashed by the identity provider.
  drivers.push(
    ...await inBatches(hires, 3, async (hire) => {
      const driver = await owner.call<{ id: string }>("POST", "/api/v1/drivers", hire);
      return { id: driver.id, name: hire.name, email: hire.email };
    }),
  );

  // 499 deliveries, a few at a time, each with its order number, its recipient and a window later today.
  const windowEnd = new Date(Date.now() + 4 * 3600_000).toISOString();
  await inBatches(Array.from({ length: CREATED }, (_, i) => i), 6, (i) => {
    const shop = SHOPS[i % SHOPS.length];
    const k = Math.floor(i / SHOPS.length);
    return owner.call("POST", "/api/v1/deliveries", {
      origin: shop,
      origin_address: `Loja ${(i % SHOPS.length) + 1} ${run}`,
      destination: { lat: shop.lat + 0.001 * ((k % 7) + 1), lng: shop.lng + 0.0012 * ((k % 5) - 2) },
      destination_address: `Rua do Quadro ${i + 1} ${run}`,
      payment_method: "invoice",
      recipient_name: `Cliente ${i + 1} ${run}`,
      recipient_phone: "+5511988887777",
      external_id: orderOf(i + 1),
      window_end: windowEnd,
    });
  });
  // The 500th: due in a few seconds, so that the board shows it late.
  late = await owner.call<Delivery>("POST", "/api/v1/deliveries", {
    origin: SHOPS[0],
    destination: { lat: SHOPS[0].lat - 0.004, lng: SHOPS[0].lng },
    origin_address: `Loja 1 ${run}`,
    destination_address: `Rua Atrasada 1 ${run}`,
    payment_method: "invoice",
    recipient_name: `Cliente Atrasado ${run}`,
    external_id: orderOf(500),
    window_end: new Date(Date.now() + 3_000).toISOString(),
  });
});

test.afterAll(async () => {
  await owner?.dispose();
});

/**
 * Every driver online: a position accepted now (online for 2 minutes), around the shops. Written to the database as
 * the service would accept it, all at once: 60 drivers signing in would empty the identity provider's sign-in bucket
 * for this address (30 at once, 150 per 5 minutes), which the journeys after this one need.
 */
async function driversOnline() {
  const sql = postgres(process.env.E2E_DB_URL!, { max: 1, onnotice: () => {} });
  const { id: company } = await owner.call<{ id: string }>("GET", "/api/v1/companies/me");
  const rows = drivers.map((driver, i) => {
    const shop = SHOPS[i % SHOPS.length];
    return { driver_id: driver.id, company_id: company, lat: shop.lat - 0.002, lng: shop.lng + 0.001 * (i % 4) };
  });
  await sql`insert into public.driver_locations ${sql(rows, "driver_id", "company_id", "lat", "lng")}
    on conflict (driver_id) do update set lat = excluded.lat, lng = excluded.lng, updated_at = now()`;
  await sql.end();
}

const serverView = (id: string) => owner.call<Delivery>("GET", `/api/v1/deliveries/${id}`);

/** The rectangle of `locator` lies inside the window. */
async function expectInWindow(page: Page, locator: Locator, what: string) {
  const box = (await locator.boundingBox())!;
  const size = page.viewportSize()!;
  expect(box, what).not.toBeNull();
  expect(box.y, `${what}: top`).toBeGreaterThanOrEqual(0);
  expect(box.y + box.height, `${what}: bottom`).toBeLessThanOrEqual(size.height + 0.5);
  expect(box.x + box.width, `${what}: right`).toBeLessThanOrEqual(size.width + 0.5);
  expect(box.height, `${what}: height`).toBeGreaterThan(40);
}

test("500 open deliveries and 60 drivers on one 1366×768 screen: assigned by drag and by keyboard, scrolled through", async ({ browser }) => {
  test.setTimeout(240_000);
  const context = await newContext(browser, { viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  await signIn(page, OWNER.email, OWNER.password);
  await expect(page.getByRole("heading", { name: "Entregas", exact: true })).toBeVisible();
  await driversOnline();
  await page.getByRole("link", { name: "Despacho", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Quadro de despacho" })).toBeVisible();

  // One screen: the map, the list and the assign bar in view, the page itself not scrolling.
  const main = page.getByRole("region", { name: /^Entregas abertas/ });
  await expect(page.getByRole("heading", { name: "Entregas abertas (500)" })).toBeVisible({ timeout: 30_000 });
  const drivers60 = page.getByRole("region", { name: /^Entregadores online/ });
  await expect(page.getByRole("heading", { name: `Entregadores online (${DRIVERS})` })).toBeVisible({
    timeout: 20_000,
  });
  await shot(page, "1366-dispatch-board-500");
  const map = page.getByRole("img", { name: /^Mapa do despacho/ });
  const assignBar = page.getByRole("form", { name: "Atribuir as entregas selecionadas" });
  // The list's scrolling box (the list inside it is as tall as its 500 rows would be).
  const list = main.locator(".board-scroll");
  await expectInWindow(page, map, "the map");
  await expectInWindow(page, list, "the list");
  await expectInWindow(page, assignBar, "the assign bar");
  await expectInWindow(page, drivers60, "the drivers");
  const scroll = await page.evaluate(() => ({
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
    inner: [window.innerWidth, window.innerHeight],
  }));
  expect(scroll.height, "the page's height").toBeLessThanOrEqual(scroll.inner[1]);
  expect(scroll.width, "the page's width").toBeLessThanOrEqual(scroll.inner[0]);
  // Map and list side by side: the map to the right of the list, each beside the other over most of its height.
  const [listBox, mapBox] = [(await list.boundingBox())!, (await map.boundingBox())!];
  expect(mapBox.x).toBeGreaterThanOrEqual(listBox.x + listBox.width - 1);
  const overlap = Math.min(mapBox.y + mapBox.height, listBox.y + listBox.height) - Math.max(mapBox.y, listBox.y);
  expect(overlap).toBeGreaterThan(listBox.height * 0.5);

  // Drop-offs on the map as well as pickups: a pin per drop-off, each shop's pickups one pin saying how many.
  await expect(page.locator(".leaflet-marker-icon.map-marker-dropoff")).toHaveCount(500);
  await expect(page.locator(`.leaflet-marker-icon[title="Aberta a todos: 50 entregas retiradas em Loja 2 ${run}"]`))
    .toHaveCount(1);
  await expect(page.locator(".leaflet-marker-icon.map-marker-load")).toHaveCount(DRIVERS);

  // Compact rows: recipient, order number, window, lateness. The late one says by how much.
  const lateRow = main.locator(`li[data-delivery="${late.id}"]`);
  await expect(lateRow).toContainText(`Cliente Atrasado ${run}`);
  await expect(lateRow).toContainText(orderOf(500));
  await expect(lateRow).toContainText(`até ${saoPauloDateTime(late.window_end!).slice(11)}`);

  // Namesakes told apart, by their phones' last digits.
  for (const phone of NAMESAKE_PHONES) {
    await expect(drivers60.getByRole("button", { name: new RegExp(`^${NAMESAKE} \\(…${phone.slice(-4)}\\): `) }))
      .toBeVisible();
  }
  await expectLabelled(page);

  // The first rows, as the list shows them (newest first: the late one, then the imported ones).
  const top = await main.locator("li[data-delivery]").evaluateAll((items) =>
    items
      .map((li) => ({ id: li.getAttribute("data-delivery")!, at: Number(li.getAttribute("aria-posinset")) }))
      .sort((a, b) => a.at - b.at)
      .slice(0, 8)
      .map((row) => row.id)
  );
  expect(top[0]).toBe(late.id);
  const rowOf = (id: string) => main.locator(`li[data-delivery="${id}"]`);
  const addressOf = async (id: string) => (await serverView(id)).destination_address;
  const driverButton = (driver: { id: string }) => drivers60.locator(`li[data-driver="${driver.id}"] button`);

  // By drag: one row onto a driver; then two selected rows, dragged together onto another.
  const [ana, bia, caio] = [drivers[5], drivers[6], drivers[7]];
  await rowOf(top[1]).dragTo(driverButton(ana));
  // Each assignment is a request of its own; a busy machine (CI's two cores) answers in seconds, not milliseconds.
  await expect(page.getByText(`Entrega para ${await addressOf(top[1])}: atribuída a ${ana.name}.`)).toBeVisible({
    timeout: 30_000,
  });
  await expect.poll(async () => (await serverView(top[1])).driver_id).toBe(ana.id);
  await expect(rowOf(top[1])).toContainText(`Entregador: ${ana.name}`);
  await expect(rowOf(top[1])).toContainText("Aceita");

  for (const id of [top[2], top[3]]) {
    await main.getByLabel(`Selecionar a entrega para ${await addressOf(id)}`).check();
  }
  await expect(assignBar.getByText("2 entregas selecionadas.")).toBeVisible();
  await rowOf(top[3]).dragTo(driverButton(bia));
  await expect(page.getByRole("heading", { name: "2 de 2 atribuídas" })).toBeVisible({ timeout: 30_000 });
  for (const id of [top[2], top[3]]) await expect.poll(async () => (await serverView(id)).driver_id).toBe(bia.id);
  await expect(assignBar.getByText("Marque as entregas pendentes")).toBeVisible();
  await expect(driverButton(bia)).toContainText(`${bia.name}: 2 entregas`);

  // By keyboard alone: "l" goes to the list, ↓ moves, Space selects three rows, "e" goes to the drivers, ↓ to the
  // driver wanted, Enter assigns. The keys are listed on screen.
  await page.getByText("Atalhos de teclado").click();
  await expect(page.getByText("selecionar ou desmarcar a entrega (também x)")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByText("selecionar ou desmarcar a entrega (também x)")).toBeHidden();
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  // "l" goes back to the row last used in the list (the one dragged above); Home to the first.
  await page.keyboard.press("l");
  await expect(rowOf(top[3])).toBeFocused();
  await page.keyboard.press("Home");
  await expect(rowOf(top[0])).toBeFocused();
  // The late one (first), then the three assigned above; the next three are pending.
  for (let i = 0; i < 4; i++) await page.keyboard.press("ArrowDown");
  const picked = top.slice(4, 7);
  for (const id of picked) {
    await expect(rowOf(id)).toBeFocused();
    await page.keyboard.press(" ");
    await page.keyboard.press("ArrowDown");
  }
  await expect(assignBar.getByText("3 entregas selecionadas.")).toBeVisible();
  await page.keyboard.press("e");
  const order = await drivers60.locator("li[data-driver]").evaluateAll((items) =>
    items.map((li) => li.getAttribute("data-driver"))
  );
  const target = order.indexOf(caio.id);
  await expect(drivers60.getByRole("button").first()).toBeFocused();
  for (let i = 0; i < target; i++) await page.keyboard.press("ArrowDown");
  await expect(driverButton(caio)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "3 de 3 atribuídas" })).toBeVisible({ timeout: 30_000 });
  for (const id of picked) await expect.poll(async () => (await serverView(id)).driver_id).toBe(caio.id);
  await expect(driverButton(caio)).toContainText(`${caio.name}: 3 entregas`);
  // The late one says by how much, now that its window has ended.
  await expect(lateRow.getByText(/^Atrasada \d+ min$/)).toBeVisible({ timeout: 15_000 });
  await shot(page, "1366-dispatch-board-assigned");

  // The list scrolls through all 500, holding only the rows in view (and a few around them) in the page.
  const scroller = list;
  const seen = new Set<string>();
  let most = 0;
  for (let step = 0; step < 200; step++) {
    const state = await scroller.evaluate((el) => {
      const ids = [...el.querySelectorAll("li[data-delivery]")].map((li) => li.getAttribute("data-delivery")!);
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 1;
      el.scrollTop += el.clientHeight;
      return { ids, atEnd };
    });
    for (const id of state.ids) seen.add(id);
    most = Math.max(most, state.ids.length);
    if (state.atEnd) break;
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  }
  expect(seen.size).toBe(500);
  expect(most, "rows in the page at once").toBeLessThan(60);
  const last = main.locator('li[aria-posinset="500"]');
  await expect(last).toBeVisible();
  await expect(last).toContainText(/Cliente \d+ /);
  expect(await page.evaluate(() => document.documentElement.scrollHeight <= window.innerHeight)).toBe(true);

  // On a phone: stacked, nothing wider than the window, the assign bar in view while the page scrolls.
  await page.setViewportSize({ width: 390, height: 844 });
  await expectNoSidewaysScroll(page);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
  await expectInWindow(page, assignBar, "the assign bar on a phone");
  await main.locator("li[data-delivery] input[type=checkbox]").first().check();
  await expect(assignBar.getByText("1 entrega selecionada.")).toBeVisible();
  await shot(page, "390-dispatch-board-500");
  await context.close();
});

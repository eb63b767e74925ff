// Sign-in failures told as they are (issue 21, finding 8): a token the server no longer accepts, an identity
// lookup that fails, and a driver deactivated while the app is open each get their own sentence and the way out
// that fits; and the panel asks before it deactivates a driver (finding 10). The contexts block service workers:
// these journeys fake the server's answers with page.route, which a worker's fetch would pass by.
import { allowBrowserLine, Api, expect, newContext, shot, signIn, test } from "./support.ts";

const DORA = { email: "driver1@demo.test", password: "demo-driver-pass" };

test("a token the server refuses says so, with the way back to sign-in", async ({ browser }) => {
  const context = await newContext(browser, { viewport: { width: 390, height: 844 }, serviceWorkers: "block" });
  const page = await context.newPage();
  await signIn(page, DORA.email, DORA.password);
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  // The stored access token is spoiled (as one signed with a key the project no longer has would be); it has not
  // expired, so supabase-js keeps it.
  await page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("sb-") && k.endsWith("-auth-token"))!;
    const session = JSON.parse(localStorage.getItem(key)!);
    session.access_token = session.access_token.replace(/\.[^.]+$/, ".bm90LXRoZS1zaWduYXR1cmU");
    localStorage.setItem(key, JSON.stringify(session));
  });
  await page.reload();
  await expect(page.getByRole("alert")).toHaveText(
    "O servidor não aceita mais a sua sessão. Entre de novo para continuar.",
  );
  await expect(page.getByText("Esta conta não pertence a nenhuma empresa", { exact: false })).toHaveCount(0);
  await shot(page, "signin-token-refused");
  await page.getByRole("button", { name: "Entrar de novo" }).click();
  await expect(page.getByRole("heading", { name: "Entrar" })).toBeVisible();
  await signIn(page, DORA.email, DORA.password);
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  await context.close();
});

test("an identity lookup that fails is not 'no company': the app says the server did not answer, and retries", async ({ browser }) => {
  allowBrowserLine(/status of 503/);
  const context = await newContext(browser, { viewport: { width: 390, height: 844 }, serviceWorkers: "block" });
  const page = await context.newPage();
  await signIn(page, DORA.email, DORA.password);
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  await context.route(
    "**/functions/v1/whoami*",
    (route) => route.fulfill({ status: 503, contentType: "application/json", body: '{"detail":"busy"}' }),
  );
  await page.reload();
  await expect(page.getByRole("alert")).toHaveText(
    "O servidor não respondeu ao confirmar quem você é. Tente de novo em instantes.",
  );
  await shot(page, "signin-lookup-failed");
  await context.unroute("**/functions/v1/whoami*");
  await page.getByRole("button", { name: "Tentar de novo" }).click();
  await expect(page.getByRole("heading", { name: "Suas entregas" })).toBeVisible();
  await context.close();
});

test("a driver deactivated while the app is open is told so, not 'Reconnecting…'; the panel asks first", async ({ browser }) => {
  const owner = await Api.signIn("owner@demo.test", "demo-owner-pass");
  const email = `edu-${Date.now().toString(36)}@demo.test`;
  const edu = await owner.call<{ id: string }>("POST", "/api/v1/drivers", {
    name: "Edu Entregador",
    email,
    password: "edu-driver-pass",
  });

  const driver = await newContext(browser, { viewport: { width: 390, height: 844 } });
  const app = await driver.newPage();
  await signIn(app, email, "edu-driver-pass");
  await expect(app.getByRole("heading", { name: "Suas entregas" })).toBeVisible();

  const panel = await newContext(browser);
  const page = await panel.newPage();
  await signIn(page, "owner@demo.test", "demo-owner-pass");
  await page.getByRole("link", { name: "Entregadores" }).click();
  const deactivate = page.getByRole("button", { name: "Desativar Edu Entregador" });
  // One click asks; going back changes nothing.
  await deactivate.click();
  const question = page.getByRole("dialog", { name: /^Desativar Edu Entregador\?/ });
  await expect(question).toBeVisible();
  await expect(question.getByRole("button", { name: "Voltar" })).toBeFocused();
  await question.getByRole("button", { name: "Voltar" }).click();
  await expect(question).toBeHidden();
  expect((await owner.call<{ active: boolean }>("GET", `/api/v1/drivers/${edu.id}`)).active).toBe(true);
  await deactivate.click();
  await question.getByRole("button", { name: "Sim, desativar" }).click();
  const row = page.getByRole("row").filter({ hasText: "Edu Entregador" });
  await expect(row.getByText("Inativo", { exact: true })).toBeVisible();

  // The driver's app learns it at once (driver_deactivated on its topic, then its next request), and after a reload too.
  const told = "Sua conta de entregador foi desativada pela empresa. Fale com ela para voltar a usar o app.";
  await expect(app.getByRole("alert")).toHaveText(told);
  await expect(app.getByText("Reconectando…")).toHaveCount(0);
  await shot(app, "signin-driver-deactivated");
  await app.reload();
  await expect(app.getByRole("alert")).toHaveText(told);
  await app.getByRole("button", { name: "Sair" }).click();
  await expect(app.getByRole("heading", { name: "Entrar" })).toBeVisible();

  await driver.close();
  await panel.close();
  await owner.dispose();
});

// Who is online, in the company panel (the Drivers page and the live map): a driver whose latest position the
// service accepted less than 2 minutes ago. Never Realtime presence, whose payload says whatever its sender writes:
// a driver announcing another driver on the company's channel (the attacker's finding) has nowhere to do it, and
// shows nobody online. A company of its own, so that no earlier journey's positions count.
import { createClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import type { APIRequestContext } from "@playwright/test";
import { accessToken, baseURL, expect, newContext, signIn, test } from "./support.ts";

const PASSWORD = "presence-pass-123";

async function tokenOf(request: APIRequestContext, anonKey: string, email: string): Promise<string> {
  const res = await request.post("/auth/v1/token?grant_type=password", {
    headers: { apikey: anonKey },
    data: { email, password: PASSWORD },
  });
  expect(res.status()).toBe(200);
  return (await res.json()).access_token;
}

test("a driver is online while its position is recent; a spoofed presence shows nobody", async ({ browser }) => {
  const owner = await newContext(browser);
  await owner.clock.install();
  const page = await owner.newPage();
  await page.goto("/");
  const anonKey = await page.evaluate(() =>
    (window as unknown as { APP_CONFIG: { anonKey: string } }).APP_CONFIG.anonKey
  );

  const ownerEmail = `presence-${randomUUID().slice(0, 8)}@e2e.test`;
  const registered = await page.request.post("/api/v1/companies/register", {
    data: { company_name: "Presença Ltda", owner_name: "Olga", email: ownerEmail, password: PASSWORD },
  });
  expect(registered.status()).toBe(201);
  const { company_id: companyId } = await registered.json();
  await signIn(page, ownerEmail, PASSWORD);
  await expect(page.getByRole("button", { name: "Sair" })).toBeVisible();
  const ownerToken = await accessToken(page);
  const drivers: Record<string, { id: string; email: string }> = {};
  for (const name of ["Ana Motorista", "Bia Motorista"]) {
    const email = `${name.split(" ")[0].toLowerCase()}-${randomUUID().slice(0, 8)}@e2e.test`;
    const res = await page.request.post("/api/v1/drivers", {
      headers: { authorization: `Bearer ${ownerToken}` },
      data: { name, email, password: PASSWORD },
    });
    expect(res.status()).toBe(201);
    drivers[name] = { id: (await res.json()).id, email };
  }
  const ana = await tokenOf(page.request, anonKey, drivers["Ana Motorista"].email);

  // Ana announces Bia on the company's channel: Realtime lets no one track presence there.
  const spoofer = createClient(baseURL(), anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
  await spoofer.realtime.setAuth(ana);
  const channel = spoofer.channel(`company:${companyId}`, {
    config: { private: true, presence: { key: drivers["Bia Motorista"].id, enabled: true } },
  });
  const joined = await new Promise<string>((resolve) => channel.subscribe((s) => s !== "CLOSED" && resolve(s)));
  expect(joined).toBe("CHANNEL_ERROR");
  await spoofer.removeAllChannels();

  await page.getByRole("link", { name: "Entregadores" }).click();
  const row = (name: string) => page.getByRole("row").filter({ hasText: name });
  await expect(row("Ana Motorista").getByText("Offline", { exact: true })).toBeVisible();
  await expect(row("Bia Motorista").getByText("Offline", { exact: true })).toBeVisible();
  await page.getByRole("link", { name: "Mapa ao vivo" }).click();
  await expect(page.getByText("0 online agora")).toBeVisible();

  // Ana's position, accepted by the service: she is online, live.
  const sent = await page.request.put("/api/v1/locations/me", {
    headers: { authorization: `Bearer ${ana}` },
    data: { lat: -23.5505, lng: -46.6333 },
  });
  expect(sent.status()).toBe(200);
  await expect(page.getByText("1 online agora")).toBeVisible();
  await page.getByRole("link", { name: "Entregadores" }).click();
  await expect(row("Ana Motorista").getByText("Online", { exact: true })).toBeVisible();
  await expect(row("Bia Motorista").getByText("Offline", { exact: true })).toBeVisible();

  // Two minutes without a position: offline again.
  await page.clock.fastForward("02:05");
  await expect(row("Ana Motorista").getByText("Offline", { exact: true })).toBeVisible();
  await owner.close();
});

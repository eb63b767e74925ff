// Public Realtime topics (DESIGN.md §11.7): anyone could join a public `driver:{id}` or `company:{id}` topic and
// relay spoofs to its other public subscribers. config.toml sets Realtime's `private_only`, which the local Realtime
// honours as Realtime does: a public join is refused ("PrivateOnly: This project only allows private channels"),
// while a private join authorized by the realtime.messages policies goes on as before. A stack of its own, with
// config.toml as it is (the shared test stack lifts the setting to test public channels too).
import { randomUUID } from "node:crypto";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OwnStack, startOwnStack } from "../../support/stack.ts";

let stack: OwnStack;
let sql: postgres.Sql;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  stack = await startOwnStack();
  sql = postgres(stack.dbUrl, { max: 2, onnotice: () => {} });
}, 180_000);

afterAll(async () => {
  for (const client of clients) await client.removeAllChannels();
  await sql?.end({ timeout: 1 });
  await stack?.stop();
});

function client(): SupabaseClient {
  const supabase = createClient(stack.apiUrl, stack.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  clients.push(supabase);
  return supabase;
}

function join(supabase: SupabaseClient, topic: string, isPrivate: boolean) {
  return new Promise<{ status: string; error?: string }>((resolve) => {
    supabase.channel(topic, { config: { private: isPrivate } }).subscribe((status, error) => {
      if (status !== "CLOSED") resolve({ status, error: error?.message });
    });
  });
}

describe("Realtime with private channels only (config.toml [realtime] private_only)", () => {
  it("refuses a public join of the product's topics, and of any other, in Realtime's words", async () => {
    const [driver] = await sql<{ id: string }[]>`select id from public.drivers limit 1`;
    const [company] = await sql<{ id: string }[]>`select id from public.companies limit 1`;
    for (const topic of [`driver:${driver.id}`, `company:${company.id}`, `anything-${randomUUID()}`]) {
      const outcome = await join(client(), topic, false);
      expect(outcome.status, topic).toBe("CHANNEL_ERROR");
      expect(outcome.error).toContain("PrivateOnly: This project only allows private channels");
    }
  });

  it("still lets a member join their company's private topic", async () => {
    const supabase = client();
    const signedIn = await supabase.auth.signInWithPassword({ email: "owner@demo.test", password: "demo-owner-pass" });
    expect(signedIn.error).toBeNull();
    const companyId = signedIn.data.session!.user.app_metadata?.company_id ??
      JSON.parse(Buffer.from(signedIn.data.session!.access_token.split(".")[1], "base64url").toString()).company_id;
    await supabase.realtime.setAuth(signedIn.data.session!.access_token);
    expect((await join(supabase, `company:${companyId}`, true)).status).toBe("SUBSCRIBED");
  });
});

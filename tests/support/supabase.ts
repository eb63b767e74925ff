// The real supabase-js client against the local stack.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { stack } from "./api.ts";

export function supabaseClient(): SupabaseClient {
  return createClient(stack().apiUrl, stack().anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
}

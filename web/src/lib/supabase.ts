// supabase-js: sign-in, session refresh and Realtime.
import { createClient } from "@supabase/supabase-js";
import { config } from "../config.ts";

export const supabase = createClient(config.supabaseUrl, config.anonKey, {
  auth: { persistSession: true, autoRefreshToken: true },
});

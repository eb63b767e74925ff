// Runtime settings: injected into the page by the local stack (window.APP_CONFIG),
// or build settings for a static host (VITE_SUPABASE_URL, VITE_SUPABASE_ANON_KEY,
// VITE_API_URL, VITE_TILE_URL).
export interface AppConfig {
  supabaseUrl: string;
  apiUrl: string;
  anonKey: string;
  tileUrl: string;
  localStack: boolean;
}

declare global {
  interface Window {
    APP_CONFIG?: Partial<AppConfig>;
  }
}

const injected = window.APP_CONFIG ?? {};
const env = import.meta.env;
const supabaseUrl = injected.supabaseUrl || env.VITE_SUPABASE_URL || window.location.origin;

export const config: AppConfig = {
  supabaseUrl,
  apiUrl: injected.apiUrl || env.VITE_API_URL || supabaseUrl,
  anonKey: injected.anonKey || env.VITE_SUPABASE_ANON_KEY || "",
  tileUrl: injected.tileUrl ?? env.VITE_TILE_URL ?? "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
  localStack: injected.localStack ?? false,
};

// The languages the app speaks, and which one a browser gets (pure: tests/web/web-input.test.ts reads it).
export const LANGUAGES = ["pt-BR", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The chosen language if any, else the first of the browser's languages the app speaks, else Portuguese. */
export function preferredLanguage(chosen: string | null, browser: readonly string[]): Language {
  if ((LANGUAGES as readonly string[]).includes(chosen ?? "")) return chosen as Language;
  for (const tag of browser) {
    const primary = tag.toLowerCase().split("-")[0];
    if (primary === "pt") return "pt-BR";
    if (primary === "en") return "en";
  }
  return "pt-BR";
}

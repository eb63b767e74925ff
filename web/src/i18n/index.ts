// The app's languages through i18next: Brazilian Portuguese first, English when the browser prefers it (or the
// person chooses it; the choice is kept in this browser). <html lang> follows the language in use.
import i18next from "i18next";
import { initReactI18next } from "react-i18next";
import { en } from "./en.ts";
import { ptBR } from "./pt-BR.ts";

export const LANGUAGES = ["pt-BR", "en"] as const;
export type Language = (typeof LANGUAGES)[number];
const STORAGE_KEY = "language";

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

function storedChoice(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export const i18n = i18next.createInstance();
i18n.on("languageChanged", (language) => {
  document.documentElement.lang = language;
  document.title = i18n.t("appName");
});
void i18n.use(initReactI18next).init({
  resources: { "pt-BR": { translation: ptBR }, en: { translation: en } },
  lng: preferredLanguage(storedChoice(), navigator.languages ?? [navigator.language]),
  fallbackLng: "pt-BR",
  supportedLngs: LANGUAGES,
  // React escapes what it renders.
  interpolation: { escapeValue: false },
  initAsync: false,
});

/** The language in use. */
export const language = (): Language => (i18n.language === "en" ? "en" : "pt-BR");

/** A person's explicit choice: used at once and remembered in this browser. */
export function chooseLanguage(choice: Language) {
  try {
    localStorage.setItem(STORAGE_KEY, choice);
  } catch {
    // Private mode without storage: the choice lasts until the page is closed.
  }
  void i18n.changeLanguage(choice);
}

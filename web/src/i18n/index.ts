// The app's languages through i18next: Brazilian Portuguese first, English when the browser prefers it (or the
// person chooses it; the choice is kept in this browser). <html lang> follows the language in use.
import i18next from "i18next";
import { initReactI18next } from "react-i18next";
import { en } from "./en.ts";
import { type Language, LANGUAGES, preferredLanguage } from "./languages.ts";
import { ptBR } from "./pt-BR.ts";

export { type Language, LANGUAGES };

const STORAGE_KEY = "language";

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

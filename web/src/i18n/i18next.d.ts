// Typed keys: t("a.key") with a key missing from the Portuguese file, or without the values its {{names}} need,
// is a type error.
import "i18next";
import type { ptBR } from "./pt-BR.ts";

declare module "i18next" {
  interface CustomTypeOptions {
    defaultNS: "translation";
    resources: { translation: typeof ptBR };
  }
}

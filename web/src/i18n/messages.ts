// The shape of a language file: every key of the Brazilian Portuguese one, each a string.
import type { ptBR } from "./pt-BR.ts";

type Shape<T> = { [K in keyof T]: T[K] extends string ? string : Shape<T[K]> };
export type Messages = Shape<typeof ptBR>;

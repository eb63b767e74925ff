// The app's text comes from one module; a translation is another file of the same shape.
import { en } from "./en.ts";

export type Strings = typeof en;
export const locale = "en";
export const t: Strings = en;

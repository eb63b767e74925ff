// A small gazetteer of real São Paulo streets and their CEPs (the Correios' codes, with the stretch of numbers each
// covers as ViaCEP's `complemento` gives it) at plausible coordinates, for the postcode and geocoding simulators, and
// the forgiving match of free text against it (accents, case, abbreviations, words cut short) that a search box needs.
// Runtime-neutral, like the simulators that use it.

export interface Place {
  cep: string;
  street: string;
  /** ViaCEP's `complemento`: the stretch of the street the CEP covers ("" for all of it). */
  complement: string;
  neighborhood: string;
  lat: number;
  lng: number;
  /** The house numbers the CEP covers, when it covers a stretch: inclusive, and one side only when `side` says so. */
  numbers?: { from: number; to: number; side?: "even" | "odd" };
}

export const CITY = "São Paulo";
export const STATE = "SP";
export const STATE_NAME = "São Paulo";

export const GAZETTEER: readonly Place[] = [
  {
    cep: "01001-000",
    street: "Praça da Sé",
    complement: "lado ímpar",
    neighborhood: "Sé",
    lat: -23.5503,
    lng: -46.6339,
  },
  {
    cep: "01310-000",
    street: "Avenida Paulista",
    complement: "até 610 - lado par",
    neighborhood: "Bela Vista",
    lat: -23.5697,
    lng: -46.6463,
    numbers: { from: 2, to: 610, side: "even" },
  },
  {
    cep: "01310-100",
    street: "Avenida Paulista",
    complement: "de 612 a 1510 - lado par",
    neighborhood: "Bela Vista",
    lat: -23.5649,
    lng: -46.6522,
    numbers: { from: 612, to: 1510, side: "even" },
  },
  {
    cep: "01310-200",
    street: "Avenida Paulista",
    complement: "de 1512 a 2132 - lado par",
    neighborhood: "Bela Vista",
    lat: -23.5614,
    lng: -46.6559,
    numbers: { from: 1512, to: 2132, side: "even" },
  },
  {
    cep: "01311-300",
    street: "Avenida Paulista",
    complement: "de 1867 ao fim - lado ímpar",
    neighborhood: "Bela Vista",
    lat: -23.5578,
    lng: -46.6605,
    numbers: { from: 1867, to: 2999, side: "odd" },
  },
  {
    cep: "01305-000",
    street: "Rua Augusta",
    complement: "até 1208",
    neighborhood: "Consolação",
    lat: -23.5524,
    lng: -46.6534,
    numbers: { from: 1, to: 1208 },
  },
  {
    cep: "01304-001",
    street: "Rua Augusta",
    complement: "de 1209 a 2300",
    neighborhood: "Consolação",
    lat: -23.5562,
    lng: -46.6576,
    numbers: { from: 1209, to: 2300 },
  },
  {
    cep: "01412-100",
    street: "Rua Augusta",
    complement: "de 2301 ao fim",
    neighborhood: "Cerqueira César",
    lat: -23.5628,
    lng: -46.6663,
    numbers: { from: 2301, to: 3999 },
  },
  {
    cep: "01426-001",
    street: "Rua Oscar Freire",
    complement: "",
    neighborhood: "Jardim Paulista",
    lat: -23.5633,
    lng: -46.6697,
  },
  {
    cep: "01414-001",
    street: "Rua Haddock Lobo",
    complement: "",
    neighborhood: "Cerqueira César",
    lat: -23.5601,
    lng: -46.6637,
  },
  {
    cep: "01504-000",
    street: "Rua Vergueiro",
    complement: "",
    neighborhood: "Liberdade",
    lat: -23.5717,
    lng: -46.6396,
  },
  {
    cep: "04538-133",
    street: "Avenida Brigadeiro Faria Lima",
    complement: "",
    neighborhood: "Itaim Bibi",
    lat: -23.5866,
    lng: -46.6817,
  },
  {
    cep: "01302-000",
    street: "Rua da Consolação",
    complement: "",
    neighborhood: "Consolação",
    lat: -23.5470,
    lng: -46.6430,
  },
  {
    cep: "01037-010",
    street: "Praça Ramos de Azevedo",
    complement: "",
    neighborhood: "República",
    lat: -23.5452,
    lng: -46.6388,
  },
  {
    cep: "01046-010",
    street: "Avenida Ipiranga",
    complement: "",
    neighborhood: "República",
    lat: -23.5456,
    lng: -46.6433,
  },
  {
    cep: "01024-000",
    street: "Rua da Cantareira",
    complement: "",
    neighborhood: "Centro",
    lat: -23.5418,
    lng: -46.6296,
  },
  { cep: "01120-010", street: "Praça da Luz", complement: "", neighborhood: "Luz", lat: -23.5343, lng: -46.6339 },
  {
    cep: "04094-050",
    street: "Avenida Pedro Álvares Cabral",
    complement: "",
    neighborhood: "Vila Mariana",
    lat: -23.5874,
    lng: -46.6576,
  },
];

export const cepDigits = (cep: string) => cep.replace(/\D/g, "");

/** The place of a CEP (8 digits, punctuated or not), or undefined. */
export const byCep = (cep: string) => GAZETTEER.find((place) => cepDigits(place.cep) === cepDigits(cep));

/** Lowercase without accents: "Praça da Sé" and "praca da se" are one text. */
const fold = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** How people shorten the kinds of street (Av. Paulista, R. Augusta, Pça. da Sé) and their titles. */
const ABBREVIATIONS: Record<string, string> = {
  av: "avenida",
  avda: "avenida",
  r: "rua",
  pca: "praca",
  pc: "praca",
  al: "alameda",
  brig: "brigadeiro",
  dr: "doutor",
};
/** Words that join names and say nothing on their own. */
const CONNECTORS = new Set(["de", "da", "do", "das", "dos", "e"]);

const wordsOf = (text: string) => fold(text).split(/[^a-z0-9]+/).filter(Boolean);

export interface Query {
  /** The words to find, folded and unabbreviated; the last may be cut short (still being typed). */
  words: string[];
  houseNumber: number | null;
  cep: string | null;
}

/** Free text as a search: its CEP (8 digits, punctuated or not), its house number, its other words. */
export function parseQuery(text: string): Query {
  let rest = fold(text);
  let cep: string | null = null;
  rest = rest.replace(/\b(\d{5})[-.\s]?(\d{3})\b/, (_, a: string, b: string) => {
    cep = `${a}${b}`;
    return " ";
  });
  let houseNumber: number | null = null;
  const words: string[] = [];
  for (const word of wordsOf(rest)) {
    if (/^\d{1,5}$/.test(word)) houseNumber ??= Number(word);
    else if (!CONNECTORS.has(word)) words.push(ABBREVIATIONS[word] ?? word);
  }
  return { words, houseNumber, cep };
}

const searchable = (place: Place) => wordsOf(`${place.street} ${place.neighborhood} ${CITY} ${STATE} Brasil`);

const coversNumber = (place: Place, n: number) =>
  !!place.numbers && n >= place.numbers.from && n <= place.numbers.to &&
  (!place.numbers.side || (n % 2 === 0) === (place.numbers.side === "even"));

/**
 * The places whose street, neighbourhood or city hold every word of the query (each word the start of one of theirs:
 * "Av Paul" finds Avenida Paulista), the stretch that covers the house number first, at most `limit`.
 */
export function search(text: string, limit = 5): { place: Place; houseNumber: number | null }[] {
  const query = parseQuery(text);
  if (query.words.length === 0 && !query.cep) return [];
  const found = GAZETTEER.filter((place) => {
    if (query.cep && cepDigits(place.cep) !== query.cep) return false;
    const words = searchable(place);
    return query.words.every((word) => words.some((candidate) => candidate.startsWith(word)));
  });
  // A house number on a street of several CEPs is in the stretch that covers it, not in the others.
  const n = query.houseNumber;
  const placed = n === null ? found : found.filter((place) =>
    coversNumber(place, n) ||
    !found.some((other) => other.street === place.street && coversNumber(other, n))
  );
  return placed.slice(0, limit).map((place) => ({ place, houseNumber: n }));
}

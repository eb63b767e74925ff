// One end of a delivery as the New delivery form holds it (features/deliveries/components/AddressFields.tsx), and the address it sends.

export type End = "origin" | "destination";
export interface Point {
  lat: number;
  lng: number;
}

export interface AddressEnd {
  cep: string;
  /** Street and number, or the suggestion chosen. */
  address: string;
  neighborhood: string;
  /** The city and its state, as the CEP gives them: São Paulo - SP. */
  city: string;
  point: Point | null;
  /** Where the point came from: the CEP's street (approximate), a suggestion chosen, the map. */
  pointFrom: "cep" | "place" | "map" | null;
  /** The suggestion chosen, while the address still reads as it. */
  chosen: string | null;
  /** Counts the points set by a CEP or a suggestion, so that the map fits them in view (not one dragged). */
  placed: number;
}

export const emptyEnd: AddressEnd = {
  cep: "",
  address: "",
  neighborhood: "",
  city: "",
  point: null,
  pointFrom: null,
  chosen: null,
  placed: 0,
};

/**
 * The address sent with the delivery, as Brazilians write one: the suggestion chosen as it reads, or
 * "street, number - neighbourhood, city - state, CEP" from the fields (what the address already says left out).
 */
export function fullAddress(end: AddressEnd): string {
  const address = end.address.trim();
  if (end.chosen && address === end.chosen) return address;
  const says = (part: string) => address.toLowerCase().includes(part.toLowerCase());
  const [neighborhood, city, cep] = [end.neighborhood, end.city, end.cep].map((part) => part.trim());
  const head = neighborhood && !says(neighborhood) ? `${address} - ${neighborhood}` : address;
  return [head, ...[city, cep].filter((part) => part && !says(part))].join(", ");
}

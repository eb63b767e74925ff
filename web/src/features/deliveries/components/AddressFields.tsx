// One end of a delivery as people give it: a CEP that fills the street, neighbourhood and city; an address field that
// suggests places as it is typed (a combobox: arrow keys, Enter and Escape, announced to screen readers); and the
// point those give, which the New delivery map shows and a person may drag. Nobody types coordinates.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { ApiError, type Place } from "../../../api/client.ts";
import { errorMessage } from "../../../api/errors.ts";
import { ErrorNote, Field, MaskedField } from "../../../components/ui.tsx";
import { digitsOf, maskCep } from "../../../lib/brazil.ts";
import { type AddressEnd, type End } from "../address.ts";
import { useDebounced } from "../../../lib/debounce.ts";
import { geocodeQuery, postcodeQuery } from "../api/queries.ts";

const SEARCH_AFTER_CHARACTERS = 3;

export function AddressFields(
  { end, value, onChange }: { end: End; value: AddressEnd; onChange: (next: AddressEnd) => void },
) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [cepProblem, setCepProblem] = useState<string | null>(null);
  const [lookingUp, setLookingUp] = useState(false);
  // The address as the person typed it since it was last filled or chosen: only then are places suggested.
  const [typed, setTyped] = useState(false);
  const latest = useRef(value);
  latest.current = value;
  const postcode = (digits: string) => client.fetchQuery(postcodeQuery(digits));

  async function lookUpCep(masked: string) {
    onChange({ ...latest.current, cep: masked });
    setCepProblem(null);
    const digits = digitsOf(masked);
    if (digits.length !== 8) return;
    setLookingUp(true);
    try {
      const found = await postcode(digits);
      if (digitsOf(latest.current.cep) !== digits) return;
      onChange({
        ...latest.current,
        cep: found.cep,
        address: found.street || latest.current.address,
        neighborhood: found.neighborhood,
        city: [found.city, found.state].filter(Boolean).join(" - "),
        chosen: null,
      });
      setTyped(false);
      // A first pin on the street: its place with this CEP, else its first place; the number then refines it.
      const q = [found.street, found.neighborhood, found.city].filter(Boolean).join(", ");
      const places = await client.fetchQuery(geocodeQuery(q));
      const place = places.items.find((p) => p.postcode === found.cep) ?? places.items[0];
      if (place && digitsOf(latest.current.cep) === digits) {
        onChange({
          ...latest.current,
          point: { lat: place.lat, lng: place.lng },
          pointFrom: "cep",
          placed: latest.current.placed + 1,
        });
      }
    } catch (error) {
      setCepProblem(error instanceof ApiError && error.status === 404 ? t("address.cepNotFound") : errorMessage(error));
    } finally {
      setLookingUp(false);
    }
  }

  async function choose(place: Place) {
    onChange({
      ...latest.current,
      address: place.label,
      chosen: place.label,
      cep: place.postcode ? maskCep(place.postcode) : latest.current.cep,
      point: { lat: place.lat, lng: place.lng },
      pointFrom: "place",
      placed: latest.current.placed + 1,
    });
    setTyped(false);
    setCepProblem(null);
    // The place's CEP fills its neighbourhood and city, as a CEP typed does; the place's label stays the address.
    const digits = digitsOf(place.postcode ?? "");
    if (digits.length !== 8) return;
    try {
      const found = await postcode(digits);
      if (latest.current.chosen !== place.label) return;
      onChange({
        ...latest.current,
        neighborhood: found.neighborhood,
        city: [found.city, found.state].filter(Boolean).join(" - "),
      });
    } catch {
      // The fields stay as they were: the chosen place alone says where the end is.
    }
  }

  return (
    <>
      <MaskedField
        label={t(`address.cep.${end}`)}
        inputMode="numeric"
        autoComplete="off"
        value={value.cep}
        mask={maskCep}
        onValue={lookUpCep}
        problem={cepProblem}
        showProblem
      />
      {lookingUp && <p className="note">{t("address.cepLooking")}</p>}
      <AddressSearch
        label={t(end === "origin" ? "newDelivery.originAddress" : "newDelivery.destinationAddress")}
        value={value.address}
        query={typed
          ? [value.address, value.neighborhood, value.city.replace(" - ", ", ")].filter((p) => p.trim()).join(", ")
          : ""}
        onType={(address) => {
          onChange({ ...latest.current, address });
          setTyped(true);
        }}
        onChoose={choose}
      />
      <Field
        label={t(`address.neighborhood.${end}`)}
        autoComplete="off"
        value={value.neighborhood}
        onChange={(e) => onChange({ ...latest.current, neighborhood: e.target.value })}
      />
      <Field
        label={t(`address.city.${end}`)}
        autoComplete="off"
        value={value.city}
        onChange={(e) => onChange({ ...latest.current, city: e.target.value })}
      />
      <p className="note">{t(`address.pin.${value.pointFrom ?? "none"}`)}</p>
    </>
  );
}

/**
 * The address field: places suggested as it is typed (debounced), in a listbox the arrow keys move through, Enter
 * chooses from and Escape closes; how many were found is announced.
 */
function AddressSearch(
  { label, value, query, onType, onChoose }: {
    label: string;
    value: string;
    /** What to look for (empty: nothing, e.g. right after a choice). */
    query: string;
    onType: (text: string) => void;
    onChoose: (place: Place) => void;
  },
) {
  const { t } = useTranslation();
  const id = useId();
  const listId = `${id}-places`;
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const search = useDebounced(value.trim().length >= SEARCH_AFTER_CHARACTERS ? query : "", 300);
  const places = useQuery({
    ...geocodeQuery(search),
    enabled: !!search,
    retry: false,
  });
  const items = search && query ? places.data?.items ?? [] : [];
  const shown = open && items.length > 0;
  useEffect(() => setActive(-1), [search]);

  function choose(place: Place) {
    onChoose(place);
    setOpen(false);
    setActive(-1);
  }

  function keyDown(e: KeyboardEvent<HTMLInputElement>) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (items.length === 0) return;
      e.preventDefault();
      setOpen(true);
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((current) => (current + step + items.length) % items.length);
    } else if (e.key === "Enter" && shown && active >= 0) {
      // Choosing a place, not sending the form.
      e.preventDefault();
      choose(items[active]);
    } else if (e.key === "Escape" && shown) {
      e.preventDefault();
      setOpen(false);
    }
  }

  const status = !search || !query
    ? ""
    : places.isFetching
    ? t("address.searching")
    : places.data
    ? items.length ? t("address.found", { count: items.length }) : t("address.noneFound")
    : "";
  return (
    <div className="field combobox">
      <label htmlFor={id}>{label}</label>
      <div className="combobox-box">
        <input
          id={id}
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={shown}
          aria-controls={listId}
          aria-activedescendant={shown && active >= 0 ? `${listId}-${active}` : undefined}
          autoComplete="off"
          required
          value={value}
          onChange={(e) => {
            onType(e.target.value);
            setOpen(true);
          }}
          onKeyDown={keyDown}
          onFocus={() => setOpen(true)}
          onBlur={() => setOpen(false)}
        />
        <ul id={listId} role="listbox" aria-label={t("address.suggestions")} hidden={!shown}>
          {items.map((place, i) => (
            <li
              key={`${place.label}-${i}`}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              // Chosen on mousedown's click without the field losing focus first (which closes the list).
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => choose(place)}
            >
              {place.label}
            </li>
          ))}
        </ul>
      </div>
      <p className="note" aria-live="polite">{status}</p>
      {places.error ? <ErrorNote error={places.error} /> : null}
    </div>
  );
}

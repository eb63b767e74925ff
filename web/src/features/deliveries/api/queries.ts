// Every read about deliveries, one `queryOptions` per operation: its key (from `deliveryKeys`) and how it is read.
// Screens add what is theirs (`enabled`, `refetchInterval`) when they use one.
import { queryOptions } from "@tanstack/react-query";
import { api, call, type DeliveryStatus, type PaymentStatus } from "../../../api/client.ts";
import { supabase } from "../../../lib/supabase.ts";
import { deliveryKeys, type DeliveryListFilter, type QuoteEnds } from "./keys.ts";

/** A page of deliveries that fit `filter` (GET /deliveries), `limit` at most. */
export const deliveriesQuery = (filter: DeliveryListFilter, limit: number) =>
  queryOptions({
    queryKey: deliveryKeys.list(filter),
    queryFn: () =>
      call(api.GET("/api/v1/deliveries", {
        params: {
          query: {
            limit,
            cursor: filter.cursor,
            q: filter.q,
            status: filter.status as DeliveryStatus | undefined,
            payment_status: filter.payment_status as PaymentStatus | undefined,
            driver_id: filter.driver_id,
            from: filter.from,
            to: filter.to,
            late: filter.late as "true" | undefined,
          },
        },
      })),
  });

/** One delivery by its id. */
export const deliveryQuery = (id: string) =>
  queryOptions({
    queryKey: deliveryKeys.one(id),
    queryFn: () => call(api.GET("/api/v1/deliveries/{id}", { params: { path: { id } } })),
  });

/** The driver's positions while the delivery was in progress. */
export const trailQuery = (id: string) =>
  queryOptions({
    queryKey: deliveryKeys.trail(id),
    queryFn: () => call(api.GET("/api/v1/deliveries/{id}/trail", { params: { path: { id } } })),
  });

/** Signed URLs (an hour) of a delivery's proof files in Storage, by path. */
export const proofUrlsQuery = (deliveryId: string, paths: string[]) =>
  queryOptions({
    queryKey: deliveryKeys.proofUrls(deliveryId, paths),
    staleTime: 50 * 60_000,
    queryFn: async () => {
      const { data, error } = await supabase.storage.from("delivery-proofs").createSignedUrls(paths, 3600);
      if (error) throw error;
      return Object.fromEntries(data.map((d) => [d.path, d.signedUrl]));
    },
  });

/** A spreadsheet import run as a job (more than 500 rows), until it is over. */
export const importJobQuery = (id: string | undefined) =>
  queryOptions({
    queryKey: deliveryKeys.importJob(id),
    queryFn: () => call(api.GET("/api/v1/imports/{id}", { params: { path: { id: id! } } })),
  });

/** The price and route between two points, for a new delivery. */
export const quoteQuery = (route: QuoteEnds) =>
  queryOptions({
    queryKey: deliveryKeys.quote(route),
    queryFn: () =>
      call(api.POST("/api/v1/routes/quote", { body: { origin: route.origin!, destination: route.destination! } })),
    staleTime: 60_000,
    retry: false,
  });

/** A CEP's street, neighbourhood and city. */
export const postcodeQuery = (digits: string) =>
  queryOptions({
    queryKey: deliveryKeys.postcode(digits),
    queryFn: () => call(api.GET("/api/v1/postcodes/{cep}", { params: { path: { cep: digits } } })),
    staleTime: Infinity,
  });

/** Places that match what was typed (or a CEP's street). */
export const geocodeQuery = (q: string) =>
  queryOptions({
    queryKey: deliveryKeys.geocode(q),
    queryFn: () => call(api.GET("/api/v1/geocode", { params: { query: { q } } })),
    staleTime: 300_000,
  });

/** The proof of delivery the company requires. */
export const proofRequirementsQuery = () =>
  queryOptions({
    queryKey: deliveryKeys.proofRequirements(),
    queryFn: () => call(api.GET("/api/v1/companies/me/proof-requirements")),
  });

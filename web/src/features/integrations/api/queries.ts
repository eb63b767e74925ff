// Every read about integrations, one `queryOptions` per operation.
import { queryOptions } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { integrationKeys } from "./keys.ts";

/** The company, with its gateway's settings. */
export const companyQuery = () =>
  queryOptions({ queryKey: integrationKeys.company(), queryFn: () => call(api.GET("/api/v1/companies/me")) });

/** The company's API keys. */
export const apiKeysQuery = () =>
  queryOptions({ queryKey: integrationKeys.apiKeys(), queryFn: () => call(api.GET("/api/v1/api-keys")) });

/** The company's webhook endpoints. */
export const webhookEndpointsQuery = () =>
  queryOptions({ queryKey: integrationKeys.endpoints(), queryFn: () => call(api.GET("/api/v1/webhook-endpoints")) });

/** An endpoint's latest delivery attempts. */
export const webhookAttemptsQuery = (endpointId: string) =>
  queryOptions({
    queryKey: integrationKeys.attempts(endpointId),
    queryFn: () =>
      call(api.GET("/api/v1/webhook-endpoints/{id}/attempts", {
        params: { path: { id: endpointId }, query: { limit: 20 } },
      })),
  });

/** A page of the gateway's webhook log. */
export const webhookEventsQuery = (cursor: string | undefined) =>
  queryOptions({
    queryKey: integrationKeys.eventsPage(cursor),
    queryFn: () => call(api.GET("/api/v1/webhook-events", { params: { query: { cursor, limit: 20 } } })),
  });

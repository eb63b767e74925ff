// The query keys of integrations: the company (its gateway), API keys, webhook endpoints and the gateway's webhook log.
export const integrationKeys = {
  company: () => ["company"] as const,
  apiKeys: () => ["api-keys"] as const,
  endpoints: () => ["webhook-endpoints"] as const,
  attempts: (endpointId: string) => ["webhook-attempts", endpointId] as const,
  /** Every page of the gateway's webhook log. */
  events: () => ["webhook-events"] as const,
  eventsPage: (cursor: string | undefined) => ["webhook-events", cursor] as const,
};

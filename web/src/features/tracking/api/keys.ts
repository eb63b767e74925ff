// The query keys of the recipient's tracking page.
export const trackingKeys = {
  view: (token: string) => ["track", token] as const,
  /** The path this page has seen the driver take (its own observations, kept in the cache). */
  path: (token: string) => ["track-path", token] as const,
};

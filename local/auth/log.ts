// One JSON line per event. Callers pass ids and outcomes only: never a
// password, an access token or a refresh token.
export function log(event: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), service: "auth", event, ...fields }));
}

// One JSON line per event, in the shape the other local services use. Callers
// pass topics, roles and reasons; never a token.
export function log(event: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), service: "realtime", event, ...fields }));
}

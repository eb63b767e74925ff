// Neutral code (common/): whether an error says the database is out of reach,
// for the Edge Functions (a 503 to try again) and the local PostgREST (its
// PGRST000) alike.

/**
 * Codes of a database we cannot reach or lost: postgres.js's own, the socket
 * errors of Node and of Deno's node:net (code), and Deno's native errors (name).
 */
const CONNECTION_ERRORS = new Set([
  // postgres.js
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  // sockets
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTCONN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ERR_SOCKET_CLOSED",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_WRITE_AFTER_END",
  // Deno
  "ConnectionRefused",
  "ConnectionReset",
  "ConnectionAborted",
  "NotConnected",
  "BrokenPipe",
  "TimedOut",
]);

/** A SQLSTATE that says the server went away or is going away: admin/crash shutdown, or class 08. */
function connectionSqlState(code: string): boolean {
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300";
}

export function isConnectionError(error: unknown): boolean {
  const { code, name, severity } = (error ?? {}) as { code?: unknown; name?: unknown; severity?: unknown };
  if (typeof code === "string" && CONNECTION_ERRORS.has(code)) return true;
  if (typeof code === "string" && severity && connectionSqlState(code)) return true;
  return typeof name === "string" && CONNECTION_ERRORS.has(name);
}

// Starts the whole local stack (local/start.ts) on free ports with a fresh data
// directory, as tests/setup/global.ts does for vitest (tests/support/stack.ts),
// with its built-in gateway, routing, postcode and geocoding simulators and no map tiles (nothing
// leaves the machine). The stack builds web/dist first when it is out of date.
import { resolve } from "node:path";
import { privateDir, startOwnStack } from "../support/stack.ts";

export const PLATFORM_WEBHOOK_SECRET = "e2e-platform-webhook-secret";

export default async function globalSetup() {
  const dataDir = privateDir("delivery-platform-e2e-");
  const stack = await startOwnStack({
    dataDir,
    logFile: resolve(dataDir, "stack.log"),
    env: { TILE_URL: "", GATEWAY_PLATFORM_WEBHOOK_SECRET: PLATFORM_WEBHOOK_SECRET },
  });
  const build = /Web app \(panel\): \S+\s+\(([^)]*)\)/.exec(stack.output())?.[1];
  console.log(`local stack at ${stack.apiUrl} (web app: ${build})`);
  process.env.E2E_BASE_URL = stack.apiUrl;
  process.env.E2E_PLATFORM_WEBHOOK_SECRET = PLATFORM_WEBHOOK_SECRET;
  // For a setup the API cannot do at its scale without tripping its own limits (board.spec.ts: 60 drivers' positions
  // at once, where 60 sign-ins would empty the identity provider's per-address bucket for the journeys after it).
  process.env.E2E_DB_URL = stack.dbUrl;
  return () => stack.stop();
}

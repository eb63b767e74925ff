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
  return () => stack.stop();
}

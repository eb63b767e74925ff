import { defineConfig } from "vitest/config";

// What every project shares. The global setup (one local stack and one set of external-service fakes)
// is the root config's, so it runs once per `vitest run` whichever projects run.
const shared = {
  testTimeout: 30_000,
  hookTimeout: 120_000,
  // realtime-js needs a global WebSocket, which Node 20 has only behind a flag.
  execArgv: typeof WebSocket === "undefined" ? ["--experimental-websocket"] : [],
};

export default defineConfig({
  test: {
    globalSetup: ["tests/setup/global.ts"],
    // Files run one after another so that a test making a fake fail or go down affects only itself.
    fileParallelism: false,
    // Tests by kind (`npm run test:api -- --project platform` runs one side): the product through its
    // API (tests/api/<domain>/), the local stand-ins of Supabase's services (tests/platform/<service>/),
    // and the web app's pure rules (tests/web/).
    projects: [
      { test: { ...shared, name: "api", include: ["tests/api/**/*.test.ts"] } },
      { test: { ...shared, name: "platform", include: ["tests/platform/**/*.test.ts"] } },
      { test: { ...shared, name: "web", include: ["tests/web/**/*.test.ts"] } },
    ],
  },
});

import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/setup/global.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // One local stack and one set of external-service fakes serve every file;
    // files run one after another so that a test making a fake fail or go
    // down affects only itself.
    fileParallelism: false,
    // realtime-js needs a global WebSocket, which Node 20 has only behind a flag.
    execArgv: typeof WebSocket === "undefined" ? ["--experimental-websocket"] : [],
  },
});

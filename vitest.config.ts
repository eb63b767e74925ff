import { defineConfig } from "vitest/config";

// What every project shares. The global setup (one local stack and one set of external-service fakes)
// is the root config's, so it runs once per `vitest run` whichever projects run.
const shared = {
  testTimeout: 30_000,
  hookTimeout: 120_000,
  // realtime-js needs a global WebSocket, which Node 20 has only behind a flag.
  execArgv: typeof WebSocket === "undefined" ? ["--experimental-websocket"] : [],
};

// The files that start (and kill) a stack of their own and never touch the shared one: the projects
// `api-own-stack` and `platform-own-stack`, which need no global stack (tests/setup/global.ts).
const ownStack = {
  api: [
    "tests/api/cash/cash-day-under-kill.test.ts",
    "tests/api/deliveries/import-job-killed.test.ts",
    "tests/api/edge/faults-database.test.ts",
    "tests/api/routes/plan-job-worker-killed.test.ts",
  ],
  platform: [
    "tests/platform/auth/auth-signup.test.ts",
    "tests/platform/auth/project-signing-keys.test.ts",
    "tests/platform/realtime/realtime-private-only.test.ts",
    "tests/platform/stack/faults-process.test.ts",
  ],
};

export default defineConfig({
  test: {
    globalSetup: ["tests/setup/global.ts"],
    // Files run one after another so that a test making a fake fail or go down affects only itself.
    // `npm run test:api` (tests/run-api.sh) runs two `vitest run`s at once, each with a stack and fakes of
    // its own: the api files in one, the platform's and those with stacks of their own in the other.
    fileParallelism: false,
    // Tests by kind (`npm run test:api -- --project 'platform*'` runs one side): the product through its
    // API (tests/api/<domain>/), the local stand-ins of Supabase's services (tests/platform/<service>/),
    // and the web app's pure rules (tests/web/).
    projects: [
      { test: { ...shared, name: "api", include: ["tests/api/**/*.test.ts"], exclude: ownStack.api } },
      { test: { ...shared, name: "api-own-stack", include: ownStack.api } },
      {
        test: { ...shared, name: "platform", include: ["tests/platform/**/*.test.ts"], exclude: ownStack.platform },
      },
      { test: { ...shared, name: "platform-own-stack", include: ownStack.platform } },
      { test: { ...shared, name: "web", include: ["tests/web/**/*.test.ts"] } },
    ],
  },
});

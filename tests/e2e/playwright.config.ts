// Playwright drives Debian's chromium, headless, against a local stack of its
// own (global-setup.ts). Journeys share state, so one worker runs them in order
// (files in alphabetical order: journeys.spec.ts first, on a fresh stack).
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testDir: ".",
  testMatch: /.*\.spec\.ts$/,
  globalSetup: "./global-setup.ts",
  timeout: 90_000,
  expect: { timeout: 10_000 },
  workers: 1,
  fullyParallel: false,
  reporter: [["list"]],
  outputDir: "../../test-results/e2e",
  use: {
    headless: true,
    viewport: { width: 1280, height: 860 },
    // The app's first language; the English journeys (locale.spec.ts) open English browsers of their own. The
    // browser's clock is in another zone than the company's, so dates on screen prove they are São Paulo's.
    locale: "pt-BR",
    timezoneId: "Europe/Lisbon",
    trace: "off",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      // Playwright launches each browser with a fresh temporary --user-data-dir.
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});

#!/bin/sh
# `npm run test:web`: the browser journeys. Debian's chromium is the browser
# (installed here when missing, as the pgTAP runner installs pgTAP); Playwright
# never downloads one.
set -e
if [ ! -x /usr/bin/chromium ]; then
  echo "Installing Debian's chromium for the browser tests..."
  if [ "$(id -u)" = 0 ]; then
    (apt-get install -y chromium || (apt-get update && apt-get install -y chromium)) >/dev/null
  else
    echo "chromium is missing: run 'apt-get install chromium' as root" >&2
    exit 1
  fi
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# supabase-js's Realtime client in the test process (presence.spec.ts) needs a global WebSocket, which Node 20 has
# only behind a flag (vitest.config.ts turns it on the same way).
if node -e "process.exit(typeof WebSocket === 'undefined' ? 0 : 1)"; then
  export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--experimental-websocket"
fi
exec npx playwright test -c tests/e2e/playwright.config.ts "$@"

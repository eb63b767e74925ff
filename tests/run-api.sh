#!/bin/sh
# `npm run test:api`: the vitest files in two `vitest run`s at once, each with a local stack and fakes of its own
# (tests/setup/global.ts), so that one's waits (a budget run out, a stack of a test's own starting) overlap the
# other's work. Within each, files run one after another (vitest.config.ts says why):
#   1. the product through its API (project `api`) and the web app's rules (`web`);
#   2. the local platform (`platform`) and the files that start stacks of their own (`*-own-stack`), its lines
#      prefixed with "[2] ".
# With arguments (`npm run test:api -- --project 'platform*'`, a file's path), one `vitest run` with them; with
# TEST_API_SERIAL=1, one `vitest run` of every file, one after another (twice the time, half the load).
set -u
if [ $# -gt 0 ] || [ "${TEST_API_SERIAL:-}" = 1 ]; then exec npx vitest run "$@"; fi
rc=$(mktemp)
echo 1 >"$rc"
{
  npx vitest run --project platform --project platform-own-stack --project api-own-stack 2>&1
  echo $? >"$rc"
} | sed -u 's/^/[2] /' &
second=$!
npx vitest run --project api --project web
first=$?
wait "$second"
status=$(cat "$rc")
rm -f "$rc"
echo "test:api: api and web exited $first; platform and own stacks exited $status"
[ "$first" -eq 0 ] && [ "$status" -eq 0 ]

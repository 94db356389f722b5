#!/usr/bin/env bash
# Runs Capstan's main job on a fresh machine: installs the npm packages, builds, and starts
# `capstan server` on the embedded LevelDB store. Extra arguments go to `capstan server`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build
exec node dist/src/cli/main.js server "$@"

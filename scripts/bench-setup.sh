#!/usr/bin/env bash
# scripts/bench-setup.sh — installs what the benchmark (not the tests) needs
# besides the Rust workspace: graphile-worker 0.17.3 in bench/node/.
#
# Needs Node.js and npm (node >= 14). Fast when already installed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../bench/node"

WANT=0.17.3
for tool in node npm; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "bench-setup: $tool not found; install Node.js (apt-get install nodejs npm)" >&2
        exit 1
    }
done

have=$(node -p "try { require('./node_modules/graphile-worker/package.json').version } catch (e) { '' }" 2>/dev/null || true)
if [[ $have == "$WANT" ]]; then
    echo "bench-setup: graphile-worker $have already in bench/node/node_modules"
    exit 0
fi

echo "bench-setup: installing graphile-worker $WANT into bench/node"
if [[ -f package-lock.json ]]; then
    npm ci --no-audit --no-fund
else
    npm install --no-audit --no-fund --save-exact
fi

have=$(node -p "require('./node_modules/graphile-worker/package.json').version")
[[ $have == "$WANT" ]] || { echo "bench-setup: got graphile-worker $have, want $WANT" >&2; exit 1; }
echo "bench-setup: graphile-worker $have ready (bench/node/node_modules/.bin/graphile-worker)"

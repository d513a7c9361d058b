#!/usr/bin/env bash
# scripts/up.sh — the project's start command: everything on one machine.
#
# Runs `scripts/setup.sh run` (only what running needs: PostgreSQL, Redis,
# the engines; none of the test tools), creates the database if missing, then
# `tolk up` (API + worker + scheduler in one process) in release mode.
# Extra arguments go to `tolk up`, e.g.:  scripts/up.sh --concurrency 4
#
# Defaults (override through the environment):
#   DATABASE_URL      postgres://postgres@127.0.0.1:5432/tolk
#   TOLK_LISTEN       127.0.0.1:8080
#   REDIS_URL         redis://127.0.0.1:6379
#   TOLK_OBJECT_STORE ./data/objects (the binary's own default)
#   CARGO_TARGET_DIR  ~/.cache/tolk-target
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh run

export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/tolk}"
export TOLK_LISTEN="${TOLK_LISTEN:-127.0.0.1:8080}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tolk-target}"
export SQLX_OFFLINE="${SQLX_OFFLINE:-true}"

# Create the database named in DATABASE_URL when it does not exist yet.
# The URL's path is the database; we connect to the "postgres" one to check.
ensure_database() {
    local url="$DATABASE_URL" base query db admin
    base="${url%%\?*}"
    query=""
    [[ $url == *\?* ]] && query="?${url#*\?}"
    db="${base##*/}"
    if [[ -z $db || $db == "$base" || $base != postgres*://*/* ]]; then
        echo "up: DATABASE_URL has no database name; not creating one" >&2
        return 0
    fi
    admin="${base%/*}/postgres$query"
    local exists
    if ! exists=$(psql -w -X -q -At "$admin" \
        -c "select 1 from pg_database where datname = '$(printf '%s' "$db" | sed "s/'/''/g")'" 2>/dev/null); then
        echo "up: cannot reach the server of DATABASE_URL to check for database '$db'; going on" >&2
        return 0
    fi
    if [[ $exists != 1 ]]; then
        echo "up: creating database $db"
        psql -w -X -q "$admin" -c "create database \"${db//\"/\"\"}\""
    fi
}
ensure_database

echo "up: starting tolk on http://$TOLK_LISTEN"
exec cargo run --release --bin tolk -- up "$@"

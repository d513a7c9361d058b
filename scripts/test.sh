#!/usr/bin/env bash
# scripts/test.sh — the project's test command (CI runs it through .ci/run).
#
#   1. scripts/setup.sh   (packages, PostgreSQL, Redis, s3s-fs)
#   2. cargo fmt --all -- --check
#   3. cargo clippy --workspace --all-targets -- -D warnings
#   4. cargo test --workspace
#
# Extra arguments go to `cargo test` (e.g. scripts/test.sh -- --nocapture).
# Build output goes to $CARGO_TARGET_DIR, by default ~/.cache/tolk-target, so
# repeated runs (and CI runs in fresh clones) reuse earlier builds.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "setup (scripts/setup.sh)"
bash scripts/setup.sh

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tolk-target}"
export SQLX_OFFLINE=true
export TOLK_TEST_DATABASE_URL="${TOLK_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
# Where the tests find their helpers: s3s-fs (installed by setup.sh) and a
# python3 that can `import docx, authlib, requests`. PATH's first python3 may be a pyenv/venv one
# that does not see Debian's python3-docx: then a shim folder puts Debian's
# python3 first for the test run (TOLK_TEST_PYTHON names it too).
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$cargo_bin:"*) ;; *) export PATH="$cargo_bin:$PATH" ;; esac
export TOLK_S3S_FS="${TOLK_S3S_FS:-$(command -v s3s-fs)}"
if ! python3 -c 'import docx, authlib, requests' >/dev/null 2>&1 &&
    /usr/bin/python3 -c 'import docx, authlib, requests' >/dev/null 2>&1; then
    shim="${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-bin"
    mkdir -p "$shim"
    ln -sfn /usr/bin/python3 "$shim/python3"
    export PATH="$shim:$PATH"
fi
export TOLK_TEST_PYTHON="${TOLK_TEST_PYTHON:-$(command -v python3)}"
# The docx filter's tests write their Word files with python-docx; a folder of
# more .docx files runs in addition when TOLK_FIXTURES_DIR names one (its docx/).
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
mkdir -p "$CARGO_TARGET_DIR"
echo "CARGO_TARGET_DIR=$CARGO_TARGET_DIR"

step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace "$@"

step "all checks passed"

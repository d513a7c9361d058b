#!/usr/bin/env bash
# scripts/test.sh — the project's test command (CI runs it through .ci/run).
#
#   1. scripts/setup.sh test   (what running needs plus the test tools:
#      packages, PostgreSQL, Redis, s3s-fs, chromium, the tests' Python)
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

# The tests' Python (TOLK_TEST_PYTHON; tests/*.rs and formats' docx tests run
# it): a virtual environment on Debian's /usr/bin/python3 that sees Debian's
# python3-docx & co., with whatever they lack pip-installed; setup.sh creates
# it and fails, naming the module, when one the tests import is missing. A
# TOLK_TEST_PYTHON set by the caller is checked the same way, never changed.
export TOLK_TEST_VENV="${TOLK_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-venv}"
export TOLK_TEST_PYTHON="${TOLK_TEST_PYTHON:-$TOLK_TEST_VENV/bin/python}"
# The tests' npm packages (node-oidc-provider), installed there by setup.sh.
export TOLK_TEST_NODE="${TOLK_TEST_NODE:-${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-node}"

step "setup (scripts/setup.sh test)"
bash scripts/setup.sh test

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tolk-target}"
export SQLX_OFFLINE=true
export TOLK_TEST_DATABASE_URL="${TOLK_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
# s3s-fs (installed by setup.sh into ~/.cargo/bin).
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
case ":$PATH:" in *":$cargo_bin:"*) ;; *) export PATH="$cargo_bin:$PATH" ;; esac
export TOLK_S3S_FS="${TOLK_S3S_FS:-$(command -v s3s-fs)}"
echo "TOLK_TEST_PYTHON=$TOLK_TEST_PYTHON"
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

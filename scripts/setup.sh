#!/usr/bin/env bash
# scripts/setup.sh — make this machine ready to run (and test) Tolk.
#
#   scripts/setup.sh run    what running Tolk needs (scripts/up.sh)
#   scripts/setup.sh test   that plus what only the tests need (scripts/test.sh);
#                           the default when no mode is given
#
# Idempotent and fast when everything is already there: it checks first and
# only installs or starts what is missing (apt-get update runs only when some
# package is missing, then once).
#
# run:
#   - Debian packages (RUN_PACKAGES below): PostgreSQL (with contrib: pg_trgm,
#     hstore), Redis, Apertium and the language pairs eng-spa, es-pt, fr-es,
#     eng-cat, the hunspell dictionaries of /v2/write, the speech engines
#     espeak-ng (text to speech) and pocketsphinx with its en-us model
#     (recognition of voice jobs), lame (MP3 streams), LibreOffice's writer,
#     calc and impress without GUI (documents delivered as PDF or Word), and a
#     C toolchain for
#     the few -sys crates (gcc, libc6-dev; pkg-config, libssl-dev, libxml2-dev,
#     libxmlsec1-dev and libclang-dev for the SAML service provider).
#   - PostgreSQL running on 127.0.0.1:5432, user postgres, no password
#     (trust on loopback: a dev/CI set-up, never a production one).
#   - Redis running on 127.0.0.1:6379.
#   - cargo (the Rust toolchain must already be there).
# test, in addition:
#   - Debian packages (TEST_PACKAGES below): apertium-apy (the engine tests
#     start it), flac and vorbis-tools (the voice tests encode FLAC/OGG inputs),
#     chromium, chromium-driver and fonts-dejavu-core (the auth browser tests),
#     poppler-utils and qpdf (read and check the PDFs the platform makes),
#     texlive-latex-base (pdfTeX makes PDFs for the PDF filter's tests),
#     python3, python3-venv and the Python modules of TEST_PYTHON_MODULES.
#   - Node.js and npm (Debian's nodejs and npm when node is missing), and
#     the npm packages of TEST_NODE_PACKAGES in $TOLK_TEST_NODE (the OAuth
#     sign-in tests start node-oidc-provider as the upstream identity provider).
#   - rustfmt and clippy (rustup components).
#   - s3s-fs (a small S3-compatible server on a folder) in ~/.cargo/bin, for
#     the object-store tests.
#   - The tests' Python: a virtual environment on Debian's /usr/bin/python3
#     with --system-site-packages (so it sees python3-docx & co.), in
#     $TOLK_TEST_VENV; modules that still do not import are pip-installed
#     into it. Every module of TEST_PYTHON_MODULES must import, else it fails
#     and names them. When TOLK_TEST_PYTHON names another interpreter, that
#     one is only checked, never changed.
#
# Environment:
#   TOLK_NO_INSTALL=1   only check and report what is missing; change nothing.
#                       Exit status 0 when all is present, 1 otherwise.
#   TOLK_PG_PORT        PostgreSQL port to check (default 5432)
#   TOLK_REDIS_PORT     Redis port to check (default 6379)
#   TOLK_TEST_VENV      the tests' virtual environment
#                       (default ${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-venv)
#   TOLK_TEST_PYTHON    the tests' interpreter (default $TOLK_TEST_VENV/bin/python)
#   TOLK_TEST_NODE      the tests' npm packages folder
#                       (default ${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-node)
set -euo pipefail

MODE="${1:-test}"
case $MODE in
    run | test) ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        printf 'setup: unknown mode %s (usage: %s [run|test])\n' "$MODE" "$0" >&2
        exit 2
        ;;
esac

PG_PORT="${TOLK_PG_PORT:-5432}"
REDIS_PORT="${TOLK_REDIS_PORT:-6379}"
NO_INSTALL="${TOLK_NO_INSTALL:-0}"
# s3s-fs 0.15 and later need rustc 1.96; 0.14.1 builds with 1.92+.
S3S_FS_VERSION="${TOLK_S3S_FS_VERSION:-0.14.1}"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
TEST_VENV="${TOLK_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-venv}"
TEST_NODE="${TOLK_TEST_NODE:-${XDG_CACHE_HOME:-$HOME/.cache}/tolk-test-node}"
# npm packages the tests run (name@exact-version):
TEST_NODE_PACKAGES=(
    oidc-provider@8.8.1   # node-oidc-provider: upstream OpenID provider of the OAuth sign-in tests
    deepl-node@1.28.0     # DeepL's official Node.js client, run against the API
    xliff@6.4.0           # locize's XLIFF 1.2/2.0 writer and reader, on both sides of the XLIFF filter
)

# Debian packages named exactly (checked with dpkg-query). PostgreSQL is
# handled apart: any server version Debian ships will do.
#
# What running Tolk needs (setup.sh run, scripts/up.sh).
RUN_PACKAGES=(
    ca-certificates gcc libc6-dev             # cargo builds tolk; -sys crates
    pkg-config libssl-dev libxml2-dev libxmlsec1-dev libclang-dev
                                              # the SAML service provider (samael binds libxmlsec1)
    redis-server
    apertium apertium-eng-spa apertium-es-pt apertium-fr-es apertium-eng-cat
    # More Apertium pairs (README "Languages" lists what they reach):
    apertium-en-gl apertium-eo-en apertium-hbs-eng apertium-hbs-slv
    apertium-spa-ita apertium-spa-ast apertium-oc-es apertium-spa-cat
    apertium-es-gl apertium-es-it apertium-cat-ita apertium-fra-cat apertium-por-cat
    apertium-es-ro apertium-eu-en apertium-isl-eng apertium-mkd-eng apertium-mk-en
    apertium-mkd-bul apertium-afr-nld apertium-swe-dan apertium-swe-nor
    apertium-dan-nor apertium-nno-nob apertium-rus-ukr
    hunspell-en-us hunspell-es                # /v2/write spelling dictionaries
    espeak-ng                                 # text to speech
    pocketsphinx pocketsphinx-en-us           # recognition in voice jobs
    lame                                      # MP3 output of TTS streams
    libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui
    fonts-dejavu-core                         # output_format pdf/docx: LibreOffice converts
    fonts-liberation2                         # translated PDFs are set in these (and DejaVu)
    tesseract-ocr tesseract-ocr-eng tesseract-ocr-spa tesseract-ocr-fra
    tesseract-ocr-por tesseract-ocr-cat tesseract-ocr-ita
                                              # reads the text of images (their source languages)
)
# What only the tests need, on top of RUN_PACKAGES (setup.sh test,
# scripts/test.sh). The Python modules' packages come from
# TEST_PYTHON_MODULES below.
TEST_PACKAGES=(
    apertium-apy                              # the engine tests start it (and tolk-bench)
    flac vorbis-tools                         # the voice tests encode FLAC/OGG inputs
    chromium chromium-driver fonts-dejavu-core # the auth browser tests
    tesseract-ocr-ara                         # reads the Arabic painted over a picture
    xmlsec1                                   # pysaml2's identity provider signs with it (SAML tests)
    python3 python3-venv                      # the tests' virtual environment
    poppler-utils                             # pdftotext, pdfinfo, pdffonts read the PDFs made
    qpdf                                      # checks the structure of translated PDFs
    texlive-latex-base                        # pdfTeX writes PDFs for the PDF filter's tests
)
# Every Python module the tests import beyond the standard library (tests/*.rs
# snippets run with TOLK_TEST_PYTHON, formats/testdata/make_docx.py):
#   "module  Debian-package  PyPI-name"
TEST_PYTHON_MODULES=(
    "docx                                 python3-docx         python-docx"
    "docx.oxml                            python3-docx         python-docx"
    "lxml.etree                           python3-lxml         lxml"
    "translate.storage.tmx                python3-translate    translate-toolkit"
    "translate.convert.po2tmx             python3-translate    translate-toolkit"
    "requests                             python3-requests     requests"
    "authlib.integrations.requests_client python3-authlib      Authlib"
    "authlib.jose                         python3-authlib      Authlib"
    "cryptography                         python3-cryptography cryptography"  # authlib.jose RS256
    "openpyxl                             python3-openpyxl     openpyxl"
    "odf.opendocument                     python3-odf          odfpy"
    "srt                                  python3-srt          srt"
    "webvtt                               python3-webvtt       webvtt-py"
    "markdown                             python3-markdown     Markdown"
    "yaml                                 python3-yaml         PyYAML"        # reads YAML in the filter's tests
    "reportlab                            python3-reportlab    reportlab"     # writes PDFs for the PDF filter's tests
    "PIL                                  python3-pil          pillow"        # images in the PDF tests' documents
    "pptx                                 -                    python-pptx"   # not packaged by Debian
    "mcp.client.auth                      -                    mcp"           # the MCP Python SDK (OAuth client tests)
    "jproperties                          -                    jproperties"   # reads .properties in the filter's tests
    "saml2.server                         python3-pysaml2      pysaml2"       # the SAML sign-in tests' identity provider
    "deepl                                -                    deepl==1.32.0" # DeepL's official Python client, run against the API
    "pyicumessageformat                   -                    pyicumessageformat" # parses ICU messages the XLIFF filter writes
    "kubernetes_validate                  -                    kubernetes-validate" # checks deploy/kubernetes against the schemas
    "websocket                            python3-websocket    websocket-client"    # the charactr SDK's WebSocket client
    # The voice interface's official Python SDK (TTS streams read at its pace).
    # Without its pins (requests==2.28.2 would break the DeepL client's >=2.32.5).
    "requests_toolbelt                    python3-requests-toolbelt requests-toolbelt"
    "charactr_api                         -                    charactr-api-sdk==2.1.0!no-deps"
)

# The packages this mode installs.
wanted_packages() {
    printf '%s\n' "${RUN_PACKAGES[@]}"
    [[ $MODE == test ]] || return 0
    printf '%s\n' "${TEST_PACKAGES[@]}"
    local line pkg
    for line in "${TEST_PYTHON_MODULES[@]}"; do
        read -r _ pkg _ <<<"$line"
        [[ $pkg == - ]] || printf '%s\n' "$pkg"
    done | sort -u
}

log() { printf 'setup: %s\n' "$*"; }
warn() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

missing=()   # what TOLK_NO_INSTALL=1 reports

# --- privileges ---------------------------------------------------------
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        SUDO=(__no_root__)
    fi
fi

as_root() {
    if [[ ${SUDO[0]:-} == __no_root__ ]]; then
        die "need root for: $* (not root and no sudo)"
    fi
    "${SUDO[@]}" "$@"
}

have_systemd() { [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; }

# --- 1. Debian packages -------------------------------------------------
# Prints the packages of "$@" that are not installed.
not_installed() {
    local installed
    installed=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
        awk '$NF == "installed" { print $1 }' || true)
    local p
    for p in "$@"; do
        grep -qxF "$p" <<<"$installed" || printf '%s\n' "$p"
    done
}

# True when some PostgreSQL server with the contrib extensions is installed.
postgres_installed() {
    local c
    for c in /usr/share/postgresql/*/extension/pg_trgm.control; do
        [[ -e $c ]] || continue
        local v
        v=$(basename "$(dirname "$(dirname "$c")")")
        [[ -e /usr/share/postgresql/$v/extension/hstore.control ]] &&
            [[ -x /usr/lib/postgresql/$v/bin/postgres ]] && return 0
    done
    return 1
}

ensure_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        local all
        mapfile -t all < <(wanted_packages)
        warn "not a Debian-like system (no dpkg-query): install by hand PostgreSQL (+contrib) and the equivalents of: ${all[*]}"
        missing+=("debian-packages(unknown)")
        return
    fi
    local wanted need
    mapfile -t wanted < <(wanted_packages)
    mapfile -t need < <(not_installed "${wanted[@]}")
    if ! postgres_installed || ! command -v pg_isready >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1; then
        need+=(postgresql postgresql-contrib)
    fi
    if command -v redis-server >/dev/null 2>&1 && ! command -v redis-cli >/dev/null 2>&1; then
        need+=(redis-tools)
    fi
    if [[ ${#need[@]} -eq 0 ]]; then
        log "packages ($MODE): all present"
        return
    fi
    local cmd="DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${need[*]}"
    if [[ $NO_INSTALL == 1 ]]; then
        missing+=("${need[@]}")
        warn "packages missing: ${need[*]}"
        warn "  install with: apt-get update && $cmd"
        return
    fi
    if [[ ${SUDO[0]:-} == __no_root__ ]]; then
        warn "packages missing: ${need[*]}"
        warn "not root and sudo is absent; as root, run:"
        warn "  apt-get update && $cmd"
        exit 1
    fi
    log "installing: ${need[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
}

# --- 2. PostgreSQL -----------------------------------------------------
pg_ready() { pg_isready -q -h 127.0.0.1 -p "$PG_PORT" >/dev/null 2>&1; }

# psql as postgres over TCP without a password (never prompts).
pg_trust_ok() {
    PGPASSWORD='' PGCONNECT_TIMEOUT=5 psql -w -X -q -At \
        "postgresql://postgres@127.0.0.1:$PG_PORT/postgres" -c 'select 1' >/dev/null 2>&1
}

# "VERSION CLUSTER" of the cluster configured on $PG_PORT (Debian's postgresql-common).
pg_cluster() {
    command -v pg_lsclusters >/dev/null 2>&1 || return 1
    local line
    line=$(pg_lsclusters -h 2>/dev/null | awk -v p="$PG_PORT" '$3 == p { print $1, $2; exit }')
    [[ -n $line ]] && printf '%s\n' "$line"
}

pg_start() {
    local ver name cl
    if ! cl=$(pg_cluster); then
        command -v pg_lsclusters >/dev/null 2>&1 ||
            die "PostgreSQL is not answering on 127.0.0.1:$PG_PORT and pg_lsclusters is missing; start it by hand"
        if [[ -n $(pg_lsclusters -h 2>/dev/null) ]]; then
            pg_lsclusters >&2 || true
            die "no PostgreSQL cluster is configured on port $PG_PORT (see above); start or create one by hand"
        fi
        # A server without any cluster (e.g. create_main_cluster = false).
        ver=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
        [[ -n $ver ]] || die "no PostgreSQL server under /usr/lib/postgresql"
        log "creating PostgreSQL cluster $ver/main on port $PG_PORT"
        as_root pg_createcluster --port "$PG_PORT" "$ver" main
        cl="$ver main"
    fi
    read -r ver name <<<"$cl"
    log "starting PostgreSQL $ver/$name"
    if have_systemd; then
        as_root systemctl start "postgresql@$ver-$name" || true
    fi
    pg_ready || as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start || true
}

# Puts trust rules for loopback and the local socket first in pg_hba.conf.
pg_trust_loopback() {
    local cl ver name hba
    cl=$(pg_cluster) || die "PostgreSQL answers on $PG_PORT but pg_lsclusters finds no cluster; set trust auth by hand"
    read -r ver name <<<"$cl"
    hba="/etc/postgresql/$ver/$name/pg_hba.conf"
    [[ -f $hba ]] || die "no $hba; allow user postgres without a password on 127.0.0.1 by hand"
    if grep -q '^# tolk-setup: begin' "$hba"; then
        die "$hba already has the tolk trust rules but postgres@127.0.0.1 still needs a password; check it by hand"
    fi
    log "configuring trust auth for loopback in $hba (backup: $hba.tolk-bak; dev/CI only)"
    as_root cp -p "$hba" "$hba.tolk-bak"
    local tmp
    tmp=$(mktemp)
    {
        echo '# tolk-setup: begin — dev/CI only: postgres without a password on this machine'
        echo 'local   all   all                  trust'
        echo 'host    all   all   127.0.0.1/32   trust'
        echo 'host    all   all   ::1/128        trust'
        echo '# tolk-setup: end'
        as_root cat "$hba"
    } >"$tmp"
    as_root tee "$hba" <"$tmp" >/dev/null
    rm -f "$tmp"
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" reload
    sleep 1
}

ensure_postgres() {
    if ! command -v pg_isready >/dev/null 2>&1; then
        missing+=("postgresql(not installed)")
        warn "PostgreSQL client tools not installed"
        return
    fi
    if ! pg_ready; then
        if [[ $NO_INSTALL == 1 ]]; then
            missing+=("postgresql(not running on 127.0.0.1:$PG_PORT)")
            warn "PostgreSQL is not answering on 127.0.0.1:$PG_PORT"
            return
        fi
        pg_start
        local i
        for ((i = 0; i < 60; i++)); do
            pg_ready && break
            sleep 0.5
        done
        pg_ready || die "PostgreSQL did not come up on 127.0.0.1:$PG_PORT (see /var/log/postgresql/)"
    fi
    if ! pg_trust_ok; then
        if [[ $NO_INSTALL == 1 ]]; then
            missing+=("postgresql(trust auth for postgres@127.0.0.1)")
            warn "PostgreSQL runs but user postgres cannot log in on 127.0.0.1 without a password"
            return
        fi
        pg_trust_loopback
        pg_trust_ok || die "user postgres still cannot connect to 127.0.0.1:$PG_PORT without a password"
    fi
    log "postgresql: ready on 127.0.0.1:$PG_PORT (user postgres, no password)"
}

# --- 3. Redis ----------------------------------------------------------
redis_ok() { [[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; }

ensure_redis() {
    if ! command -v redis-cli >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1; then
        missing+=("redis(not installed)")
        warn "Redis not installed"
        return
    fi
    if redis_ok; then
        log "redis: ready on 127.0.0.1:$REDIS_PORT"
        return
    fi
    if [[ $NO_INSTALL == 1 ]]; then
        missing+=("redis(not running on 127.0.0.1:$REDIS_PORT)")
        warn "Redis is not answering on 127.0.0.1:$REDIS_PORT"
        return
    fi
    log "starting Redis on 127.0.0.1:$REDIS_PORT"
    if have_systemd && [[ $REDIS_PORT == 6379 ]]; then
        as_root systemctl start redis-server || true
        sleep 0.5
    fi
    if ! redis_ok; then
        local dir logfile
        if [[ $(id -u) -eq 0 ]]; then
            dir=/var/lib/redis
            logfile=/var/log/redis/ci.log
        else
            dir="${XDG_CACHE_HOME:-$HOME/.cache}/tolk-redis"
            logfile="$dir/redis.log"
        fi
        mkdir -p "$dir" "$(dirname "$logfile")"
        # Nothing is kept on disk: this Redis holds only rate-limit counters and caches.
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" \
            --save "" --appendonly no --dir "$dir" --logfile "$logfile"
    fi
    local i
    for ((i = 0; i < 40; i++)); do
        redis_ok && break
        sleep 0.25
    done
    redis_ok || die "Redis did not come up on 127.0.0.1:$REDIS_PORT"
    log "redis: ready on 127.0.0.1:$REDIS_PORT"
}

# --- 4. Rust tools, and s3s-fs (test) ------------------------------------
ensure_rust() {
    if ! command -v cargo >/dev/null 2>&1; then
        missing+=("cargo")
        warn "cargo not found: install the Rust toolchain (rustup) and put ~/.cargo/bin on PATH"
        [[ $NO_INSTALL == 1 ]] && return
        exit 1
    fi
    # fmt and clippy only serve the test command's checks.
    [[ $MODE == test ]] || return 0
    local comp=()
    cargo fmt --version >/dev/null 2>&1 || comp+=(rustfmt)
    cargo clippy --version >/dev/null 2>&1 || comp+=(clippy)
    if [[ ${#comp[@]} -gt 0 ]]; then
        if [[ $NO_INSTALL == 1 ]]; then
            missing+=("${comp[@]}")
            warn "rust components missing: ${comp[*]} (rustup component add ${comp[*]})"
            return
        fi
        log "adding rust components: ${comp[*]}"
        rustup component add "${comp[@]}"
    fi
}

ensure_s3s_fs() {
    if [[ -x $CARGO_BIN/s3s-fs ]] || command -v s3s-fs >/dev/null 2>&1; then
        log "s3s-fs: $(command -v s3s-fs 2>/dev/null || echo "$CARGO_BIN/s3s-fs")"
        return
    fi
    if [[ $NO_INSTALL == 1 ]] || ! command -v cargo >/dev/null 2>&1; then
        missing+=("s3s-fs")
        warn "s3s-fs missing: cargo install s3s-fs --version $S3S_FS_VERSION --features binary --locked"
        return
    fi
    log "installing s3s-fs $S3S_FS_VERSION into $CARGO_BIN (one-time build, a few minutes)"
    # From outside the workspace and with cargo's own temporary target folder,
    # so neither our Cargo.lock nor the shared CARGO_TARGET_DIR is touched.
    (cd / && env -u CARGO_TARGET_DIR cargo install s3s-fs --version "$S3S_FS_VERSION" \
        --features binary --locked --quiet)
    [[ -x $CARGO_BIN/s3s-fs ]] || die "s3s-fs did not install into $CARGO_BIN"
    log "s3s-fs: $CARGO_BIN/s3s-fs"
}

# --- 5. Chromium and chromedriver (test: the auth pages' browser tests) ---
ensure_chromium() {
    local b found=()
    for b in chromium chromedriver; do
        if command -v "$b" >/dev/null 2>&1; then
            found+=("$b: $(command -v "$b")")
        else
            missing+=("$b(not on PATH)")
            warn "$b is not on PATH (apt-get install chromium chromium-driver)"
        fi
    done
    if [[ ${#found[@]} -lt 2 ]]; then
        [[ $NO_INSTALL == 1 ]] || exit 1
        return
    fi
    log "${found[0]}, ${found[1]}"
}

# --- 6. The tests' Python (test) -----------------------------------------
# PATH's python3 may be a pyenv one that does not see Debian's packages, so
# the tests get their own interpreter: a virtual environment on Debian's
# /usr/bin/python3 that also sees its site-packages (python3-docx & co.);
# what Debian does not provide is pip-installed into it.

# For each module of "$@" (after the interpreter $1) that does not import,
# prints "MODULE<TAB>error". Fails when the interpreter itself does not run.
py_missing_modules() {
    local py=$1
    shift
    "$py" - "$@" <<'PY'
import importlib, sys, warnings
warnings.simplefilter("ignore")
out, sys.stdout = sys.stdout, sys.stderr  # what a module prints is no answer
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
    except Exception as e:  # ImportError, or a module that breaks on import
        print(f"{m}\t{type(e).__name__}: {e}".replace("\n", " "), file=out)
PY
}

# The field $2 (1: module, 2: Debian package, 3: PyPI name) of
# TEST_PYTHON_MODULES for module $1.
py_module_field() {
    local line m f
    for line in "${TEST_PYTHON_MODULES[@]}"; do
        read -r m _ <<<"$line"
        if [[ $m == "$1" ]]; then
            f=$(awk -v n="$2" '{ print $n }' <<<"$line")
            printf '%s\n' "$f"
            return
        fi
    done
}

# True when $TEST_VENV works, sees the system site-packages and is built on
# interpreter $1 (same prefix and version: a Python upgrade makes a new one).
venv_ok() {
    local base=$1 want have
    [[ -x $TEST_VENV/bin/python ]] || return 1
    grep -qE '^include-system-site-packages *= *true' "$TEST_VENV/pyvenv.cfg" 2>/dev/null || return 1
    want=$("$base" -c 'import sys; print(sys.prefix, *sys.version_info[:2])' 2>/dev/null) || return 1
    have=$("$TEST_VENV/bin/python" -c 'import sys; print(sys.base_prefix, *sys.version_info[:2])' 2>/dev/null) || return 1
    [[ $want == "$have" ]]
}

ensure_test_python() {
    local venv_py="$TEST_VENV/bin/python"
    local py="${TOLK_TEST_PYTHON:-$venv_py}"
    local modules=() line m
    for line in "${TEST_PYTHON_MODULES[@]}"; do
        read -r m _ <<<"$line"
        modules+=("$m")
    done

    if [[ $py == "$venv_py" ]]; then
        local base=/usr/bin/python3
        if [[ ! -x $base ]]; then
            if ! base=$(command -v python3); then
                missing+=("python3")
                warn "no python3 (apt-get install python3 python3-venv)"
                [[ $NO_INSTALL == 1 ]] && return
                exit 1
            fi
            warn "no Debian /usr/bin/python3: the tests' environment is built on $base"
        fi
        if ! venv_ok "$base"; then
            if [[ $NO_INSTALL == 1 ]]; then
                missing+=("test-venv($TEST_VENV)")
                warn "the tests' Python environment $TEST_VENV is missing or not built on $base"
                warn "  create with: $base -m venv --system-site-packages $TEST_VENV"
                return
            fi
            log "creating the tests' Python environment $TEST_VENV on $base (--system-site-packages)"
            "$base" -m venv --clear --system-site-packages "$TEST_VENV" ||
                die "could not create $TEST_VENV with $base -m venv (apt-get install python3-venv)"
        fi
    fi

    local bad
    bad=$(py_missing_modules "$py" "${modules[@]}") ||
        die "the tests' Python $py does not run (TOLK_TEST_PYTHON)"
    if [[ -n $bad && $py == "$venv_py" && $NO_INSTALL != 1 ]]; then
        local dists=()
        mapfile -t dists < <(cut -f1 <<<"$bad" | while read -r m; do py_module_field "$m" 3; done | sort -u)
        # A name ending in `!no-deps` is installed without its dependencies.
        local with=() without=() d
        for d in "${dists[@]}"; do
            if [[ $d == *'!no-deps' ]]; then without+=("${d%'!no-deps'}"); else with+=("$d"); fi
        done
        log "pip-installing into $TEST_VENV what Debian's packages do not provide: ${dists[*]}"
        if ((${#with[@]})); then
            "$venv_py" -m pip install --quiet --disable-pip-version-check "${with[@]}" ||
                die "pip install ${with[*]} into $TEST_VENV failed"
        fi
        if ((${#without[@]})); then
            "$venv_py" -m pip install --quiet --disable-pip-version-check --no-deps "${without[@]}" ||
                die "pip install --no-deps ${without[*]} into $TEST_VENV failed"
        fi
        bad=$(py_missing_modules "$py" "${modules[@]}") || die "$py does not run"
    fi
    if [[ -n $bad ]]; then
        local names=()
        while IFS=$'\t' read -r m line; do
            names+=("$m")
            warn "the tests' Python $py cannot import $m ($line);" \
                "Debian package $(py_module_field "$m" 2), PyPI $(py_module_field "$m" 3)"
        done <<<"$bad"
        missing+=("python-modules(${names[*]} in $py)")
        if [[ $py != "$venv_py" ]]; then
            warn "TOLK_TEST_PYTHON=$py is checked, not changed: install them there, or unset TOLK_TEST_PYTHON to use $venv_py"
        fi
        [[ $NO_INSTALL == 1 ]] || die "the tests' Python $py lacks: ${names[*]}"
        return
    fi
    log "tests' python: $py ($("$py" -c 'import sys; print(sys.version.split()[0])'); imports ${modules[*]})"
}

# --- 7. Node.js and the tests' npm packages (test) ------------------------
node_packages_ok() {
    local pkg name version
    for pkg in "${TEST_NODE_PACKAGES[@]}"; do
        name=${pkg%@*}
        version=${pkg##*@}
        grep -q "\"version\": *\"$version\"" "$TEST_NODE/node_modules/$name/package.json" 2>/dev/null || return 1
    done
}

ensure_test_node() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        if [[ $NO_INSTALL == 1 || ${SUDO[0]:-} == __no_root__ ]]; then
            missing+=("nodejs" "npm")
            warn "node or npm missing (apt-get install nodejs npm)"
            return
        fi
        log "installing: nodejs npm"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm
    fi
    if ! node_packages_ok; then
        if [[ $NO_INSTALL == 1 ]]; then
            missing+=("npm(${TEST_NODE_PACKAGES[*]} in $TEST_NODE)")
            warn "  install with: npm install --prefix $TEST_NODE ${TEST_NODE_PACKAGES[*]}"
            return
        fi
        log "npm-installing into $TEST_NODE: ${TEST_NODE_PACKAGES[*]}"
        mkdir -p "$TEST_NODE"
        npm install --prefix "$TEST_NODE" --no-audit --no-fund --loglevel=error \
            "${TEST_NODE_PACKAGES[@]}" >/dev/null ||
            die "npm could not install ${TEST_NODE_PACKAGES[*]} into $TEST_NODE"
        node_packages_ok || die "$TEST_NODE lacks ${TEST_NODE_PACKAGES[*]} after npm install"
    fi
    log "tests' node: $(command -v node) ($(node --version)); packages in $TEST_NODE: ${TEST_NODE_PACKAGES[*]}"
}

# --- run ---------------------------------------------------------------
ensure_packages
ensure_postgres
ensure_redis
ensure_rust
if [[ $MODE == test ]]; then
    ensure_s3s_fs
    ensure_chromium
    ensure_test_python
    ensure_test_node
fi

if [[ ${#missing[@]} -gt 0 ]]; then
    warn "missing ($MODE): ${missing[*]}"
    exit 1
fi
log "ok ($MODE)"

#!/usr/bin/env bash
# scripts/setup.sh — make this machine ready to build, test and run Tolk.
#
# Idempotent and fast when everything is already there: it checks first and
# only installs or starts what is missing.
#
#   - Debian packages: PostgreSQL (with contrib: pg_trgm, hstore), Redis,
#     Apertium and the language pairs eng-spa, es-pt, fr-es, eng-cat,
#     apertium-apy (the HTTP engine and the bench baseline),
#     python3-docx (the tests open result .docx files with it),
#     python3-translate (translate-toolkit: the TMX tests import po2tmx
#     output and validate exports with lxml; pip elsewhere), and a C
#     toolchain for the few -sys crates (gcc, libc6-dev); the speech engines
#     espeak-ng (text to speech) and pocketsphinx with its en-us model
#     (recognition of voice jobs); lame (MP3 streams; the voice tests also
#     encode MP3 with it), flac and vorbis-tools (the voice tests encode
#     FLAC/OGG inputs with them); chromium and chromium-driver (the auth
#     tests drive the sign-in and consent pages in headless Chromium through
#     chromedriver) with fonts-dejavu-core (their screenshots need a font);
#     python3-authlib and python3-requests (the auth tests run authlib's OAuth
#     client against the server).
#   - PostgreSQL running on 127.0.0.1:5432, user postgres, no password
#     (trust on loopback: a dev/CI set-up, never a production one).
#   - Redis running on 127.0.0.1:6379.
#   - s3s-fs (a small S3-compatible server on a folder) in ~/.cargo/bin, for
#     the object-store tests.
#
# Environment:
#   TOLK_NO_INSTALL=1   only check and report what is missing; change nothing.
#                       Exit status 0 when all is present, 1 otherwise.
#   TOLK_PG_PORT        PostgreSQL port to check (default 5432)
#   TOLK_REDIS_PORT     Redis port to check (default 6379)
set -euo pipefail

PG_PORT="${TOLK_PG_PORT:-5432}"
REDIS_PORT="${TOLK_REDIS_PORT:-6379}"
NO_INSTALL="${TOLK_NO_INSTALL:-0}"
# s3s-fs 0.15 and later need rustc 1.96; 0.14.1 builds with 1.92+.
S3S_FS_VERSION="${TOLK_S3S_FS_VERSION:-0.14.1}"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"

# Packages named exactly (checked with dpkg-query). PostgreSQL is handled
# apart: any server version Debian ships will do.
PACKAGES=(
    redis-server
    apertium apertium-eng-spa apertium-es-pt apertium-fr-es apertium-eng-cat
    apertium-apy
    python3 python3-docx python3-translate
    hunspell-en-us hunspell-es
    gcc libc6-dev
    espeak-ng pocketsphinx pocketsphinx-en-us
    lame flac vorbis-tools
    chromium chromium-driver fonts-dejavu-core
    python3-authlib python3-requests
    ca-certificates
)

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
        warn "not a Debian-like system (no dpkg-query): install by hand PostgreSQL (+contrib), Redis, Apertium with the pairs eng-spa es-pt fr-es eng-cat, python3-docx, python3-authlib, python3-requests, chromium, chromium-driver"
        missing+=("debian-packages(unknown)")
        return
    fi
    local need
    mapfile -t need < <(not_installed "${PACKAGES[@]}")
    if ! postgres_installed || ! command -v pg_isready >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1; then
        need+=(postgresql postgresql-contrib)
    fi
    if command -v redis-server >/dev/null 2>&1 && ! command -v redis-cli >/dev/null 2>&1; then
        need+=(redis-tools)
    fi
    if [[ ${#need[@]} -eq 0 ]]; then
        log "packages: all present"
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

# --- 4. Rust tools and s3s-fs --------------------------------------------
ensure_rust() {
    if ! command -v cargo >/dev/null 2>&1; then
        missing+=("cargo")
        warn "cargo not found: install the Rust toolchain (rustup) and put ~/.cargo/bin on PATH"
        [[ $NO_INSTALL == 1 ]] && return
        exit 1
    fi
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

# --- 5. Python with docx, authlib and requests (for the tests) -----------
# PATH's python3 may be a pyenv one that does not see Debian's packages.
ensure_python_modules() {
    local py
    for py in /usr/bin/python3 python3; do
        if "$py" -c 'import docx, authlib, requests' >/dev/null 2>&1; then
            log "python with docx, authlib, requests: $(command -v "$py")"
            return
        fi
    done
    missing+=("python3-docx/python3-authlib/python3-requests(import fails)")
    warn "no python3 can 'import docx, authlib, requests' (apt-get install python3-docx python3-authlib python3-requests)"
    [[ $NO_INSTALL == 1 ]] || exit 1
}

# --- 6. Chromium and chromedriver (the browser tests of the auth pages) ---
ensure_chromium() {
    local b
    for b in chromium chromedriver; do
        if ! command -v "$b" >/dev/null 2>&1; then
            missing+=("$b(not on PATH)")
            warn "$b is not on PATH (apt-get install chromium chromium-driver)"
            [[ $NO_INSTALL == 1 ]] || exit 1
            return
        fi
    done
    log "chromium: $(command -v chromium), chromedriver: $(command -v chromedriver)"
}

# --- 6. translate-toolkit (po2tmx; the TMX tests import its output) --------
# Debian 12 packages it as python3-translate (installed above); elsewhere pip.
ensure_translate_toolkit() {
    local py=/usr/bin/python3
    [[ -x $py ]] || py=python3
    if "$py" -c 'import translate.convert.po2tmx' >/dev/null 2>&1; then
        log "translate-toolkit: $("$py" -c 'import translate.__version__ as v; print(v.sver)' 2>/dev/null)"
        return
    fi
    if [[ $NO_INSTALL == 1 ]]; then
        missing+=("translate-toolkit(python3 -c 'import translate' fails)")
        return
    fi
    log "installing translate-toolkit with pip for $py"
    as_root "$py" -m pip install --quiet --break-system-packages translate-toolkit \
        || die "translate-toolkit could not be installed (apt-get install python3-translate, or pip install translate-toolkit)"
    "$py" -c 'import translate.convert.po2tmx' >/dev/null 2>&1 \
        || die "translate-toolkit is installed but 'import translate.convert.po2tmx' still fails"
}

# --- run ---------------------------------------------------------------
ensure_packages
ensure_postgres
ensure_redis
ensure_rust
ensure_s3s_fs
ensure_python_modules
ensure_chromium
ensure_translate_toolkit

if [[ ${#missing[@]} -gt 0 ]]; then
    warn "missing: ${missing[*]}"
    exit 1
fi
log "ok"

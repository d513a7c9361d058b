#!/usr/bin/env bash
# scripts/fuzz.sh MINUTES [TARGET …] — fuzz the parsers of client input.
#
# Targets (fuzz/fuzz_targets/): markup (the tag_handling segmenter), documents
# (every document filter's extract → merge → extract), tmx (the TMX reader),
# bodies (translate/write parameters, JSON bodies, multipart uploads). Without
# TARGETs, all of them; each runs MINUTES, two at a time (one per core). Then
# the inline-markup property test (engine/src/tests/apertium.rs) runs MINUTES
# seeds of 500 generated texts each through real Apertium.
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and cargo-fuzz
# (installed here from crates.io when missing). Seed corpora are made fresh by
# real tools (python-docx for Word files) in fuzz/corpus/TARGET; what the
# fuzzer learns stays there between runs. A crash leaves its input in
# fuzz/artifacts/TARGET/ and makes this script exit 1; replay it with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-…
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

minutes=${1:?usage: scripts/fuzz.sh MINUTES [TARGET …]}
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(markup documents tmx bodies)
fi

die() { printf 'fuzz: error: %s\n' "$*" >&2; exit 1; }

rustup toolchain list | grep -q '^nightly' ||
    die "cargo fuzz needs a nightly toolchain: rustup toolchain install nightly"
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$cargo_bin:$PATH"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz

export CARGO_TARGET_DIR="${TOLK_FUZZ_TARGET_DIR:-$HOME/.cache/tolk-fuzz-target}"
export SQLX_OFFLINE=true SQLX_OFFLINE_DIR="$repo/.sqlx"

# --- seed corpora ----------------------------------------------------------
corpus="$repo/fuzz/corpus"
seed() { # seed TARGET NAME [PREFIX-BYTE] < content
    local dir="$corpus/$1"
    mkdir -p "$dir"
    if [[ $# -ge 3 ]]; then
        { printf "\\x$3"; cat; } >"$dir/seed-$2"
    else
        cat >"$dir/seed-$2"
    fi
}

printf '<p>The <b>dog</b> runs.</p><p>Next <br> line</p>' | seed markup html
printf '<doc>\n  <title>A title</title>\n  <para>Some <i>text</i> <x>kept</x>.</para>\n</doc>' | seed markup xml
printf 'Plain text &amp; an entity, <unclosed and </stray> tags' | seed markup lenient

printf 'Hello world.\n\nSecond paragraph.\n' | seed documents txt 00
printf '<!DOCTYPE html><html><head><title>T</title></head><body><h1>Hi <b>there</b></h1><p>A <a href="x" title="t">link</a> <img alt="cat" src="c.png">.</p><script>x<y</script></body></html>' |
    seed documents html 01
# python-docx: Debian's python3-docx (scripts/setup.sh), which a python3 first
# on PATH (pyenv, a venv) may not see.
py=python3
"$py" -c 'import docx' 2>/dev/null || py=/usr/bin/python3
"$py" - "$corpus/documents" <<'PY'
import io, sys
from docx import Document
doc = Document()
doc.add_heading("A heading", 1)
p = doc.add_paragraph("Some ")
p.add_run("bold").bold = True
p.add_run(" and ")
p.add_run("italic").italic = True
p.add_run(" text.")
t = doc.add_table(rows=1, cols=2)
t.cell(0, 0).text = "Cell one"
t.cell(0, 1).text = "Cell two"
doc.sections[0].header.paragraphs[0].text = "Header text"
buf = io.BytesIO()
doc.save(buf)
with open(sys.argv[1] + "/seed-docx", "wb") as f:
    f.write(b"\x02" + buf.getvalue())
PY

cat <<'TMX' | seed tmx basic
<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header creationtool="t" creationtoolversion="1" segtype="sentence" o-tmf="t" adminlang="en" srclang="en" datatype="plaintext"><prop type="x">y</prop></header>
<body><tu tuid="1"><note>n</note><tuv xml:lang="en"><seg>The <bpt i="1">&lt;b&gt;</bpt>cat<ept i="1">&lt;/b&gt;</ept> sleeps.</seg></tuv><tuv xml:lang="es"><seg>El gato duerme.</seg></tuv></tu></body></tmx>
TMX

printf '{"text":["Hello"],"target_lang":"DE","tag_handling":"xml","glossary_id":"x"}' | seed bodies json 00
printf 'text=Hello&text=World&target_lang=DE&formality=more' | seed bodies form 01
printf '{"name":"n","dictionaries":[{"source_lang":"en","target_lang":"de","entries":"a\\tb"}]}' | seed bodies object 02
printf -- '--tolkfuzz\r\nContent-Disposition: form-data; name="target_lang"\r\n\r\nDE\r\n--tolkfuzz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nHello\r\n--tolkfuzz--\r\n' |
    seed bodies multipart 03

# --- run -------------------------------------------------------------------
cd fuzz
for t in "${targets[@]}"; do
    cargo +nightly fuzz build "$t"
done
status=0
run() {
    local t=$1
    mkdir -p "artifacts/$t"
    if cargo +nightly fuzz run "$t" "corpus/$t" -- \
        -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"artifacts/$t.log" 2>&1; then
        printf 'fuzz: %s: %s\n' "$t" "$(grep -E '^stat::number_of_executed_units' "artifacts/$t.log" | tail -1)"
    else
        printf 'fuzz: %s FOUND A CRASH: see fuzz/artifacts/%s.log and fuzz/artifacts/%s/\n' "$t" "$t" "$t"
        return 1
    fi
}
pids=()
names=()
for t in "${targets[@]}"; do
    run "$t" &
    pids+=($!)
    names+=("$t")
    if [[ ${#pids[@]} -ge 2 ]]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
        names=("${names[@]:1}")
    fi
done
for pid in "${pids[@]}"; do
    wait "$pid" || status=1
done

# The inline-markup property test through the real engine (Apertium), with
# seeds of its own and many more cases than CI's fixed-seed run.
(
    cd "$repo"
    export CARGO_TARGET_DIR="${TOLK_TARGET_DIR:-$HOME/.cache/tolk-target}"
    for seed in $(seq 1 $((minutes > 0 ? minutes : 1))); do
        TOLK_MARKUP_SEED=$((seed * 7919)) TOLK_MARKUP_CASES=500 \
            cargo test -q -p tolk-engine --lib generated_markup_keeps_every_element_with_its_words ||
            { printf 'fuzz: markup property FAILED at TOLK_MARKUP_SEED=%s\n' $((seed * 7919)); exit 1; }
    done
    printf 'fuzz: markup property: %s seeds × 500 cases passed\n' "$minutes"
) || status=1
exit $status

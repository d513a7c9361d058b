# syntax=docker/dockerfile:1
#
# Tolk: one image, one binary (`tolk api | worker | scheduler | up | migrate | admin`).
#   docker build -t tolk:local .
#   docker run --rm -e DATABASE_URL=... -p 8080:8080 tolk:local tolk api
# compose.yaml runs it as separate services.

# ---- build ----------------------------------------------------------------
FROM rust:1.95-bookworm AS builder
WORKDIR /src
# sqlx's query macros read the committed .sqlx/ cache instead of a live database.
ENV SQLX_OFFLINE=true \
    CARGO_TERM_COLOR=never \
    CARGO_INCREMENTAL=0
# The SAML service provider binds libxmlsec1 (bindgen needs libclang).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        pkg-config libssl-dev libxml2-dev libxmlsec1-dev libclang-dev \
 && rm -rf /var/lib/apt/lists/*
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin tolk \
 && install -D -m 0755 target/release/tolk /out/tolk

# ---- runtime --------------------------------------------------------------
FROM debian:bookworm-slim
# Apertium and the language pairs the engine discovers in /usr/share/apertium/modes;
# espeak-ng (text to speech), lame (MP3 streams) and pocketsphinx with its en-us
# model (voice jobs); LibreOffice (documents delivered as PDF or Word).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates \
        libxml2 \
        libxmlsec1 \
        libxmlsec1-openssl \
        libssl3 \
        apertium \
        apertium-eng-spa \
        apertium-es-pt \
        apertium-fr-es \
        apertium-eng-cat \
        espeak-ng \
        lame \
        pocketsphinx \
        pocketsphinx-en-us \
        libreoffice-writer-nogui \
        libreoffice-calc-nogui \
        libreoffice-impress-nogui \
        fonts-dejavu-core fonts-liberation2 \
        tesseract-ocr tesseract-ocr-eng tesseract-ocr-spa tesseract-ocr-fra \
        tesseract-ocr-por tesseract-ocr-cat tesseract-ocr-ita \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 tolk \
 && useradd --system --uid 10001 --gid tolk --home-dir /var/lib/tolk --create-home --shell /usr/sbin/nologin tolk
COPY --from=builder /out/tolk /usr/local/bin/tolk
USER tolk:tolk
WORKDIR /var/lib/tolk
# Defaults for a container; any of them can be overridden (see docs/operations.md).
ENV TOLK_LISTEN=0.0.0.0:8080 \
    TOLK_OBJECT_STORE=/var/lib/tolk/objects \
    TOLK_APERTIUM_MODES=/usr/share/apertium/modes \
    TOLK_LOG_FORMAT=json
EXPOSE 8080
STOPSIGNAL SIGTERM
CMD ["tolk", "up"]

//! WebSocket streaming of text to speech:
//! `/v1/tts/stream/simplex/ws?voiceId=` and `/v1/tts/stream/duplex/ws?voiceId=`.
//!
//! Client messages are JSON text frames: `authApiKey` {clientKey, apiKey}
//! first, then `convert` {text} (once for simplex, any number of times for
//! duplex) and, for duplex, `close`. The server sends only binary frames: with
//! `format=wav` (the default) a RIFF/WAVE header with placeholder sizes, then
//! raw 16-bit mono PCM at `sr` Hz (22050 by default), sentence by sentence as
//! espeak-ng produces it; with `format=mp3`, an MP3 stream (64 kbit/s mono,
//! encoded by one `lame` process per session). It closes with 1000 when all audio is out, and with
//! 1008 (authentication) or 4400/4404 (bad message, order or parameter, unknown
//! voice), 1009 (a message over [`MAX_MESSAGE_BYTES`]), 4408 (a duplex stream
//! idle for the voice service's `stream_idle` period: no client message and no
//! audio sent), 4456 (the key's character limit: a convert whose text does not
//! fit in what remains of it, before or in the middle of a stream) or 1011
//! (engine failure) and a reason otherwise.
//!
//! Each convert's characters are billed as `text_to_speech_characters` once its
//! text has been spoken; texts not spoken when a session ends are not billed.
//!
//! The socket is read for the whole session, also while audio is being
//! synthesised and sent: pings are answered (clients ping every few seconds
//! and drop a silent server), and a client's close ends the session at once,
//! stopping the synthesis. Audio runs at most a second ahead of what the
//! client has read ([`super::pace`]: the stream pings, the client's pongs say
//! how far it has read), so a client reading at its own pace still gets the
//! answer to its ping at once; one that reads nothing for the idle period is
//! closed with 4408.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tolk_voice::voices::{self, TtsVoice, VoiceLookup};
use tolk_voice::{resample, text, tts, wav};
use tracing::Instrument;

use super::pace::{Pace, Stalled};
use crate::limits::Charge;
use crate::{ApiError, AppState};

/// Sample rates a client may ask for with `sr`.
pub const RATES: [u32; 4] = [22050, 32000, 44100, 48000];
/// How long the server waits for the first (auth) and next expected message.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the server waits for the client's reply to its close frame.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest client message.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Samples per binary frame when audio is resampled (about 100 ms).
const FRAME_MS: u32 = 100;
/// Texts queued on a duplex stream before the server stops reading more.
const QUEUE: usize = 64;
/// Bit rate of the MP3 streams, in kbit/s.
const MP3_KBITS: u32 = 64;

/// Policy violation (authentication).
pub const CLOSE_AUTH: u16 = 1008;
/// A bad message, message order or parameter.
pub const CLOSE_BAD_REQUEST: u16 = 4400;
/// The voice does not exist.
pub const CLOSE_NOT_FOUND: u16 = 4404;
/// The engine failed.
pub const CLOSE_INTERNAL: u16 = 1011;
/// A client message larger than [`MAX_MESSAGE_BYTES`].
pub const CLOSE_TOO_BIG: u16 = 1009;
/// A duplex stream idle for too long.
pub const CLOSE_IDLE: u16 = 4408;
/// The key's character limit is reached (as HTTP's 456).
pub const CLOSE_QUOTA: u16 = 4456;

/// When the session last saw a client message or sent audio.
struct Activity {
    start: std::time::Instant,
    last_ms: std::sync::atomic::AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Self {
            start: std::time::Instant::now(),
            last_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, std::sync::atomic::Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(std::sync::atomic::Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Simplex,
    Duplex,
}

/// Why a session ends other than normally.
#[derive(Debug)]
enum End {
    /// Close with this code and reason.
    Close(u16, String),
    /// The client went away; nothing to send.
    Gone,
    /// The client sent a close frame: answer it and end at once.
    ClientClosed,
}

impl End {
    fn bad(reason: impl Into<String>) -> Self {
        Self::Close(CLOSE_BAD_REQUEST, reason.into())
    }
}

/// What a stream session was asked for.
#[derive(Debug, Clone, Copy)]
struct Params {
    voice: &'static TtsVoice,
    rate: u32,
    mp3: bool,
}

fn params(query: &HashMap<String, String>) -> Result<Params, End> {
    let raw = query
        .get("voiceId")
        .ok_or_else(|| End::bad("Missing query parameter voiceId."))?;
    let id: i64 = raw
        .trim()
        .parse()
        .map_err(|_| End::bad(format!("voiceId must be an integer, got {raw:?}.")))?;
    let voice = match voices::tts_voice(id) {
        VoiceLookup::Found(v) => v,
        VoiceLookup::OtherKind => {
            return Err(End::bad(format!(
                "Voice {id} is a voice-conversion voice; choose a text-to-speech voice."
            )));
        }
        VoiceLookup::Unknown => {
            return Err(End::Close(
                CLOSE_NOT_FOUND,
                format!("Voice {id} not found."),
            ));
        }
    };
    let mp3 = match query
        .get("format")
        .map(|f| f.to_ascii_lowercase())
        .as_deref()
    {
        None | Some("wav") | Some("") => false,
        Some("mp3") => true,
        Some(other) => {
            return Err(End::bad(format!(
                "Unknown format {other:?}; use wav or mp3."
            )));
        }
    };
    let rate = match query.get("sr") {
        None => tts::SAMPLE_RATE,
        Some(s) => s
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|r| RATES.contains(r))
            .ok_or_else(|| End::bad(format!("sr must be one of {RATES:?}, got {s:?}.")))?,
    };
    match query.get("voiceType").map(String::as_str) {
        None | Some("system") | Some("") => {}
        Some("cloned") => {
            return Err(End::Close(
                CLOSE_NOT_FOUND,
                "No cloned voices exist on this server.".to_owned(),
            ));
        }
        Some(other) => return Err(End::bad(format!("Unknown voiceType {other:?}."))),
    }
    Ok(Params { voice, rate, mp3 })
}

/// A client message.
#[derive(Debug, PartialEq, Eq)]
enum ClientMessage {
    Auth { client_key: String, api_key: String },
    Convert { text: String },
    Close,
}

fn parse_message(msg: Message) -> Result<Option<ClientMessage>, End> {
    let text = match msg {
        Message::Text(t) => t,
        Message::Binary(_) => {
            return Err(End::bad(
                "Binary messages are not accepted; send JSON text.",
            ));
        }
        Message::Ping(_) | Message::Pong(_) => return Ok(None),
        Message::Close(_) => return Err(End::ClientClosed),
    };
    let value: Value = serde_json::from_str(text.as_str())
        .map_err(|e| End::bad(format!("Invalid JSON message: {e}")))?;
    let field = |name: &str| -> Result<String, End> {
        match value.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(End::bad(format!("{name} must be a string."))),
            None => Err(End::bad(format!("Missing field {name}."))),
        }
    };
    match value.get("type").and_then(Value::as_str) {
        Some("authApiKey") => Ok(Some(ClientMessage::Auth {
            client_key: field("clientKey")?,
            api_key: field("apiKey")?,
        })),
        Some("convert") => Ok(Some(ClientMessage::Convert {
            text: field("text")?,
        })),
        Some("close") => Ok(Some(ClientMessage::Close)),
        Some(other) => Err(End::bad(format!("Unknown message type {other:?}."))),
        None => Err(End::bad("The message has no type.")),
    }
}

/// The next client message, skipping pings (which the socket answers while it
/// is read); `Ok(None)` when `timeout` passed without any frame, Gone when the
/// client left.
async fn next_message(
    rx: &mut SplitStream<WebSocket>,
    timeout: Option<Duration>,
    (activity, pace): (&Activity, &Pace),
) -> Result<Option<ClientMessage>, End> {
    loop {
        let next = match timeout {
            Some(t) => match tokio::time::timeout(t, rx.next()).await {
                Ok(next) => next,
                Err(_) => return Ok(None),
            },
            None => rx.next().await,
        };
        activity.touch();
        match next {
            None => return Err(End::Gone),
            Some(Err(e)) => return Err(read_error(&e)),
            Some(Ok(msg)) => {
                if let Message::Pong(payload) = &msg {
                    pace.pong(payload);
                }
                if let Some(m) = parse_message(msg)? {
                    return Ok(Some(m));
                }
            }
        }
    }
}

/// How a failed read ends the session: 1009 for a message over the size
/// limit, else the client is gone.
fn read_error(e: &axum::Error) -> End {
    let text = e.to_string();
    if text.contains("Message too long") || text.contains("Space limit exceeded") {
        End::Close(
            CLOSE_TOO_BIG,
            format!("Message too big: at most {MAX_MESSAGE_BYTES} bytes."),
        )
    } else {
        tracing::debug!(error = %text, "reading the stream failed");
        End::Gone
    }
}

pub(super) async fn simplex(
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    upgrade(ws, state, query, Kind::Simplex)
}

pub(super) async fn duplex(
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    upgrade(ws, state, query, Kind::Duplex)
}

fn upgrade(
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
    state: AppState,
    query: HashMap<String, String>,
    kind: Kind,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            return crate::error::message(
                e.status(),
                format!(
                    "This address takes a WebSocket connection: {}",
                    e.body_text()
                ),
            );
        }
    };
    let span = tracing::info_span!("tts_stream", kind = ?kind, key_id = tracing::field::Empty);
    ws.max_message_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| session(socket, state, query, kind).instrument(span))
        .into_response()
}

async fn session(socket: WebSocket, state: AppState, query: HashMap<String, String>, kind: Kind) {
    let (mut tx, mut rx) = socket.split();
    let outcome = run(&mut tx, &mut rx, &state, &query, kind).await;
    let (code, reason) = match outcome {
        Ok(()) => (1000, String::new()),
        Err(End::Close(code, reason)) => (code, reason),
        Err(End::Gone) => {
            tracing::debug!("client left");
            return;
        }
        Err(End::ClientClosed) => {
            // The socket has queued its reply to the client's close: send it.
            let _ = tx.close().await;
            tracing::debug!("client closed the stream");
            return;
        }
    };
    if code != 1000 {
        tracing::info!(code, reason = %reason, "closing stream");
    }
    let frame = CloseFrame {
        code,
        reason: truncate(&reason, 120).into(),
    };
    if tx.send(Message::Close(Some(frame))).await.is_err() {
        return;
    }
    // Wait (briefly) for the client's close reply, so the close is clean.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
        while let Some(Ok(msg)) = rx.next().await {
            if matches!(msg, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// A close reason fits in a control frame (123 bytes).
fn truncate(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    out
}

async fn run(
    tx: &mut SplitSink<WebSocket, Message>,
    rx: &mut SplitStream<WebSocket>,
    state: &AppState,
    query: &HashMap<String, String>,
    kind: Kind,
) -> Result<(), End> {
    let params = params(query)?;
    let activity = Activity::new();
    let pace = Pace::new(match params.mp3 {
        true => u64::from(MP3_KBITS) * 1000 / 8,
        false => u64::from(params.rate) * 2,
    });
    let first = next_message(rx, Some(MESSAGE_TIMEOUT), (&activity, &pace))
        .await?
        .ok_or_else(|| End::bad("Timed out waiting for a message."))?;
    let key;
    match first {
        ClientMessage::Auth {
            client_key,
            api_key,
        } => {
            key = super::auth::authenticate(state, &client_key, &api_key)
                .await
                .map_err(|e| {
                    End::Close(CLOSE_INTERNAL, format!("Authentication unavailable: {e}"))
                })?
                .ok_or_else(|| End::Close(CLOSE_AUTH, "Authentication failed.".to_owned()))?;
            tracing::Span::current().record("key_id", key.key_id.as_str());
        }
        _ => return Err(End::bad("The first message must be authApiKey.")),
    }
    let (texts_tx, texts_rx) = mpsc::channel::<(String, Charge)>(QUEUE);
    let idle = state.voice.stream_idle;
    let reader = read_texts(rx, texts_tx, (state, &key), kind, (&activity, &pace), idle);
    let writer = speak(tx, texts_rx, state, params, (&activity, &pace));
    tokio::pin!(reader, writer);
    // The session ends when the writer has sent everything it was asked for
    // (the reader drops the queue's sender after the last convert or `close`),
    // or at once when the reader ends it (the client closed or broke the
    // protocol, or the stream was idle): dropping the writer kills synthesis.
    tokio::select! {
        read = &mut reader => match read {
            Err(end) => Err(end),
            Ok(()) => (&mut writer).await,
        },
        written = &mut writer => written,
    }
}

/// Reads convert messages into `texts`, each with its characters reserved
/// against the key's limit (one for simplex, until `close` for duplex),
/// then goes on reading until the session ends: answering pings,
/// and ending the session when the client closes, sends anything more, or
/// (duplex) lets the stream sit idle for `idle`. Returns only with the reason
/// the session must end.
async fn read_texts(
    rx: &mut SplitStream<WebSocket>,
    texts: mpsc::Sender<(String, Charge)>,
    (state, key): (&AppState, &tolk_storage::keys::ApiKey),
    kind: Kind,
    (activity, pace): (&Activity, &Pace),
    idle: Duration,
) -> Result<(), End> {
    let mut texts = Some(texts);
    let mut converts = 0usize;
    loop {
        let timeout = match kind {
            Kind::Simplex if texts.is_some() => Some(MESSAGE_TIMEOUT),
            Kind::Simplex => None,
            Kind::Duplex => Some(idle.min(MESSAGE_TIMEOUT)),
        };
        let Some(message) = next_message(rx, timeout, (activity, pace)).await? else {
            if kind == Kind::Simplex {
                return Err(End::bad("Timed out waiting for a message."));
            }
            if activity.idle_for() >= idle {
                return Err(End::Close(
                    CLOSE_IDLE,
                    format!(
                        "The stream was idle for {} s: no message and no audio.",
                        idle.as_secs()
                    ),
                ));
            }
            continue;
        };
        match message {
            ClientMessage::Convert { text } => {
                let Some(queue) = &texts else {
                    return Err(End::bad(match kind {
                        Kind::Simplex => "A simplex stream takes one convert; it closes by itself.",
                        Kind::Duplex => "No convert after close.",
                    }));
                };
                if text.trim().is_empty() {
                    return Err(End::bad("convert needs a non-empty text."));
                }
                converts += 1;
                let charge = super::tts::charge(state, key, &text)
                    .await
                    .map_err(|e| match e {
                        ApiError::QuotaExceeded(message) => End::Close(CLOSE_QUOTA, message),
                        other => End::Close(CLOSE_INTERNAL, other.to_string()),
                    })?;
                if queue.send((text, charge)).await.is_err() {
                    return Err(End::Gone);
                }
                if kind == Kind::Simplex {
                    texts = None;
                }
            }
            ClientMessage::Close if kind == Kind::Duplex => texts = None,
            ClientMessage::Close => {
                return Err(End::bad(
                    "A simplex stream takes one convert; it closes by itself.",
                ));
            }
            ClientMessage::Auth { .. } => {
                return Err(End::bad(if converts == 0 {
                    "Already authenticated; send convert."
                } else {
                    "Already authenticated."
                }));
            }
        }
    }
}

/// Synthesises queued texts sentence by sentence and sends the audio: WAV
/// (header frame, then PCM) or MP3 (PCM through a `lame` process).
async fn speak(
    tx: &mut SplitSink<WebSocket, Message>,
    texts: mpsc::Receiver<(String, Charge)>,
    state: &AppState,
    params: Params,
    (activity, pace): (&Activity, &Pace),
) -> Result<(), End> {
    let (pcm_tx, mut pcm_rx) = mpsc::channel::<Vec<i16>>(16);
    let producer = produce_pcm(texts, state, params, pcm_tx);
    let patience = state.voice.stream_idle;
    if !params.mp3 {
        let sender = async {
            let mut header_sent = false;
            while let Some(pcm) = pcm_rx.recv().await {
                let bytes = send_pcm(tx, &mut header_sent, params.rate, &pcm).await?;
                activity.touch();
                paced(tx, pace, bytes, patience).await?;
            }
            Ok(())
        };
        return tokio::try_join!(producer, sender).map(|_| ());
    }
    let mut lame = tokio::process::Command::new(&state.voice.lame)
        .arg("-r")
        .args(["-s", &format!("{}", f64::from(params.rate) / 1000.0)])
        .args(["--bitwidth", "16", "--signed", "--little-endian", "-m", "m"])
        .args(["-b", &MP3_KBITS.to_string(), "--quiet", "--flush", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            End::Close(
                CLOSE_INTERNAL,
                format!("MP3 encoder unavailable (apt-get install lame): {e}"),
            )
        })?;
    let (Some(mut stdin), Some(mut stdout)) = (lame.stdin.take(), lame.stdout.take()) else {
        return Err(End::Close(
            CLOSE_INTERNAL,
            "MP3 encoder has no pipes".to_owned(),
        ));
    };
    let feeder = async move {
        use tokio::io::AsyncWriteExt;
        while let Some(pcm) = pcm_rx.recv().await {
            stdin
                .write_all(&wav::pcm_bytes(&pcm))
                .await
                .map_err(|e| End::Close(CLOSE_INTERNAL, format!("MP3 encoder: {e}")))?;
        }
        // EOF: lame flushes its last frames and exits.
        drop(stdin);
        Ok(())
    };
    let forwarder = async {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 8192];
        loop {
            let n = stdout
                .read(&mut buf)
                .await
                .map_err(|e| End::Close(CLOSE_INTERNAL, format!("MP3 encoder: {e}")))?;
            if n == 0 {
                return Ok(());
            }
            tx.send(Message::Binary(buf[..n].to_vec().into()))
                .await
                .map_err(|_| End::Gone)?;
            activity.touch();
            paced(tx, pace, n, patience).await?;
        }
    };
    tokio::try_join!(producer, feeder, forwarder)?;
    let _ = lame.wait().await;
    Ok(())
}

/// Synthesises queued texts sentence by sentence into `out` (PCM at
/// `params.rate`), billing each text once it is spoken.
async fn produce_pcm(
    mut texts: mpsc::Receiver<(String, Charge)>,
    state: &AppState,
    params: Params,
    out: mpsc::Sender<Vec<i16>>,
) -> Result<(), End> {
    let frame_samples = (params.rate * FRAME_MS / 1000) as usize;
    while let Some((text, charge)) = texts.recv().await {
        let sentences = text::sentences(&text);
        if sentences.is_empty() {
            return Err(End::bad("The text contains nothing to speak."));
        }
        for sentence in sentences {
            let mut speech = state
                .voice
                .espeak
                .start(params.voice, &sentence)
                .map_err(|e| End::Close(CLOSE_INTERNAL, e.to_string()))?;
            let mut pending: Vec<i16> = Vec::new();
            loop {
                let chunk = speech
                    .next_chunk()
                    .await
                    .map_err(|e| End::Close(CLOSE_INTERNAL, e.to_string()))?;
                let Some(chunk) = chunk else { break };
                if params.rate == tts::SAMPLE_RATE {
                    out.send(chunk).await.map_err(|_| End::Gone)?;
                } else {
                    pending.extend_from_slice(&chunk);
                }
            }
            if !pending.is_empty() {
                let resampled = wav::to_i16(&resample::resample(
                    &wav::to_f32(&pending),
                    tts::SAMPLE_RATE,
                    params.rate,
                ));
                for frame in resampled.chunks(frame_samples.max(1)) {
                    out.send(frame.to_vec()).await.map_err(|_| End::Gone)?;
                }
            }
        }
        charge
            .settle(state)
            .await
            .map_err(|e| End::Close(CLOSE_INTERNAL, format!("Metering failed: {e}")))?;
    }
    Ok(())
}

/// Sends `pcm` (after the WAV header, the first time); the bytes of audio
/// sent.
async fn send_pcm(
    tx: &mut SplitSink<WebSocket, Message>,
    header_sent: &mut bool,
    rate: u32,
    pcm: &[i16],
) -> Result<usize, End> {
    if !*header_sent {
        tx.send(Message::Binary(wav::streaming_header(rate).to_vec().into()))
            .await
            .map_err(|_| End::Gone)?;
        *header_sent = true;
    }
    let bytes = wav::pcm_bytes(pcm);
    let n = bytes.len();
    tx.send(Message::Binary(bytes.into()))
        .await
        .map_err(|_| End::Gone)?;
    Ok(n)
}

/// After `n` bytes of audio went out: the ping that is due, then a wait
/// while the client is too far behind ([`Pace`]); 4408 when it reads
/// nothing for `patience`.
async fn paced(
    tx: &mut SplitSink<WebSocket, Message>,
    pace: &Pace,
    n: usize,
    patience: Duration,
) -> Result<(), End> {
    if let Some(ping) = pace.sent(n) {
        tx.send(ping).await.map_err(|_| End::Gone)?;
    }
    pace.wait(patience).await.map_err(|Stalled| {
        End::Close(
            CLOSE_IDLE,
            format!("The client read no audio for {} s.", patience.as_secs()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn code(r: Result<Params, End>) -> u16 {
        match r {
            Err(End::Close(c, _)) => c,
            _ => 1000,
        }
    }

    #[test]
    fn query_parameters() {
        assert_eq!(code(params(&q(&[("voiceId", "101")]))), 1000);
        assert_eq!(
            params(&q(&[
                ("voiceId", "101"),
                ("sr", "44100"),
                ("format", "wav")
            ]))
            .unwrap()
            .rate,
            44100
        );
        assert_eq!(code(params(&q(&[]))), CLOSE_BAD_REQUEST);
        assert_eq!(code(params(&q(&[("voiceId", "x")]))), CLOSE_BAD_REQUEST);
        assert_eq!(code(params(&q(&[("voiceId", "999")]))), CLOSE_NOT_FOUND);
        assert_eq!(code(params(&q(&[("voiceId", "201")]))), CLOSE_BAD_REQUEST);
        assert_eq!(
            code(params(&q(&[("voiceId", "101"), ("sr", "8000")]))),
            CLOSE_BAD_REQUEST
        );
        assert!(
            params(&q(&[("voiceId", "101"), ("format", "mp3")]))
                .unwrap()
                .mp3
        );
        assert_eq!(
            code(params(&q(&[("voiceId", "101"), ("format", "ogg")]))),
            CLOSE_BAD_REQUEST
        );
    }

    #[test]
    fn messages() {
        let m = |s: &str| parse_message(Message::Text(s.into()));
        assert_eq!(
            m(r#"{"type":"authApiKey","clientKey":"a","apiKey":"a.b"}"#).unwrap(),
            Some(ClientMessage::Auth {
                client_key: "a".into(),
                api_key: "a.b".into()
            })
        );
        assert_eq!(
            m(r#"{"type":"close"}"#).unwrap(),
            Some(ClientMessage::Close)
        );
        assert!(matches!(m("{"), Err(End::Close(CLOSE_BAD_REQUEST, _))));
        assert!(matches!(
            m(r#"{"type":"convert"}"#),
            Err(End::Close(CLOSE_BAD_REQUEST, _))
        ));
        assert!(matches!(
            m(r#"{"type":"dance"}"#),
            Err(End::Close(CLOSE_BAD_REQUEST, _))
        ));
        assert_eq!(truncate(&"é".repeat(100), 11).len(), 10);
    }
}

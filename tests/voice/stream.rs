//! WebSocket text-to-speech streams with a real client: simplex and duplex,
//! pings, client close, idle and oversized streams.

use super::*;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What a stream session delivered.
#[derive(Debug, Default)]
struct Received {
    /// Binary frames, in order.
    frames: Vec<Vec<u8>>,
    /// Non-binary data frames (must stay empty).
    texts: Vec<String>,
    /// The server's close code and reason.
    close: Option<(u16, String)>,
}

impl Received {
    /// PCM after the header frame.
    fn pcm(&self) -> Vec<u8> {
        self.frames.iter().skip(1).flatten().copied().collect()
    }
}

async fn connect(api: &Api, kind: &str, query: &str) -> Result<Ws> {
    let url = format!(
        "{}/v1/tts/stream/{kind}/ws?{query}",
        api.direct.replacen("http", "ws", 1)
    );
    let (ws, _) = tokio_tungstenite::connect_async(url).await?;
    Ok(ws)
}

async fn send(ws: &mut Ws, v: Value) -> Result<()> {
    ws.send(Message::Text(v.to_string().into())).await?;
    Ok(())
}

fn auth_msg(key: &str) -> Value {
    let client = key.split_once('.').map(|(id, _)| id).unwrap_or(key);
    json!({"type": "authApiKey", "clientKey": client, "apiKey": key})
}

/// Reads until the server closes (or the connection ends).
async fn receive_all(ws: &mut Ws) -> Result<Received> {
    let mut got = Received::default();
    let read = async {
        while let Some(msg) = ws.next().await {
            match msg? {
                Message::Binary(b) => got.frames.push(b.to_vec()),
                Message::Text(t) => got.texts.push(t.to_string()),
                Message::Close(frame) => {
                    got.close = Some(
                        frame
                            .map(|f| (u16::from(f.code), f.reason.to_string()))
                            .unwrap_or((1005, String::new())),
                    );
                }
                _ => {}
            }
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .context("the server neither finished nor closed")??;
    Ok(got)
}

/// Pearson correlation of two signals over their common length.
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let (a, b) = (&a[..n], &b[..n]);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma) * (x - ma);
        bb += (y - mb) * (y - mb);
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

/// The raw PCM of /v1/tts/convert for `text`.
async fn tts_pcm(api: &Api, key: &str, voice: i64, text: &str) -> Result<Vec<u8>> {
    let wav = tts(api, key, voice, text).await?;
    Ok(wav[44..].to_vec())
}

fn check_header(frame: &[u8], rate: u32) {
    assert_eq!(frame.len(), 44, "first frame is the WAV header");
    assert_eq!(&frame[0..4], b"RIFF");
    assert_eq!(&frame[8..12], b"WAVE");
    assert_eq!(u16::from_le_bytes([frame[22], frame[23]]), 1);
    assert_eq!(
        u32::from_le_bytes([frame[24], frame[25], frame[26], frame[27]]),
        rate
    );
    assert_eq!(u16::from_le_bytes([frame[34], frame[35]]), 16);
}

/// Three sentences spoken in the stream tests.
const SENTENCES: (&str, &str, &str) = (
    "The first sentence comes first.",
    "Then a second one follows it!",
    "And a third closes the stream?",
);

/// Simplex: header frame, then exactly the PCM of the same sentences, in
/// order, then a close 1000 sent by the server.
#[tokio::test]
async fn a_simplex_stream_speaks_each_sentence_in_order() -> Result<()> {
    let (_world, api, key) = stream_world("wssimplex", &[]).await?;
    let (a, b, c) = SENTENCES;
    let mut ws = connect(&api, "simplex", "voiceId=102").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": format!("{a} {b} {c}")}),
    )
    .await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(
        got.close.as_ref().map(|c| c.0),
        Some(1000),
        "{:?}",
        got.close
    );
    assert!(got.texts.is_empty(), "only binary frames: {:?}", got.texts);
    check_header(&got.frames[0], 22050);
    assert!(got.frames.len() > 4, "audio comes in several frames");
    let mut expected = Vec::new();
    let mut bounds = Vec::new();
    for s in [a, b, c] {
        expected.extend(tts_pcm(&api, &key, 102, s).await?);
        bounds.push(expected.len());
    }
    let pcm = got.pcm();
    assert_eq!(
        pcm.len(),
        expected.len(),
        "the stream carries as many samples as the three sentences"
    );
    // Each sentence's stretch of the stream is that sentence's speech, in order.
    // Compared by correlation, not byte for byte: the voice's breath noise
    // (espeak-ng 1.51 `rand()`) made two cold CI runs differ from the reference by
    // a few samples of the same speech, lengths equal.
    let samples = |b: &[u8]| -> Vec<f64> {
        b.chunks_exact(2)
            .map(|c| f64::from(i16::from_le_bytes([c[0], c[1]])))
            .collect()
    };
    let starts: Vec<usize> = std::iter::once(0).chain(bounds.iter().copied()).collect();
    let references: Vec<Vec<f64>> = starts
        .windows(2)
        .map(|w| samples(&expected[w[0]..w[1]]))
        .collect();
    for (i, w) in starts.windows(2).enumerate() {
        let streamed = samples(&pcm[w[0]..w[1]]);
        let own = correlation(&streamed, &references[i]);
        assert!(
            own > 0.98,
            "sentence {i} of the stream is its own speech: correlation {own:.4} (first byte difference at {:?}, frame sizes {:?})",
            pcm.iter().zip(&expected).position(|(x, y)| x != y),
            got.frames.iter().map(Vec::len).collect::<Vec<_>>()
        );
        for (j, other) in references.iter().enumerate() {
            if j != i {
                let c = correlation(&streamed, other);
                assert!(
                    c < own - 0.3,
                    "sentence {i} is not sentence {j}'s speech: {c:.3} vs {own:.3}"
                );
            }
        }
    }
    Ok(())
}

/// Resampled to sr=44100: header says so, twice the samples.
#[tokio::test]
async fn a_simplex_stream_is_resampled_to_the_requested_rate() -> Result<()> {
    let (_world, api, key) = stream_world("wsrate", &[]).await?;
    let (a, _, _) = SENTENCES;
    let mut ws = connect(
        &api,
        "simplex",
        "voiceId=102&format=wav&sr=44100&voiceType=system",
    )
    .await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(&mut ws, json!({"type": "convert", "text": a})).await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(got.close.as_ref().map(|c| c.0), Some(1000));
    check_header(&got.frames[0], 44100);
    let single = tts_pcm(&api, &key, 102, a).await?.len() as f64;
    assert!((got.pcm().len() as f64 / single - 2.0).abs() < 0.01);
    Ok(())
}

/// format=mp3: an MP3 stream (lame) that decodes to the same length of speech.
#[tokio::test]
async fn a_simplex_mp3_stream_decodes_to_the_same_length_of_speech() -> Result<()> {
    let (world, api, key) = stream_world("wsmp3", &[]).await?;
    let (a, b, _) = SENTENCES;
    let mut ws = connect(&api, "simplex", "voiceId=102&format=mp3&sr=44100").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": format!("{a} {b}")}),
    )
    .await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(
        got.close.as_ref().map(|c| c.0),
        Some(1000),
        "{:?}",
        got.close
    );
    let mp3: Vec<u8> = got.frames.iter().flatten().copied().collect();
    assert!(
        mp3.len() > 1000 && mp3[0] == 0xFF && mp3[1] & 0xE0 == 0xE0,
        "MP3 frame sync"
    );
    let mp3_path = world.path("stream.mp3");
    std::fs::write(&mp3_path, &mp3)?;
    let wav_path = world.path("stream-decoded.wav");
    let out = tokio::process::Command::new("lame")
        .args(["--quiet", "--decode"])
        .arg(&mp3_path)
        .arg(&wav_path)
        .output()
        .await?;
    assert!(out.status.success());
    let (decoded, decoded_rate) = read_wav(&std::fs::read(&wav_path)?)?;
    assert_eq!(decoded_rate, 44100);
    let spoken = (tts_pcm(&api, &key, 102, a).await?.len()
        + tts_pcm(&api, &key, 102, b).await?.len()) as f64
        / 2.0
        / 22050.0;
    let mp3_secs = decoded.len() as f64 / 44100.0;
    assert!(
        (mp3_secs / spoken - 1.0).abs() < 0.1,
        "{mp3_secs} s vs {spoken} s"
    );
    Ok(())
}

/// Duplex, two sessions at once: each gets its own texts, in order, then
/// close → the server flushes and closes with 1000.
#[tokio::test]
async fn duplex_sessions_at_once_each_get_their_own_speech_in_order() -> Result<()> {
    let (_world, api, key) = stream_world("wsduplex", &[]).await?;
    let (a, b, c) = SENTENCES;
    let duplex = |texts: Vec<&'static str>| {
        let key = key.clone();
        let api = Api::new(api.direct.clone());
        async move {
            let mut ws = connect(&api, "duplex", "voiceId=101").await?;
            send(&mut ws, auth_msg(&key)).await?;
            for t in &texts {
                send(&mut ws, json!({"type": "convert", "text": t})).await?;
            }
            send(&mut ws, json!({"type": "close"})).await?;
            let got = receive_all(&mut ws).await?;
            let mut expected = Vec::new();
            for t in &texts {
                expected.extend(tts_pcm(&api, &key, 101, t).await?);
            }
            anyhow::Ok((got, expected))
        }
    };
    let (one, two) = tokio::join!(duplex(vec![a, b, c]), duplex(vec![c, a]));
    for (got, expected) in [one?, two?] {
        assert_eq!(
            got.close.as_ref().map(|c| c.0),
            Some(1000),
            "{:?}",
            got.close
        );
        check_header(&got.frames[0], 22050);
        assert!(got.texts.is_empty());
        assert!(
            got.pcm() == expected,
            "duplex audio in order ({} vs {} bytes)",
            got.pcm().len(),
            expected.len()
        );
    }
    Ok(())
}

/// Duplex: frames flow back while the client keeps the stream open; the
/// client may also just drop the connection.
#[tokio::test]
async fn a_duplex_stream_sends_audio_while_the_client_keeps_it_open() -> Result<()> {
    let (_world, api, key) = stream_world("wsopen", &[]).await?;
    let (a, _, _) = SENTENCES;
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(&mut ws, json!({"type": "convert", "text": a})).await?;
    let first = tokio::time::timeout(Duration::from_secs(10), ws.next()).await?;
    assert!(matches!(first, Some(Ok(Message::Binary(_)))), "{first:?}");
    // The client may also just drop the connection.
    drop(ws);
    Ok(())
}

/// Errors: a non-1000 close with a reason; bad JSON; the API is still
/// healthy after all of that.
#[tokio::test]
async fn bad_stream_messages_close_the_stream_with_a_code_and_reason() -> Result<()> {
    let (world, api, key) = stream_world("wserrors", &[]).await?;
    let other = world.create_key("other", false).await?;
    let other_client = other
        .split_once('.')
        .map(|(id, _)| id.to_owned())
        .unwrap_or_default();
    let cases: Vec<(&str, &str, Vec<Value>, u16, &str)> = vec![
        (
            "simplex",
            "voiceId=101",
            vec![json!({"type": "authApiKey", "clientKey": other_client, "apiKey": key})],
            1008,
            "Authentication",
        ),
        (
            "simplex",
            "voiceId=101",
            vec![json!({"type": "authApiKey", "clientKey": "x", "apiKey": "x.y"})],
            1008,
            "Authentication",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![json!({"type": "convert", "text": "hi"})],
            4400,
            "authApiKey",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "shout"})],
            4400,
            "Unknown message",
        ),
        (
            "simplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "close"})],
            4400,
            "convert",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "convert", "text": ""})],
            4400,
            "non-empty",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), auth_msg(&key)],
            4400,
            "authenticated",
        ),
        (
            "simplex",
            "voiceId=999",
            vec![auth_msg(&key)],
            4404,
            "not found",
        ),
        (
            "simplex",
            "voiceId=203",
            vec![auth_msg(&key)],
            4400,
            "voice-conversion",
        ),
        ("simplex", "", vec![auth_msg(&key)], 4400, "voiceId"),
        (
            "simplex",
            "voiceId=101&sr=8000",
            vec![auth_msg(&key)],
            4400,
            "sr",
        ),
    ];
    for (kind, query, msgs, code, words) in cases {
        let mut ws = connect(&api, kind, query).await?;
        for m in msgs {
            // The server may already have closed; a failed send is fine.
            let _ = send(&mut ws, m).await;
        }
        let got = receive_all(&mut ws).await?;
        let (c, reason) = got.close.clone().unwrap_or_default();
        assert_eq!(c, code, "{kind}?{query}: {:?}", got.close);
        assert!(reason.contains(words), "{kind}?{query}: {reason}");
        assert!(got.frames.is_empty());
    }
    // Bad JSON.
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    ws.send(Message::Text("{oops".into())).await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(got.close.map(|c| c.0), Some(4400));

    // The API is still healthy after all of that.
    let (code, _) = get_json(&api, &key, "/v1/tts/voices").await?;
    assert_eq!(code, 200);
    Ok(())
}

/// A world with an API for the stream tests; `env` adds settings.
async fn stream_world(tag: &str, env: &[(&str, &str)]) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    for (k, v) in env {
        world.extra_env.push(((*k).into(), (*v).into()));
    }
    let key = world.create_key("stream", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// The first binary frame of a stream (the WAV header).
async fn first_binary(ws: &mut Ws) -> Result<()> {
    while let Some(msg) = ws.next().await {
        if let Message::Binary(_) = msg? {
            return Ok(());
        }
    }
    bail!("the stream ended before any audio")
}

#[tokio::test]
async fn a_stream_answers_pings_while_it_sends_audio() -> Result<()> {
    let (_world, api, key) = stream_world("tts_ping", &[]).await?;
    let mut ws = connect(&api, "simplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": speech_text(300)}),
    )
    .await?;
    first_binary(&mut ws).await?;
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await?;
    let (mut pong_at, mut frames, mut close) = (None, 0usize, None);
    while let Some(msg) = ws.next().await {
        match msg? {
            Message::Binary(_) => frames += 1,
            Message::Pong(p) if p.as_ref() == b"are you there" => pong_at = Some(frames),
            Message::Close(f) => close = f.map(|f| u16::from(f.code)),
            _ => {}
        }
    }
    let pong_at = pong_at.context("the ping was never answered")?;
    assert!(
        pong_at < frames,
        "pong after frame {pong_at} of {frames}: not while streaming"
    );
    assert_eq!(close, Some(1000));
    Ok(())
}

#[tokio::test]
async fn a_client_close_stops_the_stream_at_once() -> Result<()> {
    let (_world, api, key) = stream_world("tts_client_close", &[]).await?;
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    // About ten minutes of speech: 26 MB of PCM if it all came.
    send(
        &mut ws,
        json!({"type": "convert", "text": speech_text(600)}),
    )
    .await?;
    first_binary(&mut ws).await?;
    ws.send(Message::Close(None)).await?;
    let got = receive_all(&mut ws).await?;
    let seconds = got.frames.iter().map(Vec::len).sum::<usize>() as f64 / 2.0 / 22050.0;
    assert!(
        seconds < 300.0,
        "{seconds} s of audio after the client closed"
    );
    Ok(())
}

#[tokio::test]
async fn an_idle_duplex_stream_is_closed() -> Result<()> {
    let (_world, api, key) =
        stream_world("tts_idle", &[("TOLK_VOICE_STREAM_IDLE_SECS", "1")]).await?;
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    let got = receive_all(&mut ws).await?;
    let (code, reason) = got.close.context("no close frame")?;
    assert_eq!(code, 4408, "{reason}");
    assert!(reason.contains("idle"), "{reason}");
    Ok(())
}

/// A client frame: FIN, `opcode`, masked as clients must.
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    let mut out = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

#[tokio::test]
async fn an_oversized_stream_message_is_closed_with_1009() -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_world, api, key) = stream_world("tts_too_big", &[]).await?;
    // A bare client, so the test reads the server's close even while its own
    // oversized message is cut off.
    let addr = api.direct.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await?;
    conn.write_all(
        format!(
            "GET /v1/tts/stream/duplex/ws?voiceId=101 HTTP/1.1\r\nHost: {addr}\r\n\
             Upgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .as_bytes(),
    )
    .await?;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        if conn.read(&mut b).await? == 0 {
            bail!("no upgrade answer: {}", String::from_utf8_lossy(&head));
        }
        head.push(b[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    conn.write_all(&client_frame(0x1, auth_msg(&key).to_string().as_bytes()))
        .await?;
    // The header of a 17 MiB text message, and its first bytes.
    let mut big = client_frame(0x1, &[]);
    big.truncate(1);
    big.push(0x80 | 127);
    big.extend_from_slice(&(17u64 << 20).to_be_bytes());
    big.extend_from_slice(&[0, 0, 0, 0]);
    big.extend_from_slice(&[b'a'; 4096]);
    conn.write_all(&big).await?;
    let mut frames = Vec::new();
    let read = async {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = conn.read(&mut buf).await?;
            if n == 0 {
                return anyhow::Ok(());
            }
            frames.extend_from_slice(&buf[..n]);
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
    // The server's frames are unmasked: find the close frame (opcode 8).
    let mut at = 0;
    let mut close = None;
    while at + 2 <= frames.len() {
        let (opcode, len) = (frames[at] & 0x0F, usize::from(frames[at + 1] & 0x7F));
        let (start, len) = match len {
            126 if at + 4 <= frames.len() => (
                at + 4,
                usize::from(u16::from_be_bytes([frames[at + 2], frames[at + 3]])),
            ),
            127 => break,
            n => (at + 2, n),
        };
        if opcode == 8 && start + 2 <= frames.len() {
            close = Some(u16::from_be_bytes([frames[start], frames[start + 1]]));
        }
        at = start + len;
    }
    assert_eq!(close, Some(1009), "server frames: {frames:?}");
    Ok(())
}

/// Stream converts are billed in characters once spoken, against the key's
/// character limit: a simplex stream whose text does not fit closes with
/// 4456 before any audio, and a duplex stream closes with 4456 at the
/// convert that passes the limit.
#[tokio::test]
async fn streams_are_billed_and_closed_with_4456_at_the_character_limit() -> Result<()> {
    let (world, api, key) = stream_world("wslimits", &[]).await?;
    let key_id = key.split('.').next().unwrap_or_default().to_owned();
    let db = world.db().await?;
    sqlx::query("UPDATE api_keys SET character_limit = 40 WHERE key_id = $1")
        .bind(&key_id)
        .execute(&db)
        .await?;
    let simplex = |text: &'static str| {
        let (api, key) = (&api, &key);
        async move {
            let mut ws = connect(api, "simplex", "voiceId=101").await?;
            send(&mut ws, auth_msg(key)).await?;
            send(&mut ws, json!({"type": "convert", "text": text})).await?;
            receive_all(&mut ws).await
        }
    };
    let spoken = simplex(SENTENCES.0).await?;
    assert_eq!(
        spoken.close.as_ref().map(|c| c.0),
        Some(1000),
        "{:?}",
        spoken.close
    );
    assert!(!spoken.pcm().is_empty());
    let billed =
        crate::support::billed_settled(&db, "text_to_speech_characters", |b| *b > 0).await?;
    assert_eq!(billed, SENTENCES.0.chars().count() as i64);
    let refused = simplex(SENTENCES.1).await?;
    let (code, reason) = refused.close.clone().unwrap_or_default();
    assert_eq!(code, 4456, "{reason}");
    assert!(reason.contains("Quota exceeded"), "{reason}");
    assert!(refused.frames.is_empty(), "no audio past the limit");
    // Duplex: a short text fits (31 + 6 ≤ 40), the next one does not.
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(&mut ws, json!({"type": "convert", "text": "Hello."})).await?;
    send(&mut ws, json!({"type": "convert", "text": SENTENCES.2})).await?;
    let got = receive_all(&mut ws).await?;
    let (code, reason) = got.close.unwrap_or_default();
    assert_eq!(code, 4456, "{reason}");
    let after =
        crate::support::billed_settled(&db, "text_to_speech_characters", |b| *b >= billed).await?;
    assert!(after <= 40, "nothing billed past the limit: {after}");
    Ok(())
}

/// The charactr SDK's simplex stream (websocket-client, pinging every 5 s
/// and dropping the stream when a pong takes over 2 s) with an `on_data`
/// that takes 25 ms a frame: about four times real time, read over a minute.
const SLOW_READER: &str = r#"
import json, sys, time
import charactr_api.sdk.tts_stream_simplex as simplex
simplex.WS_API_URL = sys.argv[1]
key = sys.argv[2]
text = open(sys.argv[3]).read()
got = {"frames": 0, "bytes": 0}
closed = {}
def on_data(b):
    got["frames"] += 1
    got["bytes"] += len(b)
    time.sleep(0.025)
def on_close(code, reason):
    closed["code"] = code
    closed["reason"] = reason
start = time.monotonic()
simplex.TTSStreamSimplex({"client_key": key.split(".")[0], "api_key": key}, 101, text,
                         blocking=True, on_data=on_data, on_close=on_close)
print(json.dumps({"frames": got["frames"], "bytes": got["bytes"], "close": closed.get("code"),
                  "reason": closed.get("reason"), "seconds": time.monotonic() - start}))
"#;

/// A client reading audio at its own pace (the charactr SDK with a slow
/// `on_data`) keeps its stream for the whole text: the audio runs at most a
/// second ahead of what it has read, so its pings are answered in time and
/// the stream ends with 1000 after every frame.
#[tokio::test]
async fn a_client_reading_at_its_own_pace_keeps_its_stream() -> Result<()> {
    let (world, api, key) = stream_world("tts_slow_reader", &[]).await?;
    // About four minutes of speech: over a minute at 25 ms a frame.
    let text = world.path("speech.txt");
    std::fs::write(&text, speech_text(240))?;
    let url = api.direct.replacen("http", "ws", 1);
    let out = crate::support::python(
        SLOW_READER,
        &[
            std::path::Path::new(&url),
            std::path::Path::new(&key),
            &text,
        ],
    )
    .await?;
    let read: Value = serde_json::from_str(&out)?;
    assert_eq!(read["close"], 1000, "the SDK dropped the stream: {read}");
    let seconds_of_audio = read["bytes"].as_f64().unwrap_or(0.0) / 2.0 / 22050.0;
    assert!(seconds_of_audio > 180.0, "{read}");
    assert!(
        read["seconds"].as_f64().unwrap_or(0.0) > 55.0,
        "read for over a minute: {read}"
    );
    Ok(())
}

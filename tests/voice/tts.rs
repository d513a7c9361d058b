//! Text to speech with espeak-ng and voice conversion: voice lists, JSON and
//! form bodies, WAV/FLAC/OGG/MP3 input, duration kept and F0 moved toward the
//! profile, long texts within the audio limit, bad input.

use super::*;

async fn vc(api: &Api, key: &str, voice: &str, filename: &str, data: Vec<u8>) -> Result<Audio> {
    let form = multipart::Form::new().part(
        "file",
        multipart::Part::bytes(data).file_name(filename.to_owned()),
    );
    let mut req = fresh_client()
        .post(api.url(&format!("/v1/vc/convert?voiceId={voice}")))
        .multipart(form);
    for (k, v) in headers(key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    Ok(Audio {
        code: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.bytes().await?.to_vec(),
    })
}

/// Median F0 in Hz over voiced frames, by McLeod's method (pitch-detection crate).
fn median_f0(samples: &[f64], rate: u32) -> Option<f64> {
    const SIZE: usize = 2048;
    let mut detector = McLeodDetector::<f64>::new(SIZE, SIZE / 2);
    let mut found = Vec::new();
    let mut start = 0;
    while start + SIZE <= samples.len() {
        if let Some(p) = detector.get_pitch(&samples[start..start + SIZE], rate as usize, 2.0, 0.7)
            && (60.0..500.0).contains(&p.frequency)
        {
            found.push(p.frequency);
        }
        start += SIZE / 4;
    }
    if found.len() < 5 {
        return None;
    }
    found.sort_by(f64::total_cmp);
    Some(found[found.len() / 2])
}

/// Runs an encoder CLI from `input` to a new file with `ext`; returns its bytes.
async fn encode_with(
    world: &World,
    program: &str,
    args: &[&str],
    input: &[u8],
    ext: &str,
) -> Result<Vec<u8>> {
    let src = world.path("source.wav");
    std::fs::write(&src, input)?;
    let dst = world.path(&format!("source.{ext}"));
    let mut cmd = tokio::process::Command::new(program);
    for a in args {
        match *a {
            "IN" => cmd.arg(&src),
            "OUT" => cmd.arg(&dst),
            other => cmd.arg(other),
        };
    }
    let out = cmd
        .output()
        .await
        .with_context(|| format!("{program} must be installed (scripts/setup.sh)"))?;
    if !out.status.success() {
        bail!("{program} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(std::fs::read(&dst)?)
}

const SENTENCE: &str =
    "The quick brown fox jumps over the lazy dog. Speech synthesis should sound natural.";

fn silent_wav() -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut w = hound::WavWriter::new(
            &mut cursor,
            hound::WavSpec {
                channels: 1,
                sample_rate: 16000,
                bits_per_sample: 16,
                sample_format: hound::SampleFormat::Int,
            },
        )
        .expect("wav writer");
        for _ in 0..16000 {
            w.write_sample(0i16).expect("sample");
        }
        w.finalize().expect("finalize");
    }
    cursor.into_inner()
}

/// A world whose API takes voice uploads up to 1.5 MB, a key, and its API.
async fn voice_world(tag: &str) -> Result<(World, String, Api)> {
    let mut world = World::new(tag).await?;
    world
        .extra_env
        .push(("TOLK_MAX_VOICE_UPLOAD_BYTES".into(), "1500000".into()));
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;
    Ok((world, key, api))
}

/// The speech of [`SENTENCE`] in voice 101, checked to be a 16-bit mono WAV
/// of a plausible length whose headers give its size and duration: the
/// answer, its samples and their rate.
async fn checked_speech(api: &Api, key: &str) -> Result<(Audio, Vec<f64>, u32)> {
    let a = tts_raw(
        api,
        key,
        json!({"voiceId": 101, "text": SENTENCE}).to_string().into(),
        true,
    )
    .await?;
    assert_eq!(a.code, 200, "{}", a.message());
    assert_eq!(a.headers["content-type"], "audio/wav");
    assert_eq!(
        a.headers["audio-size-bytes"].to_str()?,
        a.body.len().to_string()
    );
    let (speech, rate) = read_wav(&a.body)?;
    assert_eq!(rate, 22050);
    let secs = speech.len() as f64 / f64::from(rate);
    let header_ms: f64 = a.headers["audio-duration-ms"].to_str()?.parse()?;
    assert!(
        (header_ms / 1000.0 - secs).abs() < 0.01,
        "{header_ms} ms vs {secs} s"
    );
    assert!((3.0..12.0).contains(&secs), "{secs} s");
    Ok((a, speech, rate))
}

/// Voice lists: arrays of {id, name, description}, ids disjoint.
#[tokio::test]
async fn tts_and_vc_voice_lists_have_disjoint_ids() -> Result<()> {
    let (_world, key, api) = voice_world("voice_lists").await?;

    let (code, tts_list) = get_json(&api, &key, "/v1/tts/voices").await?;
    assert_eq!(code, 200, "{tts_list}");
    let (code, vc_list) = get_json(&api, &key, "/v1/vc/voices").await?;
    assert_eq!(code, 200, "{vc_list}");
    let ids = |v: &Value| -> Vec<i64> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["id"].as_i64())
            .collect()
    };
    let (tts_ids, vc_ids) = (ids(&tts_list), ids(&vc_list));
    assert!(tts_ids.len() >= 10 && vc_ids.len() >= 4);
    assert!(tts_ids.iter().all(|i| !vc_ids.contains(i)));
    assert!(tts_list[0]["name"].is_string() && tts_list[0]["description"].is_string());
    Ok(())
}

/// Authentication: both headers, same key; X-Client-ID also accepted.
#[tokio::test]
async fn voice_requests_need_both_key_headers_of_one_key() -> Result<()> {
    let (_world, key, api) = voice_world("voice_auth").await?;

    let client_id = key.split_once('.').map(|(a, _)| a).unwrap_or_default();
    for (api_key, client) in [
        (None, Some(client_id.to_owned())),
        (Some(key.clone()), None),
        (Some(key.clone()), Some("0".repeat(32))),
        (
            Some(format!("{client_id}.wrong")),
            Some(client_id.to_owned()),
        ),
    ] {
        let mut req = api.http.get(api.url("/v1/tts/voices"));
        if let Some(k) = api_key {
            req = req.header("X-Api-Key", k);
        }
        if let Some(c) = client {
            req = req.header("X-Client-Key", c);
        }
        let res = req.send().await?;
        assert_eq!(res.status(), 403);
        let body: Value = res.json().await?;
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("X-Api-Key")
        );
    }
    let res = api
        .http
        .get(api.url("/v1/vc/voices"))
        .header("x-api-key", &key)
        .header("X-Client-ID", client_id)
        .send()
        .await?;
    assert_eq!(res.status(), 200);
    Ok(())
}

/// Text to speech: a 16-bit mono WAV with the three headers.
#[tokio::test]
async fn text_to_speech_is_a_16_bit_mono_wav_with_its_headers() -> Result<()> {
    let (_world, key, api) = voice_world("tts_wav").await?;

    checked_speech(&api, &key).await?;
    Ok(())
}

/// Bad TTS requests: the status and a message naming the fault.
#[tokio::test]
async fn bad_text_to_speech_requests_are_refused_with_a_reason() -> Result<()> {
    let (_world, key, api) = voice_world("tts_bad").await?;

    for (body, code, words) in [
        (json!({"voiceId": 101}).to_string(), 400, "text"),
        (
            json!({"voiceId": 101, "text": ""}).to_string(),
            400,
            "empty",
        ),
        (
            json!({"voiceId": 101, "text": 7}).to_string(),
            400,
            "string",
        ),
        (
            json!({"voiceId": "101", "text": "hi"}).to_string(),
            400,
            "integer",
        ),
        (json!({"text": "hi"}).to_string(), 400, "voiceId"),
        (
            json!({"voiceId": 203, "text": "hi"}).to_string(),
            400,
            "voice-conversion",
        ),
        (
            json!({"voiceId": 999, "text": "hi"}).to_string(),
            404,
            "not found",
        ),
        ("{not json".to_owned(), 400, "JSON"),
        (
            json!({"voiceId": 101, "text": "x".repeat(2 << 20)}).to_string(),
            413,
            "larger",
        ),
    ] {
        let a = tts_raw(&api, &key, body.clone().into(), true).await?;
        assert_eq!(
            a.code,
            code,
            "{}: {}",
            &body[..body.len().min(60)],
            a.message()
        );
        assert!(a.message().contains(words), "{}: {}", words, a.message());
    }
    Ok(())
}

/// Voice conversion: duration kept, F0 moved to the profile, for WAV, FLAC,
/// OGG/Vorbis and MP3 input; bad conversions refused; conversions in the
/// ledger. The input is the speech of the text-to-speech endpoint.
#[tokio::test]
async fn voice_conversion_keeps_the_duration_and_moves_f0_to_the_profile() -> Result<()> {
    let (world, key, api) = voice_world("voice").await?;

    let (a, speech, rate) = checked_speech(&api, &key).await?;
    let secs = speech.len() as f64 / f64::from(rate);

    let client_id = key.split_once('.').map(|(a, _)| a).unwrap_or_default();

    // Voice conversion: duration kept, F0 moved to the profile.
    let source_f0 = median_f0(&speech, rate).context("no F0 in the TTS output")?;
    for (voice, target) in [(204, 240.0), (201, 85.0)] {
        let a = vc(&api, &key, &voice.to_string(), "speech.wav", a.body.clone()).await?;
        assert_eq!(a.code, 200, "{}", a.message());
        assert_eq!(a.headers["content-type"], "audio/wav");
        let (out, out_rate) = read_wav(&a.body)?;
        let out_secs = out.len() as f64 / f64::from(out_rate);
        assert!(
            (out_secs / secs - 1.0).abs() < 0.05,
            "{voice}: {out_secs} s vs {secs} s"
        );
        let f0 = median_f0(&out, out_rate).context("no F0 in the converted audio")?;
        assert!(
            (f0 - target).abs() < (source_f0 - target).abs() * 0.5,
            "voice {voice}: F0 {source_f0:.0} Hz → {f0:.0} Hz, target {target} Hz"
        );
        assert!(
            (f0 / target - 1.0).abs() < 0.15,
            "voice {voice}: {f0:.0} Hz vs {target} Hz"
        );
    }

    // FLAC, OGG/Vorbis and MP3 input.
    let flac = encode_with(
        &world,
        "flac",
        &["-s", "-f", "-o", "OUT", "IN"],
        &a.body,
        "flac",
    )
    .await?;
    let ogg = encode_with(&world, "oggenc", &["-Q", "-o", "OUT", "IN"], &a.body, "ogg").await?;
    let mp3 = encode_with(
        &world,
        "lame",
        &["--quiet", "-b", "64", "IN", "OUT"],
        &a.body,
        "mp3",
    )
    .await?;
    for (name, data) in [
        ("speech.flac", flac),
        ("speech.ogg", ogg),
        ("speech.mp3", mp3),
    ] {
        let r = vc(&api, &key, "203", name, data).await?;
        assert_eq!(r.code, 200, "{name}: {}", r.message());
        let (out, out_rate) = read_wav(&r.body)?;
        let out_secs = out.len() as f64 / f64::from(out_rate);
        assert!(
            (out_secs / secs - 1.0).abs() < 0.05,
            "{name}: {out_secs} s vs {secs} s"
        );
        let f0 = median_f0(&out, out_rate).context("no F0")?;
        assert!((f0 / 190.0 - 1.0).abs() < 0.15, "{name}: {f0:.0} Hz");
    }

    // Bad conversions.
    let silent = silent_wav();
    let mut truncated = a.body.clone();
    truncated.truncate(40);
    for (voice, name, data, code, words) in [
        (
            "203",
            "x.wav",
            b"definitely not audio".to_vec(),
            400,
            "not audio",
        ),
        ("203", "x.wav", silent.clone(), 400, "silent"),
        ("203", "x.wav", truncated, 400, "audio"),
        ("203", "x.wav", Vec::new(), 400, "empty"),
        ("101", "x.wav", a.body.clone(), 400, "text-to-speech"),
        ("999", "x.wav", a.body.clone(), 404, "not found"),
        ("abc", "x.wav", a.body.clone(), 400, "integer"),
        ("203", "x.wav", vec![1u8; 1_600_000], 413, "larger"),
    ] {
        let r = vc(&api, &key, voice, name, data).await?;
        assert_eq!(r.code, code, "{voice} {words}: {}", r.message());
        assert!(r.message().contains(words), "{words}: {}", r.message());
    }
    let res = api
        .http
        .post(api.url("/v1/vc/convert?voiceId=203"))
        .header("X-Api-Key", &key)
        .header("X-Client-Key", client_id)
        .multipart(multipart::Form::new().text("other", "x"))
        .send()
        .await?;
    assert_eq!(res.status(), 400);
    let res = api
        .http
        .post(api.url("/v1/vc/convert"))
        .header("X-Api-Key", &key)
        .header("X-Client-Key", client_id)
        .multipart(multipart::Form::new().part("file", multipart::Part::bytes(a.body.clone())))
        .send()
        .await?;
    assert_eq!(res.status(), 400);

    // Conversions are in the ledger (milliseconds of input).
    let db = world.db().await?;
    let enough = |ms: &i64| *ms as f64 >= secs * 1000.0 * 5.0 * 0.95;
    let ms = crate::support::billed_settled(&db, "speech_to_speech_milliseconds", enough).await?;
    assert!(enough(&ms), "{ms} ms recorded");
    Ok(())
}

#[tokio::test]
async fn long_text_to_speech_streams_within_the_audio_limit() -> Result<()> {
    let mut world = World::new("tts_long").await?;
    world
        .extra_env
        .push(("TOLK_MAX_VOICE_SECONDS".into(), "100".into()));
    let key = world.create_key("tts", false).await?;
    let api = world.start_api().await?;

    // Longer than 30 s: streamed behind a streaming WAV header, no size headers.
    let body = json!({"voiceId": 101, "text": speech_text(60)}).to_string();
    let a = tts_raw(&api, &key, body.into(), true).await?;
    assert_eq!(a.code, 200, "{}", a.message());
    assert_eq!(a.headers["content-type"], "audio/wav");
    assert!(!a.headers.contains_key("audio-size-bytes"));
    assert_eq!(&a.body[..4], b"RIFF");
    assert_eq!(&a.body[36..40], b"data");
    let pcm_secs = (a.body.len() - 44) as f64 / 2.0 / 22050.0;
    assert!((30.0..100.0).contains(&pcm_secs), "{pcm_secs} s");
    let samples: Vec<i16> = a.body[44..]
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert!(samples.iter().any(|s| s.unsigned_abs() > 1000), "silent");

    // A text that cannot fit the limit: 413 before any synthesis.
    let body = json!({"voiceId": 101, "text": "word ".repeat(700)}).to_string();
    let a = tts_raw(&api, &key, body.into(), true).await?;
    assert_eq!(a.code, 413);
    assert!(a.message().contains("100 seconds"), "{}", a.message());

    // Speech that passes the estimate but outgrows the limit while streaming:
    // the stream ends in an error, never a WAV that looks complete.
    let body = json!({"voiceId": 101, "text": speech_text(160)}).to_string();
    let mut req = fresh_client()
        .post(api.url("/v1/tts/convert"))
        .header("Content-Type", "application/json")
        .body(body);
    for (k, v) in headers(&key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    assert_eq!(res.status(), 200);
    assert!(
        res.bytes().await.is_err(),
        "a truncated stream must not end cleanly"
    );
    Ok(())
}

/// Speech limits are checked before any work: voice conversion answers 456
/// once the key's speech-to-speech limit is reached (the conversion admitted
/// before is billed in full), and a voice job is refused at creation with
/// the 403 its operation documents once the speech-to-text limit is.
#[tokio::test]
async fn speech_limits_refuse_conversions_and_jobs_before_any_work() -> Result<()> {
    let mut world = World::new("voice_limits").await?;
    let key = world.create_key("voice-limits", false).await?;
    let api = world.start_api().await?;
    let key_id = key.split('.').next().unwrap_or_default().to_owned();
    let db = world.db().await?;
    sqlx::query(
        "UPDATE api_keys SET speech_to_speech_milliseconds_limit = 1,
                             speech_to_text_milliseconds_limit = 0 WHERE key_id = $1",
    )
    .bind(&key_id)
    .execute(&db)
    .await?;
    let speech = tts(&api, &key, 101, "The house is big.").await?;
    let first = vc(&api, &key, "203", "speech.wav", speech.clone()).await?;
    assert_eq!(first.code, 200, "{}", first.message());
    let billed =
        crate::support::billed_settled(&db, "speech_to_speech_milliseconds", |b| *b > 0).await?;
    let second = vc(&api, &key, "203", "speech.wav", speech.clone()).await?;
    assert_eq!(second.code, 456, "{}", second.message());
    assert!(
        second.message().contains("Quota exceeded"),
        "{}",
        second.message()
    );
    let after =
        crate::support::billed_settled(&db, "speech_to_speech_milliseconds", |b| *b >= billed)
            .await?;
    assert_eq!(after, billed, "nothing billed past the limit");
    let (code, body) = create_job(
        &api,
        &key,
        &json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav",
                            "content_length": speech.len()},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("speech-to-text"),
        "{body}"
    );
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM voice_jobs")
        .fetch_one(&db)
        .await?;
    assert_eq!(jobs, 0);
    Ok(())
}

/// Text to speech is billed in characters against the key's character
/// limit: a request whose text does not fit in what remains answers 456
/// before any synthesis and bills nothing; `/v2/usage` counts what was spoken.
#[tokio::test]
async fn text_to_speech_is_billed_in_characters_and_refused_past_the_limit() -> Result<()> {
    let mut world = World::new("tts_limits").await?;
    let key = world.create_key("tts-limits", false).await?;
    let api = world.start_api().await?;
    let key_id = key.split('.').next().unwrap_or_default().to_owned();
    let db = world.db().await?;
    sqlx::query("UPDATE api_keys SET character_limit = 30 WHERE key_id = $1")
        .bind(&key_id)
        .execute(&db)
        .await?;
    let spoken = "The house is big.";
    tts(&api, &key, 101, spoken).await?;
    let billed =
        crate::support::billed_settled(&db, "text_to_speech_characters", |b| *b > 0).await?;
    assert_eq!(billed, spoken.chars().count() as i64);
    let body = json!({"voiceId": 101, "text": "The garden is very small."}).to_string();
    let refused = tts_raw(&api, &key, body.into(), true).await?;
    assert_eq!(refused.code, 456, "{}", refused.message());
    assert!(
        refused.message().contains("Quota exceeded"),
        "{}",
        refused.message()
    );
    let after =
        crate::support::billed_settled(&db, "text_to_speech_characters", |b| *b >= billed).await?;
    assert_eq!(after, billed, "nothing billed past the limit");
    let (code, usage) =
        crate::support::call(&api, &key, reqwest::Method::GET, "/v2/usage", None).await?;
    assert_eq!(code, 200, "{usage}");
    assert_eq!(usage["character_count"], billed, "{usage}");
    assert_eq!(usage["character_limit"], 30, "{usage}");
    Ok(())
}

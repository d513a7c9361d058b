//! Voice translation jobs on the queue: upload, transcription, translation,
//! speech, and uploads straight to an S3 bucket.

use super::*;

/// A world with an API, a voice worker and a key, for a test named `name`.
async fn voice_world(name: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(name).await?;
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;
    world.start_worker("voice")?;
    Ok((world, api, key))
}

/// A voice job created for real speech (espeak-ng through our own TTS
/// endpoint) with four targets: the transcript, Spanish text and Spanish
/// speech at 16 and 24 kHz.
struct SpeechJob {
    speech: Vec<u8>,
    id: String,
    upload_url: String,
    signature: String,
}

impl SpeechJob {
    async fn create(api: &Api, key: &str) -> Result<SpeechJob> {
        let speech = tts(api, key, 101, "I would like a cup of coffee please.").await?;
        let request = json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
            "parameters": {"source_language": "en"},
            "targets": [
                {"language": "en", "type": "text/plain"},
                {"language": "es", "type": "text/plain"},
                {"language": "es", "type": "audio/pcm;encoding=s16le;rate=16000"},
                {"language": "ES", "type": "audio/pcm;encoding=s16le;rate=24000"},
            ],
        });
        let (code, created) = create_job(api, key, &request).await?;
        anyhow::ensure!(code == 201, "{created}");
        let field = |name: &str| -> Result<String> {
            Ok(created[name].as_str().context(name.to_owned())?.to_owned())
        };
        Ok(SpeechJob {
            speech,
            id: field("job_id")?,
            upload_url: field("upload_url")?,
            signature: field("signature")?,
        })
    }

    /// `/v1/jobs/voice/translate/{id}`.
    fn path(&self) -> String {
        format!("/v1/jobs/voice/translate/{}", self.id)
    }
}

/// Before its upload a job is pending, seen only by its organization; the
/// upload needs the job's signature and is taken once.
#[tokio::test]
async fn a_voice_job_waits_for_its_signed_upload_and_is_private() -> Result<()> {
    let (world, api, key) = voice_world("voicejob_upload").await?;
    let other = world.create_key_in("other").await?;
    let job = SpeechJob::create(&api, &key).await?;
    assert!(uuid::Uuid::parse_str(&job.id).is_ok());
    let (code, body) = api.get(&key, &job.path()).await?;
    assert_eq!(code, 200);
    assert_eq!(
        body["results"],
        json!([{"status": "pending"}, {"status": "pending"}, {"status": "pending"}, {"status": "pending"}])
    );
    assert_eq!(body["product"], "voice");
    assert_eq!(
        body["targets"][3]["type"],
        "audio/pcm;encoding=s16le;rate=24000"
    );
    assert_eq!(api.get(&other, &job.path()).await?.0, 404);
    let unknown = "/v1/jobs/voice/translate/a74d88fb-ed2a-4943-a664-a4512398b994";
    assert_eq!(api.get(&key, unknown).await?.0, 404);

    let speech = &job.speech;
    assert_eq!(upload_to(&job.upload_url, None, speech.clone()).await?, 403);
    assert_eq!(
        upload_to(&job.upload_url, Some("1.abc"), speech.clone()).await?,
        403
    );
    assert_eq!(
        upload_to(&job.upload_url, Some(&job.signature), speech.clone()).await?,
        200
    );
    assert_eq!(
        upload_to(&job.upload_url, Some(&job.signature), speech.clone()).await?,
        400
    );
    Ok(())
}

/// An uploaded job recognises the speech, translates it and speaks the
/// translation: each result downloads with its signature only, in its media
/// type; downloaded results say so, and the recognised milliseconds are
/// billed once.
#[tokio::test]
async fn a_voice_job_recognises_translates_and_speaks() -> Result<()> {
    let (world, api, key) = voice_world("voicejob_results").await?;
    let job = SpeechJob::create(&api, &key).await?;
    let (samples, rate) = read_wav(&job.speech)?;
    let speech_ms = samples.len() as i64 * 1000 / i64::from(rate);
    let code = upload_to(&job.upload_url, Some(&job.signature), job.speech.clone()).await?;
    assert_eq!(code, 200);

    let done = wait_job(&api, &key, &job.id).await?;
    let results = done["results"].as_array().context("results")?;
    assert_eq!(results.len(), 4);
    let mut outputs = Vec::new();
    for r in results {
        assert_eq!(r["status"], "complete", "{done}");
        let url = r["download_url"].as_str().context("download_url")?;
        let sig = r["signature"].as_str().context("signature")?;
        let res = fresh_client().get(url).send().await?;
        assert_eq!(res.status(), 403, "a download needs its signature");
        let res = fresh_client()
            .get(url)
            .header("Authorization", format!("DeepL-Signature {sig}"))
            .send()
            .await?;
        assert_eq!(res.status(), 200);
        let ct = res.headers()["content-type"].to_str()?.to_owned();
        outputs.push((ct, res.bytes().await?.to_vec()));
    }
    // Recognition heard the key words; translation made Spanish of them.
    let transcript = String::from_utf8(outputs[0].1.clone())?;
    assert!(outputs[0].0.starts_with("text/plain"));
    assert!(
        transcript.contains("coffee") && transcript.contains("cup"),
        "{transcript}"
    );
    let spanish = String::from_utf8(outputs[1].1.clone())?.to_lowercase();
    assert!(
        spanish.contains("café") || spanish.contains("cafe"),
        "{spanish}"
    );
    assert!(spanish.contains("taza"), "{spanish}");
    // Spanish speech: raw PCM at 16 and 24 kHz, of the same length.
    assert_eq!(outputs[2].0, "audio/pcm;encoding=s16le;rate=16000");
    let pcm_secs = outputs[2].1.len() as f64 / 2.0 / 16000.0;
    assert!((1.0..10.0).contains(&pcm_secs), "{pcm_secs} s");
    assert_eq!(outputs[3].0, "audio/pcm;encoding=s16le;rate=24000");
    let pcm24_secs = outputs[3].1.len() as f64 / 2.0 / 24000.0;
    assert!((pcm24_secs / pcm_secs - 1.0).abs() < 0.02);
    // Downloaded results say so.
    let (_, after) = api.get(&key, &job.path()).await?;
    assert_eq!(after["results"][0]["status"], "downloaded");
    assert!(after["usage"]["storage_used"].as_i64().unwrap_or(0) > job.speech.len() as i64);

    // The ledger has the recognised milliseconds, once.
    let db = world.db().await?;
    let billed: Vec<i64> = sqlx::query_scalar(
        "SELECT amount FROM usage_events WHERE kind = 'speech_to_text_milliseconds' AND document_id = $1",
    )
    .bind(&job.id)
    .fetch_all(&db)
    .await?;
    assert_eq!(billed, [speech_ms]);
    Ok(())
}

/// Corrupt audio fails the job with a message, per target.
#[tokio::test]
async fn corrupt_audio_fails_the_voice_job_with_a_message() -> Result<()> {
    let (_world, api, key) = voice_world("voicejob_corrupt").await?;
    let (code, created) = create_job(
        &api,
        &key,
        &json!({
            "source_file": {"name": "x.mp3", "content_type": "audio/mpeg", "content_length": 100},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    assert_eq!(code, 201, "{created}");
    let bad_id = created["job_id"].as_str().context("job_id")?.to_owned();
    let code = upload_to(
        created["upload_url"].as_str().context("url")?,
        created["signature"].as_str(),
        b"this is not audio at all".to_vec(),
    )
    .await?;
    assert_eq!(code, 200);
    let failed = wait_job(&api, &key, &bad_id).await?;
    assert_eq!(failed["results"][0]["status"], "failed");
    assert!(
        failed["results"][0]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("audio"),
        "{failed}"
    );
    Ok(())
}

/// A voice job that cannot be done is refused at creation with a 400
/// naming what is wrong; one without a key with a 403.
#[tokio::test]
async fn bad_voice_job_requests_are_refused_naming_the_field() -> Result<()> {
    let (_world, api, key) = voice_world("voicejob_bad").await?;
    let file = json!({"name": "a.wav", "content_type": "audio/wav", "content_length": 1000});
    for (body, code, words) in [
        (
            json!({"source_file": file, "parameters": {"source_language": "de"}, "targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "speech recognition",
        ),
        (
            json!({"source_file": file, "targets": [{"language": "es", "type": "audio/opus"}]}),
            400,
            "not produced",
        ),
        (
            json!({"source_file": file, "targets": [{"language": "es", "type": "audio/nonsense"}]}),
            400,
            "/targets/0/type",
        ),
        (
            json!({"source_file": file, "targets": [{"language": "es", "type": "audio/wav"}]}),
            400,
            "/targets/0/type",
        ),
        (json!({"source_file": file, "targets": []}), 400, "/targets"),
        (
            json!({"source_file": file, "targets": [{"language": "xx", "type": "text/plain"}]}),
            400,
            "/targets/0/language",
        ),
        (
            json!({"targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "/source_file",
        ),
        (
            json!({"source_file": {"name": "a.wav", "content_type": "video/mp4", "content_length": 5}, "targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "content_type",
        ),
        (
            json!({"source_file": {"name": "a.wav", "content_type": "audio/wav", "content_length": 900_000_000}, "targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "content_length",
        ),
    ] {
        let (c, b) = create_job(&api, &key, &body).await?;
        assert_eq!(c, code, "{body}: {b}");
        assert!(
            b["message"].as_str().unwrap_or_default().contains(words),
            "{words}: {b}"
        );
    }
    let res = api
        .http
        .post(api.url("/v1/jobs/voice/translate"))
        .json(&json!({"source_file": file, "targets": [{"language": "es", "type": "text/plain"}]}))
        .send()
        .await?;
    assert_eq!(res.status(), 403);
    Ok(())
}

#[tokio::test]
async fn voice_jobs_upload_straight_to_an_s3_bucket() -> Result<()> {
    let mut world = World::new("voices3").await?;
    let server = crate::s3::start_s3(&world).await?;
    world.extra_env = crate::s3::s3_env(&server);
    world.object_store = format!("s3://{}", crate::s3::BUCKET);
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;
    world.start_worker("voice")?;

    let speech = tts(&api, &key, 101, "I would like a cup of coffee please.").await?;
    let res = api
        .keyed(reqwest::Method::POST, "/v1/jobs/voice/translate?include=signed_url", &key)
        .json(&json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
            "targets": [{"language": "en", "type": "text/plain"}],
        }))
        .send()
        .await?;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await?;
    let id = created["job_id"].as_str().context("job_id")?.to_owned();
    let direct = created["signed_upload_url"]
        .as_str()
        .context("signed_upload_url")?;
    assert!(direct.starts_with(&server.endpoint), "{direct}");
    assert!(direct.contains("X-Amz-Signature"), "{direct}");

    // The client uploads to the bucket itself, without any header.
    let res = fresh_client()
        .put(direct)
        .body(speech.clone())
        .send()
        .await?;
    assert!(res.status().is_success(), "{}", res.status());

    // Status calls notice the object, enqueue the job, and report the result.
    let done = wait_job(&api, &key, &id).await?;
    assert_eq!(done["results"][0]["status"], "complete", "{done}");
    let res = api
        .keyed(
            reqwest::Method::GET,
            &format!("/v1/jobs/voice/translate/{id}?include=signed_url"),
            &key,
        )
        .send()
        .await?;
    let body: Value = res.json().await?;
    let url = body["results"][0]["signed_download_url"]
        .as_str()
        .context("signed_download_url")?;
    assert!(url.starts_with(&server.endpoint), "{url}");
    let text = fresh_client().get(url).send().await?.text().await?;
    assert!(text.contains("coffee"), "{text}");
    Ok(())
}

/// The English transcript of a voice job over `speech` (its one text/plain
/// English target), with `parameters` as given.
async fn transcript_of(api: &Api, key: &str, speech: &[u8], parameters: Value) -> Result<String> {
    let request = json!({
        "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
        "parameters": parameters,
        "targets": [{"language": "en", "type": "text/plain"}],
    });
    let (code, created) = create_job(api, key, &request).await?;
    assert_eq!(code, 201, "{created}");
    let id = created["job_id"].as_str().context("job_id")?;
    let url = created["upload_url"].as_str().context("upload_url")?;
    let signature = created["signature"].as_str().context("signature")?;
    assert_eq!(upload_to(url, Some(signature), speech.to_vec()).await?, 200);
    let done = wait_job(api, key, id).await?;
    let result = &done["results"][0];
    assert_eq!(result["status"], "complete", "{done}");
    let res = fresh_client()
        .get(result["download_url"].as_str().context("download_url")?)
        .header(
            "Authorization",
            format!(
                "DeepL-Signature {}",
                result["signature"].as_str().context("signature")?
            ),
        )
        .send()
        .await?;
    Ok(res.text().await?)
}

#[tokio::test]
async fn spoken_terms_bias_a_voice_jobs_recognition() -> Result<()> {
    let mut world = World::new("voiceterms").await?;
    let key = world.create_key("voice", false).await?;
    let other = world.create_key_in("other").await?;
    let api = world.start_api().await?;
    world.start_worker("voice")?;
    let speech = tts(
        &api,
        &key,
        101,
        "We met the engineers from Tolkien yesterday.",
    )
    .await?;
    let (code, terms) = api
        .post(
            &key,
            "/v3/spoken-terms",
            &json!({"name": "Names", "term_lists": [
                {"lang": "en", "entries": "Tolkien\nKubernetes"},
                {"lang": "fr", "entries": "Tolkien"},
            ]}),
        )
        .await?;
    assert_eq!(code, 201, "{terms}");
    let terms_id = terms["spoken_terms_id"].as_str().context("id")?;

    // The same audio: without the terms the name is misheard, with them it
    // is recognised.
    let plain = transcript_of(&api, &key, &speech, json!({"source_language": "en"})).await?;
    assert!(!plain.contains("tolkien"), "{plain}");
    let with_terms = json!({"source_language": "en", "spoken_terms_id": terms_id});
    let biased = transcript_of(&api, &key, &speech, with_terms.clone()).await?;
    assert!(
        biased.contains("Tolkien"),
        "written as the list has it: {biased}"
    );
    assert!(biased.contains("yesterday"), "{biased}");
    // The job says which collection it used.
    let (code, created) = create_job(
        &api,
        &key,
        &json!({"source_file": {"name": "s.wav", "content_type": "audio/wav",
                                "content_length": speech.len()},
                "parameters": with_terms,
                "targets": [{"language": "en", "type": "text/plain"}]}),
    )
    .await?;
    assert_eq!(code, 201, "{created}");
    let job_id = created["job_id"].as_str().context("job_id")?;
    let (_, job) = api
        .get(&key, &format!("/v1/jobs/voice/translate/{job_id}"))
        .await?;
    assert_eq!(job["parameters"]["spoken_terms_id"], terms_id, "{job}");

    // A collection's own threshold is the one used: at 0.1 nothing this
    // faint is spotted.
    let (code, patched) = crate::support::call(
        &api,
        &key,
        reqwest::Method::PATCH,
        &format!("/v3/spoken-terms/{terms_id}"),
        Some(&json!({"keyword_threshold": 0.1})),
    )
    .await?;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["keyword_threshold"], 0.1);
    let strict = transcript_of(&api, &key, &speech, with_terms).await?;
    assert!(!strict.contains("Tolkien"), "{strict}");

    // Another organization's terms, an unknown id and a malformed one are
    // refused when the job is created.
    let file =
        json!({"name": "s.wav", "content_type": "audio/wav", "content_length": speech.len()});
    for (k, id) in [
        (&other, terms_id),
        (&key, "a74d88fb-ed2a-4943-a664-a4512398b994"),
        (&key, "nope"),
    ] {
        let (code, body) = create_job(
            &api,
            k,
            &json!({"source_file": file, "parameters": {"spoken_terms_id": id},
                    "targets": [{"language": "en", "type": "text/plain"}]}),
        )
        .await?;
        crate::support::error(code, &body, 400, "spoken_terms_id");
    }
    Ok(())
}

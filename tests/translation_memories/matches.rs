//! Memory matches applied to translations: fuzzy thresholds in `/v2/translate`
//! and document jobs.

use super::*;

#[tokio::test]
async fn fuzzy_matches_at_74_75_and_100_percent() -> Result<()> {
    let mut world = World::new("tm_fuzzy").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    // A 100-character source: n edits score exactly 100 − n.
    let source: String = "The quick brown fox jumps over the lazy dog near the river bank while the sun sets slowly in the west"
        .chars()
        .take(100)
        .collect();
    assert_eq!(source.chars().count(), 100);
    let edited = |n: usize| -> String {
        source
            .chars()
            .enumerate()
            .map(|(i, c)| if i >= 100 - n { 'z' } else { c })
            .collect()
    };
    let tmx = tmx_of(
        &[
            (&source, "MEMORIA EXACTA"),
            ("Good night.", "Buenas noches."),
        ],
        "es",
    );
    let (id, _) = import_ok(&api, &key, "fuzzy", tmx.as_bytes()).await?;

    let request = |threshold: Option<u8>| {
        let mut b = json!({"text": [source.clone(), edited(25), edited(26), "Hello world."],
                           "source_lang": "EN", "target_lang": "ES", "translation_memory_id": id});
        if let Some(t) = threshold {
            b["translation_memory_threshold"] = json!(t);
        }
        b
    };
    let (code, body) = api.translate(&key, &request(Some(75)), None).await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body);
    assert_eq!(out[0], "MEMORIA EXACTA", "100 %");
    assert_eq!(out[1], "MEMORIA EXACTA", "75 % at threshold 75");
    assert_ne!(out[2], "MEMORIA EXACTA", "74 % below threshold 75");
    assert!(!out[2].is_empty(), "74 %: the engine's translation");
    assert_ne!(out[3], "MEMORIA EXACTA");
    // The default threshold is 75 too.
    let (_, body) = api.translate(&key, &request(None), None).await?;
    assert_eq!(translated_texts(&body)[..3], out[..3]);
    // At 100 only the exact match applies.
    let (_, body) = api.translate(&key, &request(Some(100)), None).await?;
    let exact = translated_texts(&body);
    assert_eq!(exact[0], "MEMORIA EXACTA");
    assert_ne!(exact[1], "MEMORIA EXACTA");
    // Form bodies too; a match inside split lines keeps the layout.
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", &key)
        .form(&[
            ("text", "Good night.\nGood night."),
            ("source_lang", "EN"),
            ("target_lang", "ES"),
            ("translation_memory_id", id.as_str()),
            ("translation_memory_threshold", "90"),
        ])
        .send()
        .await?;
    let body: Value = res.json().await?;
    assert_eq!(
        translated_texts(&body),
        ["Buenas noches.\nBuenas noches."],
        "{body}"
    );
    Ok(())
}

#[tokio::test]
async fn document_jobs_apply_the_memory() -> Result<()> {
    let mut world = World::new("tm_docs").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let tmx = tmx_of(
        &[
            (
                "The meeting starts at nine.",
                "MEMORIA: la reunión empieza a las nueve.",
            ),
            ("Good night.", "Buenas noches."),
        ],
        "es",
    );
    let (id, _) = import_ok(&api, &key, "docs", tmx.as_bytes()).await?;
    let doc = b"The meeting starts at nine.\n\nThe house is big.\n".to_vec();
    let (doc_id, doc_key) = api
        .upload_ok(
            &key,
            "memo.txt",
            doc.clone(),
            &[
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("translation_memory_id", &id),
                ("translation_memory_threshold", "90"),
            ],
        )
        .await?;
    let st = api
        .wait(&key, &doc_id, &doc_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (code, _, bytes) = api.download(&key, &doc_id, &doc_key).await?;
    assert_eq!(code, 200);
    let text = String::from_utf8(bytes)?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "MEMORIA: la reunión empieza a las nueve.",
        "{text}"
    );
    assert!(
        !lines[2].is_empty() && !lines[2].contains("MEMORIA"),
        "{text}"
    );

    // An unknown memory, or one without the pair: 404; a bad threshold: 400.
    let unknown = "3fa85f64-5717-4562-b3fc-2c963f66afa6";
    for (fields, expected) in [
        (vec![("translation_memory_id", unknown)], 404),
        (vec![("translation_memory_id", id.as_str())], 200),
        (
            vec![
                ("translation_memory_id", id.as_str()),
                ("translation_memory_threshold", "101"),
            ],
            400,
        ),
        (vec![("translation_memory_threshold", "80")], 400),
    ] {
        let mut all = vec![("source_lang", "EN"), ("target_lang", "ES")];
        all.extend(fields.iter().copied());
        let (code, body) = api.upload(&key, "memo.txt", doc.clone(), &all).await?;
        assert_eq!(code, expected, "{fields:?}: {body}");
        if code != 200 {
            assert!(body["message"].is_string(), "{body}");
        }
    }
    let (code, body) = api
        .upload(
            &key,
            "memo.txt",
            doc,
            &[
                ("source_lang", "EN"),
                ("target_lang", "FR"),
                ("translation_memory_id", &id),
            ],
        )
        .await?;
    assert_eq!(code, 404, "{body}");
    Ok(())
}

//! Quality evaluation jobs (`POST /v1/quality-evaluation`, `GET
//! /v1/quality-evaluation/{job_id}`) against real API and worker processes, real
//! Apertium and PostgreSQL.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::support::{Answer, Api, World, translated_texts};

/// Submits an evaluation: (status, its Retry-After, body).
async fn submit(api: &Api, key: &str, body: &Value) -> Result<(u16, Option<String>, Value)> {
    let a = Answer::of(
        api.keyed(reqwest::Method::POST, "/v1/quality-evaluation", key)
            .json(body),
    )
    .await?;
    Ok((a.code, a.header("retry-after").map(str::to_owned), a.body))
}

/// Submits a one-segment evaluation (EN → ES) that must be accepted; its
/// poll URL.
pub async fn start_one(api: &Api, key: &str) -> Result<String> {
    let body = json!({
        "metadata": {"source_language": "en", "target_language": "es"},
        "segments": [{"source": "The house is big.", "target": "La casa es grande."}],
    });
    let (code, _, body) = submit(api, key, &body).await?;
    if code != 202 {
        bail!("the evaluation answered {code}: {body}");
    }
    match body["poll_url"].as_str() {
        Some(poll) => Ok(poll.to_owned()),
        None => bail!("no poll_url in {body}"),
    }
}

/// Polls until the job leaves `processing`.
pub async fn wait_done(api: &Api, key: &str, path: &str) -> Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = api.get(key, path).await?;
        if code == 200 {
            return Ok(body);
        }
        if code != 202 || body["status"] != "processing" {
            bail!("unexpected poll answer {code}: {body}");
        }
        if Instant::now() > deadline {
            bail!("evaluation not done in time: {body}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The text under a span of `text`.
fn at(text: &str, span: &Value) -> String {
    let s = span["start"].as_u64().unwrap_or(0) as usize;
    let e = span["end"].as_u64().unwrap_or(0) as usize;
    text.chars().skip(s).take(e.saturating_sub(s)).collect()
}

#[tokio::test]
async fn quality_evaluation_polls_to_done_with_a_real_worker() -> Result<()> {
    let mut world = World::new("quality_done").await?;
    let key = world.create_key("q", false).await?;
    let api = world.start_api().await?;

    // A clean corpus: real Apertium output of /v2/translate.
    let clean_src = [
        "The company hired 250 new employees last year.",
        "We do not accept payments in cash.",
        "The report was published on 12 March 2024.",
        "The house has three bedrooms and a large garden.",
    ];
    let clean_tgt = translated_texts(&api.en_es(&key, &clean_src, None).await?.1);
    assert_eq!(clean_tgt.len(), clean_src.len());

    // Planted errors.
    let planted = [
        (
            "Our Q3 revenue came in 5% above forecast.",
            "Nuestros ingresos del T3 fueron un 5% por debajo de la previsión.",
        ),
        (
            "The house has three bedrooms. It also has a large garden with old trees. The kitchen is new.",
            "La casa tiene tres dormitorios. La cocina es nueva.",
        ),
        (
            "Click <b>Save</b> to keep your changes.",
            "Haz clic en Guardar para conservar tus cambios.",
        ),
        (
            "Please send the invoice today.",
            "Por favor, envíe el recibo hoy.",
        ),
        (
            "Please share these results with your teams.",
            "Please share these results with your teams.",
        ),
    ];
    let mut segments: Vec<Value> = planted
        .iter()
        .map(|(s, t)| json!({"source": s, "target": t}))
        .collect();
    for (s, t) in clean_src.iter().zip(&clean_tgt) {
        segments.push(json!({"source": s, "target": t}));
    }
    let body = json!({
        "metadata": {"source_language": "en", "target_language": "es",
                     "glossary": {"invoice": "factura"}},
        "segments": segments,
    });
    let (code, retry, created) = submit(&api, &key, &body).await?;
    assert_eq!(code, 202, "{created}");
    assert!(retry.is_some_and(|r| r.parse::<u32>().is_ok()));
    let job_id = created["job_id"].as_str().unwrap_or_default().to_owned();
    assert!(uuid::Uuid::parse_str(&job_id).is_ok());
    let path = created["poll_url"].as_str().unwrap_or_default().to_owned();
    assert_eq!(path, format!("/v1/quality-evaluation/{job_id}"));

    // No worker yet: still processing.
    let (code, pending) = api.get(&key, &path).await?;
    assert_eq!(code, 202);
    assert_eq!(pending["status"], "processing");
    assert_eq!(pending["job_id"], job_id.as_str());

    world.start_worker("q")?;
    let done = wait_done(&api, &key, &path).await?;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["job_id"], job_id.as_str());
    let segs = done["segments"].as_array().cloned().unwrap_or_default();
    assert_eq!(segs.len(), planted.len() + clean_src.len());
    let issue = |i: usize, sub: &str| -> Value {
        segs[i]["errors"]
            .as_array()
            .and_then(|e| e.iter().find(|x| x["sub_type"] == sub).cloned())
            .unwrap_or(Value::Null)
    };
    // 0: 5% above → por debajo.
    let flip = issue(0, "Mistranslation");
    assert_eq!(flip["type"], "Accuracy");
    assert_eq!(flip["severity"], "Critical");
    assert_eq!(at(planted[0].0, &flip["source_spans"][0]), "5% above");
    assert_eq!(at(planted[0].1, &flip["target_spans"][0]), "5% por debajo");
    // 1: a dropped sentence.
    let om = issue(1, "Omission");
    assert_eq!(om["severity"], "Major");
    assert_eq!(
        at(planted[1].0, &om["source_spans"][0]),
        "It also has a large garden with old trees."
    );
    // 2: a lost tag.
    let tag = issue(2, "Omission");
    assert_eq!(at(planted[2].0, &tag["source_spans"][0]), "<b>");
    // 3: glossary.
    let term = issue(3, "Mistranslation");
    assert_eq!(term["severity"], "Major");
    assert_eq!(at(planted[3].0, &term["source_spans"][0]), "invoice");
    // 4: left in English.
    let un = issue(4, "Untranslated text");
    assert_eq!(un["type"], "Accuracy");
    // The clean part: nothing Critical or Major.
    for s in &segs[planted.len()..] {
        for e in s["errors"].as_array().cloned().unwrap_or_default() {
            assert_eq!(e["severity"], "Minor", "{s}");
        }
    }
    let counts = &done["summary"]["granular_counts"];
    assert_eq!(counts["Accuracy"]["Mistranslation"]["Critical"], 1);
    let score = done["summary"]["overall_score"].as_u64().unwrap_or(999);
    assert!(score < 100);
    Ok(())
}

#[tokio::test]
async fn quality_evaluation_rejects_bad_requests() -> Result<()> {
    let mut world = World::new("quality_400").await?;
    let key = world.create_key("q", false).await?;
    let api = world.start_api().await?;
    let meta = json!({"source_language": "en", "target_language": "es"});
    let seg = json!({"source": "Hello.", "target": "Hola."});
    let many: Vec<Value> = (0..501).map(|_| seg.clone()).collect();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"segments": [seg]}), "metadata is required."),
        (
            json!({"metadata": {"target_language": "es"}, "segments": [seg]}),
            "metadata.source_language is required.",
        ),
        (
            json!({"metadata": {"source_language": "en", "target_language": ""}, "segments": [seg]}),
            "metadata.target_language is required.",
        ),
        (
            json!({"metadata": {"source_language": "klingon", "target_language": "es"}, "segments": [seg]}),
            "metadata.source_language 'klingon' is not supported.",
        ),
        (
            json!({"metadata": {"source_language": "en", "target_language": "xx"}, "segments": [seg]}),
            "metadata.target_language 'xx' is not supported.",
        ),
        (json!({"metadata": meta}), "segments is required."),
        (
            json!({"metadata": meta, "segments": []}),
            "segments must contain at least 1 segment.",
        ),
        (
            json!({"metadata": meta, "segments": many}),
            "segments must contain at most 500 entries (got 501).",
        ),
        (
            json!({"metadata": meta, "segments": [seg, seg, seg, {"source": "x"}]}),
            "segments[3].target is required.",
        ),
        (
            json!({"metadata": meta, "segments": [{"target": "x"}]}),
            "segments[0].source is required.",
        ),
        (
            json!({"metadata": meta, "segments": [{"source": "x".repeat(10_001), "target": "y"}]}),
            "segments[0].source exceeds 10000 characters (has 10001).",
        ),
        (
            json!({"metadata": meta, "segments": [{"source": "x", "target": "y".repeat(10_001)}]}),
            "segments[0].target exceeds 10000 characters (has 10001).",
        ),
    ];
    for (body, want) in cases {
        let (code, _, answer) = submit(&api, &key, &body).await?;
        assert_eq!(code, 400, "{body}");
        assert_eq!(answer["message"], want);
    }
    let (code, _, answer) = submit(
        &api,
        &key,
        &json!({"metadata": {"source_language": "en", "target_language": "en-us"}, "segments": [seg]}),
    )
    .await?;
    assert_eq!(code, 400);
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not supported")
    );
    // 10,000 characters exactly is fine.
    let (code, _, _) = submit(
        &api,
        &key,
        &json!({"metadata": meta, "segments": [{"source": "é".repeat(10_000), "target": "y"}]}),
    )
    .await?;
    assert_eq!(code, 202);
    // Bad JSON.
    let res = api
        .keyed(reqwest::Method::POST, "/v1/quality-evaluation", &key)
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 400);
    // Poll: bad id, unknown id, no key.
    let (code, answer) = api.get(&key, "/v1/quality-evaluation/not-a-uuid").await?;
    assert_eq!(code, 400);
    assert_eq!(answer["message"], "job_id must be a valid UUID.");
    let (code, answer) = api
        .get(
            &key,
            "/v1/quality-evaluation/f3a8c5e1-9b7d-4e62-a1c4-8f5d2b6e3c19",
        )
        .await?;
    assert_eq!(code, 404);
    assert_eq!(answer["message"], "Quality estimation job not found.");
    let res = api
        .http
        .post(api.url("/v1/quality-evaluation"))
        .json(&json!({"metadata": meta, "segments": [seg]}))
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 403);
    Ok(())
}

#[tokio::test]
async fn document_with_quality_evaluation_gets_a_report() -> Result<()> {
    let mut world = World::new("quality_doc").await?;
    let key = world.create_key("q", false).await?;
    let api = world.start_api().await?;
    world.start_worker("q")?;
    let text = "The house has three bedrooms and a large garden.\n\nAre you coming to the party?\n\nThe company hired 250 new employees.\n";
    let (code, up) = api
        .upload(
            &key,
            "letter.txt",
            text.as_bytes().to_vec(),
            &[
                ("target_lang", "ES"),
                ("source_lang", "EN"),
                ("enable_quality_evaluation", "true"),
            ],
        )
        .await?;
    assert_eq!(code, 200, "{up}");
    let eid = up["quality_evaluation_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&eid).is_ok(), "{up}");
    let id = up["document_id"].as_str().unwrap_or_default().to_owned();
    let doc_key = up["document_key"].as_str().unwrap_or_default().to_owned();
    let st = api
        .wait(&key, &id, &doc_key, Duration::from_secs(60))
        .await?;
    // The document's own status ignores the findings.
    assert_eq!(st.status, "done", "{}", st.body);
    assert_eq!(st.body["quality_evaluation_id"], eid.as_str());
    let report = wait_done(&api, &key, &format!("/v1/quality-evaluation/{eid}")).await?;
    assert_eq!(report["status"], "done", "{report}");
    let segs = report["segments"].as_array().cloned().unwrap_or_default();
    assert_eq!(segs.len(), 3, "{report}");
    // Apertium writes "Eres viniendo a la fiesta?" without the opening '¿'.
    let punct = segs[1]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .find(|e| e["sub_type"] == "Punctuation");
    assert!(punct.is_some(), "{report}");
    assert!(report["summary"]["overall_score"].as_u64().is_some());
    // The document downloads normally.
    let (code, _, _) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(code, 200);
    // Without the flag there is no evaluation.
    let (_, plain) = api
        .upload(&key, "b.txt", b"Hello.".to_vec(), &[("target_lang", "ES")])
        .await?;
    assert!(plain.get("quality_evaluation_id").is_none(), "{plain}");
    Ok(())
}

#[tokio::test]
async fn failed_document_fails_its_evaluation() -> Result<()> {
    let mut world = World::new("quality_docfail").await?;
    let key = world.create_key("q", false).await?;
    let api = world.start_api().await?;
    world.start_worker("q")?;
    let (code, up) = api
        .upload(
            &key,
            "broken.docx",
            b"this is not a zip archive".to_vec(),
            &[("target_lang", "ES"), ("enable_quality_evaluation", "1")],
        )
        .await?;
    assert_eq!(code, 200, "{up}");
    let eid = up["quality_evaluation_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let id = up["document_id"].as_str().unwrap_or_default().to_owned();
    let doc_key = up["document_key"].as_str().unwrap_or_default().to_owned();
    let st = api
        .wait(&key, &id, &doc_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "error", "{}", st.body);
    let report = wait_done(&api, &key, &format!("/v1/quality-evaluation/{eid}")).await?;
    assert_eq!(report["status"], "error", "{report}");
    assert_eq!(report["error"]["code"], "evaluation_failed");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("could not be translated"),
        "{report}"
    );
    Ok(())
}

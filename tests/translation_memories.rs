//! Translation memories (`/v3/translation_memories`): TMX import and export jobs
//! through real API and worker processes, PostgreSQL (pg_trgm) and Apertium;
//! memory matches in `/v2/translate`.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::Method;
use serde_json::{Value, json};
use tolk_formats::tmx::{Entry, Header, TmxReader, Unit};

use crate::support::{Api, World, call, python, translated_texts};

/// Creates an import job and uploads `tmx` to its signed URL; returns the job id.
pub(crate) async fn import(api: &Api, key: &str, name: &str, tmx: &[u8]) -> Result<String> {
    let (code, job) = call(
        api,
        key,
        Method::POST,
        "/v3/translation_memories/import",
        Some(&json!({
            "source_file": {"file_name": format!("{name}.tmx"), "content_type": "application/xml",
                            "content_length": tmx.len()},
            "parameters": {"display_name": name},
        })),
    )
    .await?;
    if code != 202 {
        bail!("import answered {code}: {job}");
    }
    let id = job["job_id"].as_str().context("job_id")?.to_owned();
    let url = job["upload_url"].as_str().context("upload_url")?;
    job["expires_at"].as_str().context("expires_at")?;
    let (code, status) = call(
        api,
        key,
        Method::GET,
        &format!("/v3/translation_memories/jobs/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["results"][0]["status"], "awaiting_input", "{status}");
    assert_eq!(status["operation"], "import");
    // The signed URL needs no key.
    let res = api.http.put(url).body(tmx.to_vec()).send().await?;
    if res.status().as_u16() != 200 {
        bail!(
            "upload answered {}: {}",
            res.status(),
            res.text().await.unwrap_or_default()
        );
    }
    Ok(id)
}

/// Polls a job until it is completed, failed or expired; returns its body.
pub(crate) async fn wait_job(api: &Api, key: &str, id: &str) -> Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, body) = call(
            api,
            key,
            Method::GET,
            &format!("/v3/translation_memories/jobs/{id}"),
            None,
        )
        .await?;
        if code != 200 {
            bail!("job status answered {code}: {body}");
        }
        let status = body["results"][0]["status"].as_str().unwrap_or_default();
        if matches!(status, "completed" | "failed" | "expired") {
            return Ok(body);
        }
        if Instant::now() > deadline {
            bail!("job {id} still {status}: {body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Imports and waits for success; returns the new memory's id.
async fn import_ok(api: &Api, key: &str, name: &str, tmx: &[u8]) -> Result<(String, Value)> {
    let job = import(api, key, name, tmx).await?;
    let body = wait_job(api, key, &job).await?;
    let result = &body["results"][0];
    if result["status"] != "completed" {
        bail!("import {name} did not complete: {body}");
    }
    Ok((
        result["translation_memory_id"]
            .as_str()
            .context("translation_memory_id")?
            .to_owned(),
        body,
    ))
}

/// Header and units of a TMX document, as tolk-formats reads it.
fn read_tmx(bytes: &[u8]) -> Result<(Header, Vec<Unit>, usize)> {
    let mut r = TmxReader::new(bytes)?;
    let header = r.header().clone();
    let mut units = Vec::new();
    let mut skipped = 0;
    while let Some(e) = r.next_entry()? {
        match e {
            Entry::Unit(mut u) => {
                u.line = 0;
                units.push(u);
            }
            Entry::Skipped { .. } => skipped += 1,
        }
    }
    Ok((header, units, skipped))
}

const ROUND_TRIP: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4">
  <header creationtool="Tolk tests" creationtoolversion="1" segtype="sentence" o-tmf="none"
          adminlang="en-US" srclang="en-US" datatype="html" creationid="tester">
    <note>Round-trip fixture</note>
    <ude name="MacRoman"><map unicode="#x00E6" code="#xBE" ent="aelig"/></ude>
    <prop type="x-domain">Software</prop>
  </header>
  <body>
    <tu tuid="save-1" datatype="html" creationdate="20260101T120000Z">
      <note>Button label &amp; tooltip</note>
      <prop type="x-client">ACME</prop>
      <tuv xml:lang="en-US" creationid="ann">
        <prop type="x-origin">human</prop>
        <seg>Press <bpt i="1" x="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> now.<ph x="2" type="lb">&lt;br/&gt;</ph></seg>
      </tuv>
      <tuv xml:lang="de-DE">
        <note>reviewed</note>
        <seg>Drücken Sie jetzt <bpt i="1" x="1">&lt;b&gt;</bpt>Speichern<ept i="1">&lt;/b&gt;</ept>.<ph x="2" type="lb">&lt;br/&gt;</ph></seg>
      </tuv>
      <tuv xml:lang="es-ES"><seg>Pulse <bpt i="1" x="1">&lt;b&gt;</bpt>Guardar<ept i="1">&lt;/b&gt;</ept> ahora.<ph x="2" type="lb">&lt;br/&gt;</ph></seg></tuv>
    </tu>
    <tu tuid="warn-2">
      <tuv xml:lang="en-US"><seg>The file <hi type="italic">report.txt</hi> is <it pos="begin" x="3">&lt;u&gt;</it>read-only &amp; locked</seg></tuv>
      <tuv xml:lang="es-ES"><seg>El archivo <hi type="italic">report.txt</hi> es <it pos="begin" x="3">&lt;u&gt;</it>de solo lectura y está bloqueado</seg></tuv>
    </tu>
    <tu tuid="plain-3" usagecount="4">
      <prop type="x-note">quotes " and ' kept</prop>
      <tuv xml:lang="en-US"><seg>Good morning, my friend.</seg></tuv>
      <tuv xml:lang="de-DE"><seg>Guten Morgen, mein Freund.</seg></tuv>
      <tuv xml:lang="es-ES"><seg>Buenos días, amigo mío.</seg></tuv>
    </tu>
  </body>
</tmx>
"##;

const VALIDATE: &str = r#"
import sys
from lxml import etree
from translate.storage import tmx
dtd = etree.DTD(open(sys.argv[1], 'rb'))
doc = etree.parse(sys.argv[2])
if not dtd.validate(doc):
    print('INVALID', dtd.error_log.filter_from_errors())
    sys.exit(0)
store = tmx.tmxfile.parsefile(sys.argv[2])
print('valid', len(store.units))
for u in store.units:
    print(u.source)
"#;

#[tokio::test]
async fn tmx_round_trip_segments_and_export() -> Result<()> {
    let mut world = World::new("tm_round").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;

    let (id, job) = import_ok(&api, &key, "Software", ROUND_TRIP.as_bytes()).await?;
    assert_eq!(job["results"][0]["skipped_segment_count"], 0, "{job}");
    assert_eq!(job["parameters"]["display_name"], "Software");
    assert_eq!(
        job["source_file"]["content_length"],
        ROUND_TRIP.len(),
        "{job}"
    );

    let (code, m) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{m}");
    assert_eq!(m["name"], "Software");
    assert_eq!(m["source_language"], "en");
    assert_eq!(m["target_languages"], json!(["de", "es"]));
    assert_eq!(m["segment_count"], 3);
    let (code, list) = call(&api, &key, Method::GET, "/v3/translation_memories", None).await?;
    assert_eq!(code, 200);
    assert_eq!(list["total_count"], 1);
    assert_eq!(list["translation_memories"][0]["translation_memory_id"], id);

    // Page through the segments one by one.
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let path = match &cursor {
            Some(c) => {
                format!("/v3/translation_memories/{id}/segments?page_size=1&page_cursor={c}")
            }
            None => format!("/v3/translation_memories/{id}/segments?page_size=1"),
        };
        let (code, page) = call(&api, &key, Method::GET, &path, None).await?;
        assert_eq!(code, 200, "{page}");
        assert_eq!(page["segment_count"], 3);
        let segs = page["segments"].as_array().context("segments")?;
        assert_eq!(segs.len(), 1, "{page}");
        seen.push(segs[0].clone());
        match page["next_page_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0]["source_text"], "Press Save now.");
    assert_eq!(
        seen[0]["targets"],
        json!([
            {"target_segment_id": seen[0]["targets"][0]["target_segment_id"], "target_language": "de",
             "target_text": "Drücken Sie jetzt Speichern.", "creation_time": seen[0]["creation_time"]},
            {"target_segment_id": seen[0]["targets"][1]["target_segment_id"], "target_language": "es",
             "target_text": "Pulse Guardar ahora.", "creation_time": seen[0]["creation_time"]},
        ])
    );
    assert_eq!(
        seen[1]["source_text"],
        "The file report.txt is read-only & locked"
    );
    let (_, filtered) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/translation_memories/{id}/segments?filter_text=AMIGO"),
        None,
    )
    .await?;
    assert_eq!(filtered["segments"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        filtered["segments"][0]["source_text"],
        "Good morning, my friend."
    );
    let (_, filtered) = call(
        &api,
        &key,
        Method::GET,
        &format!(
            "/v3/translation_memories/{id}/segments?filter_text=AMIGO&filter_case_sensitive=true"
        ),
        None,
    )
    .await?;
    assert_eq!(filtered["segments"].as_array().map(Vec::len), Some(0));

    // Export, download, and check the file: valid against the TMX 1.4b DTD,
    // readable by translate-toolkit, and the same header and units.
    let (code, exp) = call(
        &api,
        &key,
        Method::POST,
        &format!("/v3/translation_memories/{id}/export"),
        None,
    )
    .await?;
    assert_eq!(code, 202, "{exp}");
    assert_eq!(exp["parameters"]["translation_memory_id"], id);
    let job = wait_job(&api, &key, exp["job_id"].as_str().context("job_id")?).await?;
    let result = &job["results"][0];
    assert_eq!(result["status"], "completed", "{job}");
    assert_eq!(job["operation"], "export");
    result["expires_at"].as_str().context("expires_at")?;
    let url = result["download_url"].as_str().context("download_url")?;
    let res = api.http.get(url).send().await?;
    assert_eq!(res.status().as_u16(), 200);
    let exported = res.bytes().await?.to_vec();
    let path = world.path("export.tmx");
    std::fs::write(&path, &exported)?;
    let dtd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tmx14.dtd");
    let out = python(VALIDATE, &[&dtd, &path]).await?;
    assert!(out.starts_with("valid 3"), "{out}");
    assert!(out.contains("Save"), "{out}");

    let (h0, u0, s0) = read_tmx(ROUND_TRIP.as_bytes())?;
    let (h1, u1, s1) = read_tmx(&exported)?;
    assert_eq!((s0, s1), (0, 0));
    assert_eq!(h1, h0, "header");
    assert_eq!(u1, u0, "units");

    // A wrong signature gets nothing.
    let forged = format!("{}x", url);
    assert_eq!(api.http.get(&forged).send().await?.status().as_u16(), 403);

    // Delete.
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, body) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404, "{body}");
    assert!(body["message"].is_string());
    let db = world.db().await?;
    let left: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM translation_memory_units)
              + (SELECT count(*) FROM translation_memory_words)",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(left, 0);
    Ok(())
}

/// translate-toolkit's po2tmx (from the Python the tests use) writes the TMX.
const PO2TMX: &str = r#"
import sys, subprocess
po = sys.argv[1]
out = sys.argv[2]
open(po, 'w', encoding='utf-8').write('''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#. A comment for translators
msgid "Good morning, my friend."
msgstr "Buenos días, amigo mío."

msgid "The printer is out of paper."
msgstr "La impresora no tiene papel."

msgid "Close the window before you leave."
msgstr "Cierre la ventana antes de salir."

msgid "Untranslated entry"
msgstr ""
''')
r = subprocess.run([sys.executable, '-m', 'translate.convert.po2tmx', '-l', 'es', po, out],
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.exit('po2tmx failed: ' + r.stdout + r.stderr)
print(open(out, encoding='utf-8').read())
"#;

#[tokio::test]
async fn tmx_from_translate_toolkit_imports_and_applies() -> Result<()> {
    let mut world = World::new("tm_po2tmx").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let po = world.path("in.po");
    let out = world.path("out.tmx");
    let printed = python(PO2TMX, &[&po, &out]).await?;
    assert!(printed.contains("<tmx"), "po2tmx wrote: {printed}");
    let tmx = std::fs::read(&out)?;
    let (id, job) = import_ok(&api, &key, "from-po", &tmx).await?;
    let (_, m) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(m["source_language"], "en", "{m}");
    assert_eq!(m["target_languages"], json!(["es"]), "{m}");
    let stored = m["segment_count"].as_i64().unwrap_or(0);
    let skipped = job["results"][0]["skipped_segment_count"]
        .as_i64()
        .unwrap_or(0);
    assert_eq!(stored, 3, "{m} {job}");
    assert!(skipped <= 1, "{job}");

    let (code, body) = api
        .translate(
            &key,
            &json!({"text": ["The printer is out of paper.", "Close the window before you leave."],
               "source_lang": "EN", "target_lang": "ES", "translation_memory_id": id}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        translated_texts(&body),
        [
            "La impresora no tiene papel.",
            "Cierre la ventana antes de salir."
        ]
    );
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    Ok(())
}

pub(crate) fn tmx_of(units: &[(&str, &str)], lang: &str) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tmx version=\"1.4\">\n<header creationtool=\"t\" creationtoolversion=\"1\" segtype=\"sentence\" o-tmf=\"t\" adminlang=\"en\" srclang=\"en\" datatype=\"plaintext\"/>\n<body>\n",
    );
    for (src, tgt) in units {
        s.push_str(&format!(
            "<tu><tuv xml:lang=\"en\"><seg>{src}</seg></tuv><tuv xml:lang=\"{lang}\"><seg>{tgt}</seg></tuv></tu>\n"
        ));
    }
    s.push_str("</body>\n</tmx>\n");
    s
}

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
async fn malformed_tmx_fails_with_its_line_and_imports_nothing() -> Result<()> {
    let mut world = World::new("tm_bad").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let good: Vec<(String, String)> = (0..40)
        .map(|i| (format!("Sentence {i}."), format!("Frase {i}.")))
        .collect();
    let pairs: Vec<(&str, &str)> = good.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut tmx = tmx_of(&pairs, "es");
    // Header is 4 lines, units start on line 5: unit 40 goes on line 45.
    let cut = tmx.rfind("</body>").context("body")?;
    tmx.insert_str(
        cut,
        "<tu><tuv xml:lang=\"en\"><seg>Broken</tuv></tu>\n<tu><tuv xml:lang=\"en\"><seg>after</seg></tuv></tu>\n",
    );
    let job = import(&api, &key, "bad", tmx.as_bytes()).await?;
    let body = wait_job(&api, &key, &job).await?;
    let result = &body["results"][0];
    assert_eq!(result["status"], "failed", "{body}");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("line 45"), "{message}");
    assert!(result.get("translation_memory_id").is_none(), "{body}");

    let (_, list) = call(&api, &key, Method::GET, "/v3/translation_memories", None).await?;
    assert_eq!(list["total_count"], 0, "{list}");
    let db = world.db().await?;
    let units: i64 = sqlx::query_scalar("SELECT count(*) FROM translation_memory_units")
        .fetch_one(&db)
        .await?;
    assert_eq!(units, 0, "nothing half-imported");
    // A second upload to the same job is refused.
    Ok(())
}

#[tokio::test]
async fn concurrent_imports_into_two_memories() -> Result<()> {
    let mut world = World::new("tm_concurrent").await?;
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let make = |tag: &str| -> (String, Vec<(String, String)>) {
        let units: Vec<(String, String)> = (0..3000)
            .map(|i| {
                (
                    format!("{tag} sentence number {i} of the corpus."),
                    format!("{tag} frase número {i} del corpus."),
                )
            })
            .collect();
        let pairs: Vec<(&str, &str)> = units
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        (tmx_of(&pairs, "es"), units)
    };
    let (tmx_a, units_a) = make("Alpha");
    let (tmx_b, units_b) = make("Bravo");
    let (ja, jb) = tokio::join!(
        import(&api, &key, "A", tmx_a.as_bytes()),
        import(&api, &key, "B", tmx_b.as_bytes())
    );
    let (ja, jb) = (ja?, jb?);
    let (ra, rb) = tokio::join!(wait_job(&api, &key, &ja), wait_job(&api, &key, &jb));
    let (ra, rb) = (ra?, rb?);
    let id_a = ra["results"][0]["translation_memory_id"]
        .as_str()
        .with_context(|| format!("{ra}"))?
        .to_owned();
    let id_b = rb["results"][0]["translation_memory_id"]
        .as_str()
        .with_context(|| format!("{rb}"))?
        .to_owned();
    assert_ne!(id_a, id_b);
    for id in [&id_a, &id_b] {
        let (_, m) = call(
            &api,
            &key,
            Method::GET,
            &format!("/v3/translation_memories/{id}"),
            None,
        )
        .await?;
        assert_eq!(m["segment_count"], 3000, "{m}");
    }
    let (_, list) = call(
        &api,
        &key,
        Method::GET,
        "/v3/translation_memories?page_size=1&page=1",
        None,
    )
    .await?;
    assert_eq!(list["total_count"], 2);
    assert_eq!(
        list["translation_memories"].as_array().map(Vec::len),
        Some(1)
    );
    // Each memory answers from its own units only.
    let (_, body) = api.translate(&key, &json!({"text": [units_a[1234].0, units_b[1234].0], "source_lang": "EN",
               "target_lang": "ES", "translation_memory_id": id_a, "translation_memory_threshold": 100}), None)
    .await?;
    let out = translated_texts(&body);
    assert_eq!(out[0], units_a[1234].1);
    assert_ne!(out[1], units_b[1234].1);
    Ok(())
}

#[tokio::test]
async fn translation_memory_errors() -> Result<()> {
    let mut world = World::new("tm_errors").await?;
    let key = world.create_key("tm", false).await?;
    let other = {
        let out = world
            .tolk(&[
                "admin",
                "create-key",
                "--label",
                "other",
                "--organization",
                "other",
            ])
            .output()
            .await?;
        String::from_utf8(out.stdout)?.trim().to_owned()
    };
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let tmx = tmx_of(&[("Good night.", "Buenas noches.")], "es");
    let (id, _) = import_ok(&api, &key, "errs", tmx.as_bytes()).await?;
    let unknown = "3fa85f64-5717-4562-b3fc-2c963f66afa6";

    // 404s.
    for (method, path) in [
        (Method::GET, format!("/v3/translation_memories/{unknown}")),
        (
            Method::DELETE,
            format!("/v3/translation_memories/{unknown}"),
        ),
        (
            Method::GET,
            format!("/v3/translation_memories/{unknown}/segments"),
        ),
        (
            Method::POST,
            format!("/v3/translation_memories/{unknown}/export"),
        ),
        (
            Method::GET,
            format!("/v3/translation_memories/jobs/{unknown}"),
        ),
    ] {
        let (code, body) = call(&api, &key, method.clone(), &path, None).await?;
        assert_eq!(code, 404, "{method} {path}: {body}");
        assert!(body["message"].is_string(), "{body}");
    }
    let base = |extra: Value| {
        let mut b = json!({"text": ["Good night."], "source_lang": "EN", "target_lang": "ES"});
        if let (Some(b), Some(e)) = (b.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        b
    };
    for (extra, why) in [
        (json!({"translation_memory_id": unknown}), "unknown memory"),
        (
            json!({"translation_memory_id": id, "target_lang": "FR"}),
            "no FR target",
        ),
        (
            json!({"translation_memory_id": id, "source_lang": "ES", "target_lang": "EN-US"}),
            "wrong source",
        ),
    ] {
        let (code, body) = api.translate(&key, &base(extra), None).await?;
        assert_eq!(code, 404, "{why}: {body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("memory")),
            "{body}"
        );
    }
    // Another organization's key sees nothing.
    let (code, _) = api
        .translate(&other, &base(json!({"translation_memory_id": id})), None)
        .await?;
    assert_eq!(code, 404);
    let (code, _) = call(
        &api,
        &other,
        Method::GET,
        &format!("/v3/translation_memories/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404);

    // 400s with a message.
    for (extra, field) in [
        (
            json!({"translation_memory_id": id, "translation_memory_threshold": 101}),
            "translation_memory_threshold",
        ),
        (
            json!({"translation_memory_id": "nope"}),
            "translation_memory_id",
        ),
    ] {
        let (code, body) = api.translate(&key, &base(extra), None).await?;
        assert_eq!(code, 400, "{body}");
        assert!(
            body["message"].as_str().is_some_and(|m| m.contains(field)),
            "{body}"
        );
    }
    for (body, field) in [
        (json!({}), "source_file"),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 0}}),
            "content_length",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 5_000_000_000i64}}),
            "content_length",
        ),
        (
            json!({"source_file": {"file_name": "", "content_length": 10}}),
            "file_name",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 10, "content_type": "image/png"}}),
            "content_type",
        ),
        (
            json!({"source_file": {"file_name": "a.tmx", "content_length": 10}, "parameters": {"display_name": 3}}),
            "display_name",
        ),
    ] {
        let (code, res) = call(
            &api,
            &key,
            Method::POST,
            "/v3/translation_memories/import",
            Some(&body),
        )
        .await?;
        assert_eq!(code, 400, "{body}: {res}");
        assert!(
            res["message"].as_str().is_some_and(|m| m.contains(field)),
            "{res}"
        );
    }
    for path in [
        format!("/v3/translation_memories/{id}/segments?filter_text=a"),
        format!("/v3/translation_memories/{id}/segments?page_size=0"),
        format!("/v3/translation_memories/{id}/segments?page_cursor=abc"),
        "/v3/translation_memories?page_size=26".to_owned(),
        "/v3/translation_memories/not-a-uuid".to_owned(),
    ] {
        let (code, res) = call(&api, &key, Method::GET, &path, None).await?;
        assert_eq!(code, 400, "{path}: {res}");
        assert!(res["message"].is_string(), "{res}");
    }

    // Uploads: a wrong signature, too many bytes, a second upload.
    let (_, job) = call(
        &api,
        &key,
        Method::POST,
        "/v3/translation_memories/import",
        Some(&json!({"source_file": {"file_name": "a.tmx", "content_length": 10}})),
    )
    .await?;
    let url = job["upload_url"].as_str().context("upload_url")?;
    let forged = url.replace("signature=", "signature=1");
    let res = api.http.put(&forged).body("0123456789").send().await?;
    assert_eq!(res.status().as_u16(), 403);
    let res = api.http.put(url).body("0123456789ABC").send().await?;
    assert_eq!(res.status().as_u16(), 413);
    let res = api.http.put(url).body("<tmx/>").send().await?;
    assert_eq!(res.status().as_u16(), 200);
    let res = api.http.put(url).body("<tmx/>").send().await?;
    assert_eq!(res.status().as_u16(), 400);
    // `<tmx/>` has no unit: the import fails and says so.
    let body = wait_job(&api, &key, job["job_id"].as_str().context("job_id")?).await?;
    assert_eq!(body["results"][0]["status"], "failed", "{body}");
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

/// A TMX larger than one multipart part (8 MiB) through an S3-compatible
/// store: streamed upload, streamed parse, streamed multipart export.
#[tokio::test]
async fn tmx_import_and_export_over_s3() -> Result<()> {
    let mut world = World::new("tm_s3").await?;
    let server = crate::s3::start_s3(&world).await?;
    world.extra_env = crate::s3::s3_env(&server);
    world.object_store = format!("s3://{}", crate::s3::BUCKET);
    let key = world.create_key("tm", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    let units: Vec<(String, String)> = (0..40_000)
        .map(|i| {
            (
                format!(
                    "Unit number {i} of the large memory, with some padding text to make it longer."
                ),
                format!(
                    "Unidad número {i} de la memoria grande, con algo de relleno para alargarla."
                ),
            )
        })
        .collect();
    let pairs: Vec<(&str, &str)> = units
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let tmx = tmx_of(&pairs, "es");
    assert!(tmx.len() > 9 << 20, "{} bytes", tmx.len());
    let (id, _) = import_ok(&api, &key, "big", tmx.as_bytes()).await?;
    let (code, exp) = call(
        &api,
        &key,
        Method::POST,
        &format!("/v3/translation_memories/{id}/export"),
        None,
    )
    .await?;
    assert_eq!(code, 202, "{exp}");
    let job = wait_job(&api, &key, exp["job_id"].as_str().context("job_id")?).await?;
    assert_eq!(job["results"][0]["status"], "completed", "{job}");
    let url = job["results"][0]["download_url"]
        .as_str()
        .context("download_url")?;
    let exported = api.http.get(url).send().await?.bytes().await?.to_vec();
    assert!(exported.len() > 8 << 20, "{} bytes", exported.len());
    let (_, got, skipped) = read_tmx(&exported)?;
    assert_eq!((got.len(), skipped), (40_000, 0));
    assert_eq!(got[39_999].variants[1].text, units[39_999].1);
    Ok(())
}

//! TMX import and export jobs: the round trip of segments, files from the
//! Translate Toolkit, malformed files, concurrent imports, and S3 storage.

use super::*;

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

/// A TMX larger than one multipart part (8 MiB) through an S3-compatible
/// store: streamed upload, streamed parse, streamed multipart export.
#[tokio::test]
async fn tmx_jobs_keep_their_files_in_s3() -> Result<()> {
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

//! The pipeline machinery with stand-in "pairs" made of shell scripts:
//! identity (`cat`), one that never answers, one that dies.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{ApertiumConfig, EngineError, TagHandling, TranslateRequest, Translator};

/// A modes directory with `eng-spa` = identity, `spa-eng` = silent,
/// `eng-cat` = dies after a few bytes.
fn fake_modes(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tolk-fake-modes-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let script = |file: &str, body: &str| -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    };
    let identity = script("identity", "exec cat");
    let silent = script("silent", "exec sleep 1000");
    let dying = script("dying", "exec head -c 5");
    let mode = |name: &str, body: String| {
        std::fs::write(dir.join(format!("{name}.mode")), body).expect("mode")
    };
    mode(
        "eng-spa",
        format!("'{}' | '{}'\n", identity.display(), identity.display()),
    );
    mode("spa-eng", format!("'{}'\n", silent.display()));
    mode("eng-cat", format!("'{}'\n", dying.display()));
    mode("eco-es-fr", "nonsense".into());
    dir
}

fn translator(dir: &Path) -> Translator {
    Translator::apertium(ApertiumConfig {
        modes_dir: dir.to_path_buf(),
        pipelines_per_pair: 2,
        timeout: Duration::from_millis(1500),
        queue: 64,
    })
    .expect("fake modes")
}

fn req(source: &str, target: &str, texts: Vec<String>, tags: TagHandling) -> TranslateRequest {
    TranslateRequest {
        source_lang: Some(source.into()),
        target_lang: target.into(),
        texts,
        tag_handling: tags,
        ..Default::default()
    }
}

#[tokio::test]
async fn identity_pipeline_round_trips_texts() {
    let dir = fake_modes("identity");
    let t = translator(&dir);
    assert_eq!(t.route("EN", "ES").unwrap(), ["eng-spa"]);
    let mut texts: Vec<String> = vec![
        "".into(),
        "  Hello world  ".into(),
        r"Symbols [ ] ^ $ / @ * # < > \ { } ~ + & end".into(),
        "Para one\n\nPara two\nline".into(),
        "No\0 NUL".into(),
        "[[t:1]]fake[[/]] [s0] [p] blanks".into(),
    ];
    texts.extend((0..300).map(|i| format!("Text number {i}")));
    let res = t
        .translate(req("EN", "ES", texts.clone(), TagHandling::None))
        .await
        .unwrap();
    let mut expected = texts.clone();
    expected[4] = "No NUL".into();
    assert_eq!(res.texts, expected);

    let xml = vec![
        r#"The <g id="1">big &amp; <g id="2">bold</g></g> dog<x id="3"/> runs &lt;fast&gt;"#
            .to_owned(),
        r#"<g id="1"></g><x id="2"/>"#.to_owned(),
        "<a href=\"x\">link</a> <!-- note --> text".to_owned(),
    ];
    let res = t
        .translate(req("EN", "ES", xml.clone(), TagHandling::Xml))
        .await
        .unwrap();
    assert_eq!(res.texts, xml);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn silent_pipeline_times_out_as_transient() {
    let dir = fake_modes("silent");
    let t = translator(&dir);
    let started = Instant::now();
    let err = t
        .translate(req("ES", "EN-GB", vec!["Hola".into()], TagHandling::None))
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Timeout(_)), "{err:?}");
    assert!(err.is_transient());
    assert!(started.elapsed() < Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn dying_pipeline_is_unavailable_and_restarted() {
    let dir = fake_modes("dying");
    let t = translator(&dir);
    for _ in 0..2 {
        let err = t
            .translate(req(
                "EN",
                "CA",
                vec!["Hello there, world".into()],
                TagHandling::None,
            ))
            .await
            .unwrap_err();
        assert!(matches!(err, EngineError::Unavailable(_)), "{err:?}");
    }
    // The identity pair is unaffected.
    let res = t
        .translate(req("EN", "ES", vec!["Hello".into()], TagHandling::None))
        .await
        .unwrap();
    assert_eq!(res.texts, ["Hello"]);
    let _ = std::fs::remove_dir_all(dir);
}

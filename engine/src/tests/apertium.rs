//! Integration tests against the Apertium installation of this machine (the
//! Debian pairs scripts/setup.sh installs: apertium-eng-spa, -es-pt, -fr-es,
//! -eng-cat, -en-gl, -en-eo, -hbs-eng, -hbs-slv, -spa-ita, -spa-ast, -oc-es
//! and more). They fail, not skip, without it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::{
    ApertiumConfig, EngineError, TagHandling, TranslateRequest, TranslateResponse, Translator,
};

const MODES: &str = "/usr/share/apertium/modes";

fn translator() -> Translator {
    assert!(
        Path::new(MODES).join("eng-spa.mode").is_file(),
        "Apertium is not installed: {MODES}/eng-spa.mode is missing (apt-get install apertium apertium-eng-spa apertium-es-pt apertium-fr-es apertium-eng-cat)"
    );
    Translator::apertium(ApertiumConfig {
        pipelines_per_pair: 2,
        timeout: Duration::from_secs(60),
        ..ApertiumConfig::default()
    })
    .expect("loading the Apertium pairs")
}

fn req(source: Option<&str>, target: &str, texts: &[&str], tags: TagHandling) -> TranslateRequest {
    TranslateRequest {
        source_lang: source.map(str::to_owned),
        target_lang: target.to_owned(),
        texts: texts.iter().map(|t| (*t).to_owned()).collect(),
        tag_handling: tags,
        ..Default::default()
    }
}

async fn tr(t: &Translator, source: &str, target: &str, texts: &[&str]) -> TranslateResponse {
    t.translate(req(Some(source), target, texts, TagHandling::None))
        .await
        .expect("translation")
}

#[tokio::test]
async fn english_to_spanish() {
    let t = translator();
    let res = tr(&t, "EN", "ES", &["The dog runs."]).await;
    assert_eq!(res.route, ["eng-spa"]);
    assert_eq!(res.detected_source_lang, "EN");
    assert!(res.texts[0].contains("perro"), "{:?}", res.texts);
    assert!(!res.texts[0].contains(['*', '#', '@']), "{:?}", res.texts);
}

#[tokio::test]
async fn english_to_portuguese_through_spanish() {
    let t = translator();
    let res = tr(&t, "EN", "PT-PT", &["The dog runs in the garden."]).await;
    assert_eq!(res.route, ["eng-spa", "es-pt"]);
    assert!(
        res.texts[0].contains("cão") || res.texts[0].contains("jardim"),
        "{:?}",
        res.texts
    );
    let res = tr(&t, "EN", "PT-BR", &["The dog runs in the garden."]).await;
    assert_eq!(res.route, ["eng-spa", "es-pt_BR"]);
    assert_eq!(t.route("PT", "EN-US").unwrap(), ["pt-es", "spa-eng_US"]);
    assert_eq!(t.route("FR", "EN-GB").unwrap(), ["fr-es", "spa-eng"]);
    let res = tr(&t, "FR", "EN-GB", &["Le chien mange une pomme."]).await;
    assert!(
        res.texts[0].to_lowercase().contains("dog"),
        "{:?}",
        res.texts
    );
}

#[tokio::test]
async fn unsupported_and_unknown() {
    let t = translator();
    assert_eq!(
        t.translate(req(Some("EN"), "JA", &["x"], TagHandling::None))
            .await,
        Err(EngineError::UnsupportedPair {
            source: "EN".into(),
            target: "JA".into(),
            reachable_from: Vec::new(),
        })
    );
    // A variant of the source: the text comes back as it was.
    let same = t
        .translate(req(
            Some("EN"),
            "EN-US",
            &["The colour."],
            TagHandling::None,
        ))
        .await
        .unwrap();
    assert_eq!(same.texts, ["The colour."]);
    assert_eq!(same.detected_source_lang, "EN");
    assert_eq!(
        t.translate(req(Some("ES"), "ES", &["x"], TagHandling::None))
            .await,
        Err(EngineError::SameLanguage { lang: "ES".into() })
    );
    assert!(matches!(
        t.route("XX", "ES"),
        Err(EngineError::UnknownLanguage {
            field: "source_lang",
            ..
        })
    ));
    assert!(matches!(
        t.route("EN", "ZZ"),
        Err(EngineError::UnknownLanguage {
            field: "target_lang",
            ..
        })
    ));
}

#[test]
fn languages_are_reachable_ones() {
    let t = translator();
    let l = t.languages();
    let src: Vec<&str> = l.source.iter().map(|x| x.code.as_str()).collect();
    let tgt: Vec<&str> = l.target.iter().map(|x| x.code.as_str()).collect();
    // What setup.sh's pairs reach, in both lists (a machine with more pairs
    // lists more); English and Portuguese targets only as variants.
    for code in [
        "AF", "BG", "CA", "DA", "EN", "EO", "ES", "EU", "FR", "GL", "IS", "IT", "MK", "NB", "NL",
        "NN", "OC", "PT", "RO", "RU", "SH", "SL", "SV", "UK",
    ] {
        assert!(src.contains(&code), "source {code} missing: {src:?}");
    }
    for code in [
        "AF", "AST", "BG", "CA", "DA", "EN-GB", "EN-US", "EO", "ES", "FR", "GL", "IT", "MK", "NB",
        "NL", "NN", "OC", "PT-BR", "PT-PT", "RU", "SH", "SL", "SV", "UK",
    ] {
        assert!(tgt.contains(&code), "target {code} missing: {tgt:?}");
    }
    assert!(!tgt.contains(&"EN") && !tgt.contains(&"PT"), "{tgt:?}");
    // One-way pairs: Romanian, Basque and Icelandic are only sources.
    for code in ["RO", "EU", "IS"] {
        assert!(!tgt.contains(&code), "{code} is not a target: {tgt:?}");
    }
}

/// Twelve target languages from English, offline: each translated, through
/// at most two pivots, with the words the pairs give.
#[tokio::test]
async fn english_reaches_twelve_targets() {
    let t = translator();
    let text = "The house is big and the dog sleeps.";
    let expected: [(&str, &[&str], &str); 12] = [
        ("ES", &["eng-spa"], "La casa es grande"),
        ("CA", &["eng-cat"], "La casa és gran"),
        ("GL", &["en-gl"], "A casa é grande"),
        ("EO", &["en-eo"], "La domo estas granda"),
        ("SH", &["eng-hbs"], "velik"),
        ("SL", &["eng-hbs", "hbs-slv"], "pes"),
        ("FR", &["eng-spa", "es-fr"], "La maison est grande"),
        ("IT", &["eng-spa", "spa-ita"], "La casa è grande"),
        ("PT-PT", &["eng-spa", "es-pt"], "A casa é grande"),
        ("PT-BR", &["eng-spa", "es-pt_BR"], "A casa é grande"),
        ("AST", &["eng-spa", "spa-ast"], "La casa ye grande"),
        ("OC", &["eng-spa", "es-oc"], "L'ostal es grand"),
    ];
    for (target, route, words) in expected {
        let res = tr(&t, "EN", target, &[text]).await;
        assert_eq!(res.route, route, "{target}");
        assert!(res.texts[0].contains(words), "{target}: {:?}", res.texts);
    }
}

#[tokio::test]
async fn special_characters_survive() {
    let t = translator();
    let text = r"The dog [1] ^costs $5 / @home * # < > \ { } ~ + & 50% 3+4=7.";
    let res = tr(&t, "EN", "ES", &[text]).await;
    let out = &res.texts[0];
    for c in [
        '[', ']', '^', '$', '/', '@', '*', '#', '<', '>', '\\', '{', '}', '~', '+', '&', '%', '=',
    ] {
        assert_eq!(
            out.matches(c).count(),
            text.matches(c).count(),
            "{c:?} in {out:?}"
        );
    }
    assert!(out.contains("perro"), "{out:?}");
}

#[tokio::test]
async fn batches_keep_order() {
    let t = translator();
    let texts: Vec<String> = (0..200)
        .map(|i| match i % 4 {
            0 => format!("The dog number {i} runs."),
            1 => format!("The cat {i} sleeps"),
            2 => format!("I have {i} red houses!"),
            _ => format!("Where is the book {i}?"),
        })
        .collect();
    let res = t
        .translate(TranslateRequest {
            source_lang: Some("EN".into()),
            target_lang: "ES".into(),
            texts: texts.clone(),
            tag_handling: TagHandling::None,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(res.texts.len(), 200);
    for (i, out) in res.texts.iter().enumerate() {
        assert!(out.contains(&i.to_string()), "{i}: {out:?}");
        let word = ["perro", "gato", "casas", "libro"][i % 4];
        assert!(out.contains(word), "{i}: {out:?}");
        // The period added to "The cat N sleeps" is removed again.
        assert_eq!(out.ends_with('.'), i % 4 == 0, "{i}: {out:?}");
    }
}

#[tokio::test]
async fn xml_tags_are_preserved() {
    let t = translator();
    let text = r#"The <g id="1">big</g> dog runs <x id="2"/> fast."#;
    let res = t
        .translate(req(Some("EN"), "ES", &[text], TagHandling::Xml))
        .await
        .unwrap();
    let out = &res.texts[0];
    assert_eq!(out.matches(r#"<g id="1">"#).count(), 1, "{out:?}");
    assert_eq!(out.matches("</g>").count(), 1, "{out:?}");
    assert_eq!(out.matches(r#"<x id="2"/>"#).count(), 1, "{out:?}");
    assert!(out.contains(r#"<g id="1">grande"#), "{out:?}");
    assert!(out.contains("perro"), "{out:?}");

    // Entities decoded for translation and escaped again; tags through a pivot.
    let text = r#"<g id="1">Tom &amp; Jerry</g> eat <g id="2">the <g id="3">red</g> apples</g> &lt;now&gt;."#;
    let res = t
        .translate(req(Some("EN"), "PT-PT", &[text], TagHandling::Xml))
        .await
        .unwrap();
    let out = &res.texts[0];
    for tag in [r#"<g id="1">"#, r#"<g id="2">"#, r#"<g id="3">"#] {
        assert_eq!(out.matches(tag).count(), 1, "{tag} in {out:?}");
    }
    assert_eq!(out.matches("</g>").count(), 3, "{out:?}");
    assert!(
        out.contains("&amp;") && out.contains("&lt;") && out.contains("&gt;"),
        "{out:?}"
    );
    assert!(!out.contains(" & "), "{out:?}");
    println!("{out}");
}

#[tokio::test]
async fn plain_text_keeps_markup_characters() {
    let t = translator();
    let res = tr(&t, "EN", "ES", &["The <b>dog</b> & the cat."]).await;
    let out = &res.texts[0];
    assert!(
        out.contains("<b>") && out.contains("</b>") && out.contains('&'),
        "{out:?}"
    );
}

#[tokio::test]
async fn odd_inputs_do_not_break_anything() {
    let t = translator();
    let huge = "The big dog runs in the park. ".repeat(3000);
    let texts = [
        "",
        "   ",
        "\0",
        "The dog\0 runs.",
        "...",
        "\n\nThe dog runs.\n",
        huge.as_str(),
        "Ünïcödé ßtraße 日本語 🙂",
        "Control \u{1}\u{7}\u{1b}[0m chars\r\nand \u{feff}BOM \u{200f}rtl e\u{301} \u{2028} end",
    ];
    let res = tr(&t, "EN", "ES", &texts).await;
    assert_eq!(res.texts[0], "");
    assert_eq!(res.texts[1], "   ");
    assert_eq!(res.texts[2], "");
    assert!(
        res.texts[3].contains("perro") && !res.texts[3].contains('\0'),
        "{:?}",
        res.texts[3]
    );
    assert_eq!(res.texts[4], "...");
    assert!(
        res.texts[5].starts_with("\n\n") && res.texts[5].ends_with(".\n"),
        "{:?}",
        res.texts[5]
    );
    assert!(res.texts[6].matches("perro").count() >= 2900, "huge text");
    assert!(
        res.texts[7].contains("日本語") && res.texts[7].contains('🙂'),
        "{:?}",
        res.texts[7]
    );
    assert!(
        res.texts[8].contains("\r\n") && res.texts[8].contains('\u{1b}'),
        "{:?}",
        res.texts[8]
    );
    let long_word = "x".repeat(20_000);
    let res = tr(&t, "EN", "ES", &[&long_word, "The dog runs."]).await;
    assert_eq!(res.texts[0], long_word);
    assert!(res.texts[1].contains("perro"));

    let tags = [
        "<x id=\"1\"/>",
        "<g id=\"1\"></g>",
        "<b>unclosed dog",
        "stray</b> dog",
        "a < b & c",
    ];
    let res = t
        .translate(req(Some("EN"), "ES", &tags, TagHandling::Xml))
        .await
        .unwrap();
    assert_eq!(res.texts[0], "<x id=\"1\"/>");
    assert_eq!(res.texts[1], "<g id=\"1\"></g>");
    assert!(
        res.texts[2].starts_with("<b>") && res.texts[2].ends_with("</b>"),
        "{:?}",
        res.texts[2]
    );
    assert!(!res.texts[3].contains("</b>"), "{:?}", res.texts[3]);
    assert!(
        res.texts[4].contains("&lt;") && res.texts[4].contains("&amp;"),
        "{:?}",
        res.texts[4]
    );
}

#[tokio::test]
async fn detects_the_source_language() {
    let t = translator();
    assert_eq!(
        t.detect("El perro grande corre por el parque todos los días.")
            .as_deref(),
        Some("ES")
    );
    let res = t
        .translate(req(
            None,
            "EN-GB",
            &["El perro grande corre por el parque.", "La casa es roja."],
            TagHandling::None,
        ))
        .await
        .unwrap();
    assert_eq!(res.detected_source_lang, "ES");
    assert_eq!(res.route, ["spa-eng"]);
    assert!(
        res.texts[0].to_lowercase().contains("dog"),
        "{:?}",
        res.texts
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests() {
    let t = Arc::new(translator());
    let calls = (0..20).map(|i| {
        let t = t.clone();
        tokio::spawn(async move {
            let target = if i % 2 == 0 { "ES" } else { "PT-BR" };
            let texts = vec![format!("The dog {i} runs."), "The house is red.".to_owned()];
            t.translate(TranslateRequest {
                source_lang: Some("EN".into()),
                target_lang: target.into(),
                texts,
                tag_handling: TagHandling::None,
                ..Default::default()
            })
            .await
        })
    });
    for (i, call) in futures_join(calls).await.into_iter().enumerate() {
        let res = call.unwrap_or_else(|e| panic!("call {i} failed: {e}"));
        assert_eq!(res.texts.len(), 2);
        assert!(res.texts[0].contains(&i.to_string()), "{:?}", res.texts);
    }
}

/// Spawns every task (the iterator is lazy) before awaiting them in order.
async fn futures_join<T>(handles: impl IntoIterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let handles: Vec<_> = handles.into_iter().collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

#[tokio::test]
async fn concurrent_requests_share_blocks() {
    let engine = Arc::new(
        crate::ApertiumEngine::new(ApertiumConfig {
            pipelines_per_pair: 1,
            ..ApertiumConfig::default()
        })
        .expect("Apertium"),
    );
    let t = Arc::new(Translator::new(vec![engine.clone() as Arc<dyn crate::Engine>]).unwrap());
    // Start the pipeline.
    tr(&t, "EN", "ES", &["The dog runs."]).await;
    let before = engine.blocks_sent();
    let calls = (0..64).map(|i| {
        let t = t.clone();
        tokio::spawn(async move {
            let text = format!("The dog number {i} sees a big house near the station.");
            t.translate(req(Some("EN"), "ES", &[&text], TagHandling::None))
                .await
        })
    });
    for (i, res) in futures_join(calls).await.into_iter().enumerate() {
        let res = res.expect("translation");
        assert!(
            res.texts[0].contains(&i.to_string()) && res.texts[0].contains("perro"),
            "{:?}",
            res.texts
        );
    }
    let blocks = engine.blocks_sent() - before;
    // One flush per request without batching; far fewer with it.
    assert!(blocks < 32, "{blocks} blocks for 64 requests");
}

#[tokio::test]
async fn killed_pipeline_is_restarted() {
    let t = Translator::apertium(ApertiumConfig {
        pipelines_per_pair: 1,
        ..ApertiumConfig::default()
    })
    .expect("Apertium");
    let res = tr(&t, "EN", "ES", &["The dog runs."]).await;
    assert!(res.texts[0].contains("perro"));
    let pids = t.process_ids();
    assert!(pids.len() > 3, "{pids:?}");
    // Kill a stage in the middle of the pipeline.
    let victim = pids[pids.len() / 2];
    let status = std::process::Command::new("kill")
        .arg("-9")
        .arg(victim.to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let res = tr(&t, "EN", "ES", &["The cat sleeps."]).await;
    assert!(res.texts[0].contains("gato"), "{:?}", res.texts);
    assert!(!t.process_ids().contains(&victim));
}

/// Tags of `s` if it is well-formed, in document order.
fn well_formed_tags(s: &str) -> Result<Vec<String>, String> {
    let mut stack: Vec<String> = Vec::new();
    let mut tags = Vec::new();
    let mut rest = s;
    while let Some(p) = rest.find('<') {
        let end = rest[p..].find('>').ok_or("unterminated tag")? + p;
        let tag = &rest[p..=end];
        tags.push(tag.to_owned());
        if let Some(name) = tag.strip_prefix("</") {
            let name = name.trim_end_matches('>');
            if stack.pop().as_deref() != Some(name) {
                return Err(format!("unexpected {tag}"));
            }
        } else if !tag.ends_with("/>") {
            let name = tag[1..tag.len() - 1]
                .split_whitespace()
                .next()
                .unwrap_or_default();
            stack.push(name.to_owned());
        }
        rest = &rest[end + 1..];
    }
    if stack.is_empty() {
        Ok(tags)
    } else {
        Err(format!("unclosed {stack:?}"))
    }
}

#[tokio::test]
async fn random_tags_stay_well_formed() {
    let t = translator();
    let sentences = [
        "Everyone is permitted to copy and distribute verbatim copies of this license document.",
        "The licenses for most software and other practical works are designed to take away your freedom",
        "When we speak of free software, we are referring to freedom, not price!",
        "You can apply it to your programs, too.",
        "Developers that use the GNU GPL protect your rights with two steps",
        "Some devices are designed to deny users access to install or run modified versions of the software inside them",
        "Where is the big red house of my old father?",
        "I have not seen the small black cat & the dog since Monday",
    ];
    let mut seed: u64 = 7;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut texts = Vec::new();
    for round in 0..10 {
        for s in sentences {
            let words: Vec<String> = s
                .split_whitespace()
                .map(|w| w.replace('&', "&amp;"))
                .collect();
            let n = words.len();
            let a = rnd(n);
            let b = a + rnd(n - a);
            let c = rnd(n);
            let mut out = String::new();
            for (i, w) in words.iter().enumerate() {
                if i == a {
                    out.push_str(r#"<g id="1">"#);
                }
                if i == c {
                    out.push_str(r#"<x id="9"/>"#);
                }
                let inner = i == (a + b) / 2 && b > a + 1;
                if inner {
                    out.push_str(r#"<g id="2">"#);
                }
                out.push_str(w);
                if inner {
                    out.push_str("</g>");
                }
                if i == b {
                    out.push_str("</g>");
                }
                if i + 1 < n {
                    out.push(' ');
                }
            }
            if round % 2 == 1 {
                out = format!("<b>{out}</b>");
            }
            texts.push(out);
        }
    }
    for target in ["ES", "PT-BR", "CA"] {
        let res = t
            .translate(TranslateRequest {
                source_lang: Some("EN".into()),
                target_lang: target.into(),
                texts: texts.clone(),
                tag_handling: TagHandling::Xml,
                ..Default::default()
            })
            .await
            .unwrap();
        for (src, out) in texts.iter().zip(&res.texts) {
            let mut want = well_formed_tags(src).unwrap();
            let mut got = well_formed_tags(out).unwrap_or_else(|e| panic!("{e}: {src} → {out}"));
            want.sort();
            got.sort();
            assert_eq!(want, got, "{src} → {out}");
        }
    }
}

/// Start tags (`<b title="3">`), end tags and void elements of a text, with
/// their names; `Err` unless the elements nest (HTML voids stand alone).
fn elements(s: &str) -> Result<Vec<(String, String)>, String> {
    const VOID: &[&str] = &["br", "img", "hr", "wbr"];
    let mut stack: Vec<String> = Vec::new();
    let mut starts = Vec::new();
    let mut rest = s;
    while let Some(p) = rest.find('<') {
        let end = rest[p..].find('>').ok_or("unterminated tag")? + p;
        let tag = &rest[p..=end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix("</") {
            let name = name.trim_end_matches('>');
            if stack.pop().as_deref() != Some(name) {
                return Err(format!("unexpected {tag}"));
            }
            continue;
        }
        let name = tag[1..tag.len() - 1]
            .trim_end_matches('/')
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        if !tag.ends_with("/>") && !VOID.contains(&name.as_str()) {
            stack.push(name.clone());
        }
        starts.push((tag.to_owned(), name));
    }
    if stack.is_empty() {
        Ok(starts)
    } else {
        Err(format!("unclosed {stack:?}"))
    }
}

/// The text inside the element whose start tag is `start` (first occurrence).
fn content_of<'a>(s: &'a str, start: &str, name: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let mut depth = 1;
    let mut at = from;
    while let Some(p) = s[at..].find('<') {
        let p = at + p;
        let rest = &s[p..];
        if rest.starts_with(&format!("</{name}>")) {
            depth -= 1;
            if depth == 0 {
                return Some(&s[from..p]);
            }
        } else if let Some(after) = rest.strip_prefix(&format!("<{name}"))
            && (after.starts_with(' ') || after.starts_with('>'))
        {
            depth += 1;
        }
        at = p + 1;
    }
    None
}

/// Markup generated over real sentences: random nesting, adjacent siblings
/// (no space between them), attributes with entities, void and empty
/// elements, entities in the text. Every element carries a unique `title`.
fn generated_markup(sentence: &str, html: bool, rnd: &mut impl FnMut(usize) -> usize) -> String {
    const NAMES: &[&str] = &["b", "i", "em", "strong", "span", "a"];
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut out = String::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut n = 0;
    let open = |out: &mut String,
                stack: &mut Vec<&str>,
                n: &mut usize,
                rnd: &mut dyn FnMut(usize) -> usize| {
        let name = NAMES[rnd(NAMES.len())];
        *n += 1;
        match name {
            "a" => out.push_str(&format!(r#"<a href="/p?x=1&amp;y={n}" title="{n}">"#)),
            "span" => out.push_str(&format!(r#"<span class="c{n}" title="{n}">"#)),
            _ => out.push_str(&format!(r#"<{name} title="{n}">"#)),
        }
        stack.push(name);
    };
    for (k, w) in words.iter().enumerate() {
        while stack.len() < 4 && rnd(4) == 0 {
            open(&mut out, &mut stack, &mut n, &mut *rnd);
        }
        out.push_str(&w.replace('&', "&amp;").replace('<', "&lt;"));
        if rnd(10) == 0 {
            n += 1;
            out.push_str(&if html {
                format!(r#"<img src="i{n}.png" title="{n}">"#)
            } else {
                format!(r#"<x id="{n}" title="{n}"/>"#)
            });
        }
        let mut closed = false;
        while !stack.is_empty() && rnd(3) == 0 {
            let name = stack.pop().unwrap_or_default();
            out.push_str(&format!("</{name}>"));
            closed = true;
        }
        if k + 1 < words.len() {
            // Adjacent siblings: the next element starts right after this one.
            if closed && rnd(3) == 0 {
                open(&mut out, &mut stack, &mut n, &mut *rnd);
            } else {
                out.push(' ');
            }
        }
    }
    while let Some(name) = stack.pop() {
        out.push_str(&format!("</{name}>"));
    }
    if html { format!("<p>{out}</p>") } else { out }
}

/// The property test of inline markup: through the real engine, the output's
/// elements nest, every source element appears exactly once with the same
/// attributes, an element that held words still holds words, and the text as a
/// whole keeps most of its words (none lost without a translation in their
/// place). Fixed seed in
/// CI; `TOLK_MARKUP_SEED` and `TOLK_MARKUP_CASES` make longer runs
/// (scripts/fuzz.sh).
#[tokio::test]
async fn generated_markup_keeps_every_element_with_its_words() {
    let t = translator();
    let sentences = [
        "Everyone is permitted to copy and distribute verbatim copies of this license document.",
        "The licenses for most software are designed to take away your freedom to share it.",
        "When we speak of free software, we are referring to freedom, not price!",
        "Where is the big red house of my old father?",
        "I have not seen the small black cat & the dog since Monday.",
        "This is bold and italic text in a sentence split across two spans.",
        "The weather is nice today and the children play in the garden.",
        "Please read the note before you install the new version.",
    ];
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let mut seed: u64 = env("TOLK_MARKUP_SEED", 1);
    let cases = env("TOLK_MARKUP_CASES", 48) as usize;
    let mut rnd = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for html in [false, true] {
        let texts: Vec<String> = (0..cases)
            .map(|k| generated_markup(sentences[k % sentences.len()], html, &mut rnd))
            .collect();
        for target in ["ES", "CA", "PT-BR"] {
            let res = t
                .translate(TranslateRequest {
                    source_lang: Some("EN".into()),
                    target_lang: target.into(),
                    texts: texts.clone(),
                    tag_handling: TagHandling::Xml,
                    markup: crate::MarkupOptions {
                        html,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .await
                .expect("translation");
            for (src, out) in texts.iter().zip(&res.texts) {
                let want = elements(src).expect("generated markup nests");
                let got = elements(out).unwrap_or_else(|e| panic!("{e}: {src} → {out}"));
                let mut a: Vec<&String> = want.iter().map(|(t, _)| t).collect();
                let mut b: Vec<&String> = got.iter().map(|(t, _)| t).collect();
                a.sort();
                b.sort();
                assert_eq!(a, b, "{target}: {src} → {out}");
                let count = |s: &str| {
                    crate::markup::plain_text(s)
                        .split_whitespace()
                        .filter(|w| w.chars().any(char::is_alphanumeric))
                        .count()
                };
                assert!(
                    count(out) * 3 >= count(src) * 2,
                    "{target}: words lost: {src} → {out}"
                );
                for (start, name) in &want {
                    let Some(inner) = content_of(src, start, name) else {
                        continue;
                    };
                    // An element of one or two words may lose them where
                    // the target drops a word (a subject pronoun in a
                    // Romance verb) and Apertium's reordering moves the other
                    // under its neighbour's blank ("<i>free</i> <i>software,
                    // we</i>" → "<i>programari lliure</i><i>,</i>"); one of
                    // three words or more keeps some.
                    let words = crate::markup::plain_text(inner)
                        .split_whitespace()
                        .filter(|w| w.chars().any(char::is_alphabetic))
                        .count();
                    if words > 2 {
                        let now = content_of(out, start, name).unwrap_or_default();
                        assert!(
                            crate::markup::plain_text(now)
                                .chars()
                                .any(char::is_alphanumeric),
                            "{target}: {start} lost its words: {src} → {out}"
                        );
                    }
                }
            }
        }
    }
}

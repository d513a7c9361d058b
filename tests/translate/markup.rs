//! Markup in `/v2/translate`: XML and HTML tag handling, its options, and
//! words staying inside their own tags.

use super::*;

/// Tag handling: the translated words stay inside well-formed <b> tags (v2).
#[tokio::test]
async fn xml_tag_handling_keeps_the_translated_words_inside_their_tags() -> Result<()> {
    let c = client("translate_xml").await?;
    let (code, body) = xml_tags(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let t = &body["translations"][0];
    assert_eq!(t["text"], "El coche <b>rojo</b> es grande.", "{body}");
    assert_eq!(t["tag_handling_version"], "v2", "{body}");
    Ok(())
}

/// html and an explicit tag_handling_version (JSON only), echoed back.
#[tokio::test]
async fn an_explicit_tag_handling_version_is_echoed_back() -> Result<()> {
    let c = client("translate_html_v1").await?;
    let (code, body) = html_v1(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["translations"][0]["text"], "<p>Tengo un <i>perro</i>.</p>",
        "{body}"
    );
    assert_eq!(body["translations"][0]["tag_handling_version"], "v1");
    Ok(())
}

#[tokio::test]
async fn translate_tag_handling_options() -> Result<()> {
    let mut world = World::new("translate_tags").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    let one = |body: Value| {
        let api = &api;
        let key = &key;
        async move {
            let (code, answer) = api.translate(key, &body, None).await?;
            anyhow::ensure!(code == 200, "{body} → {code} {answer}");
            let text = answer["translations"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            anyhow::ensure!(balanced(&text), "not well-formed: {text}");
            Ok::<_, anyhow::Error>(text)
        }
    };

    // ignore_tags: the element and its content come back verbatim.
    let out = one(json!({"text": ["I have a <code>red dog</code> and a cat."],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
        "ignore_tags": ["code"]}))
    .await?;
    assert!(out.contains("<code>red dog</code>"), "{out}");
    assert!(out.contains("gato"), "{out}");

    // splitting_tags: each <par> is a sentence of its own; the structure stays.
    let out = one(
        json!({"text": ["<doc><par>The house is big</par><par>I have a dog</par></doc>"],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
        "outline_detection": false, "splitting_tags": ["par"]}),
    )
    .await?;
    assert_eq!(
        out,
        "<doc><par>La casa es grande</par><par>Tengo un perro</par></doc>"
    );

    // outline_detection (default on): elements laid out on lines split.
    let outline = "<doc>\n  <p>The house is big</p>\n  <p>I have a dog</p>\n</doc>";
    let out = one(
        json!({"text": [outline], "source_lang": "EN", "target_lang": "ES",
        "tag_handling": "xml"}),
    )
    .await?;
    assert_eq!(
        out,
        "<doc>\n  <p>La casa es grande</p>\n  <p>Tengo un perro</p>\n</doc>"
    );
    // non_splitting_tags overrides the detection: one sentence, still well-formed.
    let out = one(
        json!({"text": [outline], "source_lang": "EN", "target_lang": "ES",
        "tag_handling": "xml", "non_splitting_tags": "p"}),
    )
    .await?;
    assert_eq!(out.matches("<p>").count(), 2, "{out}");
    assert!(out.starts_with("<doc>") && out.ends_with("</doc>"), "{out}");
    assert_ne!(
        out,
        "<doc>\n  <p>La casa es grande</p>\n  <p>Tengo un perro</p>\n</doc>"
    );

    // html: block elements split, <br> and <script> are kept as written.
    let out = one(json!({"text": ["<div><p>The house is big<br>I have a dog</p><script>var t = \"The house\";</script><p>Good morning</p></div>"],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "html",
        "tag_handling_version": "v2"}))
    .await?;
    assert!(out.starts_with("<div><p>La casa es grande"), "{out}");
    assert!(out.contains("<br>"), "{out}");
    assert!(
        out.contains("<script>var t = \"The house\";</script><p>Buenos días</p></div>"),
        "{out}"
    );

    // v1 with malformed input: a stray end tag is dropped, an open element closed.
    let out = one(
        json!({"text": ["The </i> house is <b>big"], "source_lang": "EN",
        "target_lang": "ES", "tag_handling": "xml", "tag_handling_version": "v1"}),
    )
    .await?;
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>().join(" "),
        "La casa es <b>grande</b>"
    );

    // preserve_formatting and split_sentences=nonewlines: surrounding
    // whitespace and line breaks are kept.
    let (code, body) = api
        .post_form(
            &key,
            "/v2/translate",
            &[
                ("text", "  The house is big.\n"),
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("preserve_formatting", "1"),
                ("split_sentences", "nonewlines"),
            ],
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["  La casa es grande.\n"]);
    Ok(())
}

/// Adjacent inline elements keep their own words and order; text between
/// elements stays outside them (HTML and XML, through real Apertium).
#[tokio::test]
async fn adjacent_inline_elements_keep_their_own_words() -> Result<()> {
    let c = client("translate_adjacent_tags").await?;
    for tag_handling in ["html", "xml"] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &json!({
                    "text": [
                        "<p>This is <b>bold</b><i>italic</i> text.</p>",
                        "<p><span>This is a sentence split</span><span>across two spans</span></p>",
                        "<p>This is <b>bold</b> and <i>italic</i> text.</p>",
                    ],
                    "source_lang": "EN", "target_lang": "ES", "tag_handling": tag_handling,
                }),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{body}");
        let out = translated_texts(&body);
        // Two elements, each with its own word, one after the other.
        assert!(
            out[0].contains("</b><i>") && !out[0].contains("<b><i>"),
            "{}",
            out[0]
        );
        assert!(!out[0].contains("bolditalic"), "{}", out[0]);
        assert!(
            out[1].contains("</span><span>") && !out[1].contains("<span><span>"),
            "{}",
            out[1]
        );
        assert!(!out[1].contains("splitacross"), "{}", out[1]);
        // "and" (its translation, "e" before "i") between the elements, not inside <i>.
        assert!(out[2].contains("</b> e <i>"), "{}", out[2]);
    }
    Ok(())
}

/// Engine analysis tags never reach the output: French "y" is a pronoun
/// fr-es cannot generate (`<prn>` leaked); strftime codes are placeholders;
/// `mark_unknown` (an extension) marks the words the source dictionary does
/// not know, and without it they are written as in the source.
#[tokio::test]
async fn unknown_words_are_marked_on_request_and_tags_never_leak() -> Result<()> {
    let c = client("translate_unknown").await?;
    let ask = |text: &str, source: &str, extra: Value| {
        let mut body = json!({"text": [text], "source_lang": source, "target_lang": "ES"});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        body
    };
    // "Y" alone is the pronoun y: the generator has no lemma for it.
    let (code, body) = c
        .api
        .translate(&c.key, &ask("Le chat y dort. Y", "FR", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(!out.contains('<') && !out.contains('>'), "{out}");
    // Date formats pass through as written.
    let (code, body) = c
        .api
        .translate(&c.key, &ask("Le %e %B %Y à %H:%M", "FR", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("%e %B %Y") && out.contains("%H:%M"), "{out}");
    // Unknown words: plain without the option, marked with it, in plain
    // text and in markup (never inside a tag or a protected span).
    let src = "The zorblat sings at https://zorblat.example.com today.";
    let (code, body) = c
        .api
        .translate(&c.key, &ask(src, "EN", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains(" zorblat ") && !out.contains('*'), "{out}");
    let (code, body) = c
        .api
        .translate(&c.key, &ask(src, "EN", json!({"mark_unknown": true})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("*zorblat "), "{out}");
    assert!(out.contains("https://zorblat.example.com"), "{out}");
    assert_eq!(out.matches('*').count(), 1, "{out}");
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &ask(
                "<p>The <b class=\"zorblat\">zorblat</b> sings.</p>",
                "EN",
                json!({"mark_unknown": "1", "tag_handling": "html"}),
            ),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("<b class=\"zorblat\">*zorblat</b>"), "{out}");
    Ok(())
}

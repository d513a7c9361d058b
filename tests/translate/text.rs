//! The text of `/v2/translate`: detection per text, protected spans, engine
//! artefacts repaired, sentence splitting.

use super::*;

/// Form body, `text` repeated, no source_lang: the source is detected.
#[tokio::test]
async fn a_form_body_with_repeated_text_is_translated_from_the_detected_source() -> Result<()> {
    let c = client("translate_form").await?;
    let (code, body) = form_body(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body);
    assert_eq!(out.len(), 2, "{body}");
    assert!(out[0].contains("house") && out[0].contains("dog"), "{body}");
    assert!(out[1].contains("Good morning"), "{body}");
    let items = body["translations"].as_array().context("translations")?;
    assert_eq!(items[0]["detected_source_language"], "ES", "{body}");
    Ok(())
}

/// Without source_lang, an Italian, a Basque and a Croatian text are
/// recognised (languages only reachable through the added Apertium pairs)
/// and translated.
#[tokio::test]
async fn texts_in_the_added_languages_are_detected_and_translated() -> Result<()> {
    let c = client("translate_detect_more").await?;
    for (text, target, detected) in [
        (
            "I bambini giocano nel giardino dietro la vecchia casa.",
            "ES",
            "IT",
        ),
        (
            "Haurrak etxe zaharraren atzeko lorategian jolasten ari dira.",
            "EN-GB",
            "EU",
        ),
        ("Djeca se igraju u vrtu iza stare kuće.", "EN-GB", "SH"),
    ] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &serde_json::json!({"text": [text], "target_lang": target}),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{text}: {body}");
        assert_eq!(
            body["translations"][0]["detected_source_language"], detected,
            "{body}"
        );
        assert_ne!(translated_texts(&body)[0], text, "translated: {body}");
    }
    Ok(())
}

/// split_sentences: "1" (the default) ends a sentence at each line break, so
/// the lines are translated on their own; "0" lets Apertium read the break as
/// a blank (here it joins "morning I" into one clause). Line breaks are kept.
#[tokio::test]
async fn split_sentences_decides_whether_a_line_break_ends_a_sentence() -> Result<()> {
    let c = client("translate_split").await?;
    let (code, body) = multiline(&c.api, &c.key, None).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["Buenos días\nTengo un perro."]);
    let (code, body) = multiline(&c.api, &c.key, Some("0")).await?;
    assert_eq!(code, 200, "{body}");
    let joined = translated_texts(&body).concat();
    assert!(
        joined.starts_with("Buenos días\n") && joined.ends_with("perro."),
        "{body}"
    );
    Ok(())
}

/// URLs, e-mail addresses, file paths and placeholders come back verbatim
/// from the engine, in plain text and in XML, while the words around them
/// are translated.
#[tokio::test]
async fn urls_addresses_paths_and_placeholders_pass_through_unchanged() -> Result<()> {
    let mut world = World::new("translate_protected").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    let kept = [
        "public-webapps-request@w3.org",
        "https://Example.com/Path?a=1&b=2",
        "/usr/local/etc/tolk.conf",
        "{0}",
        "%s",
    ];
    let text = "Write to public-webapps-request@w3.org or visit https://Example.com/Path?a=1&b=2 and open /usr/local/etc/tolk.conf with {0} and %s.";
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [text], "source_lang": "EN", "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    for k in kept {
        assert!(out.contains(k), "{k} changed: {out}");
    }
    assert!(
        !out.contains("Write to") && !out.contains(" and open"),
        "{out}"
    );

    let xml = "<p>Visit https://Example.com/Path?a=1&amp;b=2 for {name} and <b>the house</b>.</p>";
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [xml], "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(
        out.contains("https://Example.com/Path?a=1&amp;b=2"),
        "{out}"
    );
    assert!(
        out.contains("{name}") && out.contains("<b>la casa</b>"),
        "{out}"
    );
    Ok(())
}

#[tokio::test]
async fn engine_artefacts_are_repaired_and_marked_or_protected_text_kept() -> Result<()> {
    let c = client("hygiene").await?;
    // Apertium capitalises "sit" and "at" here ("Sienta", "En"); the source
    // has no capital mid-sentence, so those are artefacts.
    let (code, body) = c
        .api
        .en_es(
            &c.key,
            &["Lorem ipsum dolor sit amet, consectetur adipiscing elit at odio."],
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    assert!(
        text.contains("elit en odio") && text.contains("sienta"),
        "{text}"
    );
    // Code spans and numbers with units pass through the engine unchanged.
    let src = "Run `Cargo Build` on a 2.4 GHz machine with 16 GB.";
    let (code, body) = c.api.en_es(&c.key, &[src], None).await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    for kept in ["`Cargo Build`", "2.4 GHz", "16 GB"] {
        assert!(text.contains(kept), "{kept} in {text}");
    }
    // Text marked with another language than the source stays as it is;
    // text marked with the source language is translated.
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["<p>The <q lang=\"fr\">maison</q> and <i xml:lang=\"en-GB\">the house</i> are big.</p>"],
                "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    assert!(text.contains("<q lang=\"fr\">maison</q>"), "{text}");
    assert!(text.contains("la casa"), "{text}");
    Ok(())
}

/// Each text of a request is detected on its own: a mixed-language array is
/// translated text by text and each reports its own language.
#[tokio::test]
async fn each_text_of_a_request_is_detected_on_its_own() -> Result<()> {
    let c = client("translate_detect_each").await?;
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["Where is the train station, please?", "Bonjour tout le monde, comment allez-vous?"],
                "target_lang": "ES",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    assert_eq!(body["translations"][1]["detected_source_language"], "FR");
    let out = translated_texts(&body);
    assert!(
        out[0].contains("tren") && out[0].contains("Dónde"),
        "{}",
        out[0]
    );
    assert!(!out[0].contains("Where"), "{}", out[0]);
    assert!(out[1].to_lowercase().contains("mundo"), "{}", out[1]);
    Ok(())
}

/// Short texts are not guessed into a language they are not in, and are never
/// returned untranslated because of a guess.
#[tokio::test]
async fn short_texts_are_detected_and_translated() -> Result<()> {
    let c = client("translate_detect_short").await?;
    for (text, target, detected, expect) in [
        ("Hello", "ES", "EN", "Hola"),
        ("proton beam", "ES", "EN", "protón"),
        ("Hello.\nBye.", "ES", "EN", "Hola"),
        ("Good morning", "CA", "EN", "Bon dia"),
    ] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &json!({"text": [text], "target_lang": target}),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{text}: {body}");
        assert_eq!(
            body["translations"][0]["detected_source_language"], detected,
            "{text}: {body}"
        );
        let out = &translated_texts(&body)[0];
        assert!(out.contains(expect), "{text} → {out}");
    }
    // A short text that is in the target language is still returned as it is.
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({"text": ["La casa es muy grande y bonita."], "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["detected_source_language"], "ES");
    assert_eq!(
        translated_texts(&body)[0],
        "La casa es muy grande y bonita."
    );
    Ok(())
}

/// A protected span keeps the whitespace the source had around it, wherever it
/// sits in the segment (plain text and markup).
#[tokio::test]
async fn protected_spans_keep_their_spaces() -> Result<()> {
    let c = client("translate_span_spaces").await?;
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["Item `1`", "%{count} messages", "Source: https://example.com/docs", "Send it to info@example.com today."],
                "source_lang": "EN", "target_lang": "ES",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body);
    assert!(out[0].ends_with(" `1`"), "{}", out[0]);
    assert!(out[1].starts_with("%{count} "), "{}", out[1]);
    assert!(out[2].ends_with(": https://example.com/docs"), "{}", out[2]);
    assert!(out[3].contains(" info@example.com "), "{}", out[3]);
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["<p>Please go to <a href=\"/x\">http://localhost:5000</a> and sign in.</p>"],
                "source_lang": "EN", "target_lang": "ES", "tag_handling": "html",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = &translated_texts(&body)[0];
    assert!(
        out.contains(" <a href=\"/x\">http://localhost:5000</a> "),
        "{out}"
    );
    Ok(())
}

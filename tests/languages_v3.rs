//! DeepL's language listings beyond `/v2/languages`: `/v3/languages` per
//! resource, `/v3/languages/resources`, and the glossary language pairs
//! (in-process router, the local Apertium pairs as engines).

use anyhow::{Context, Result};
use serde_json::Value;

use crate::in_process::InProcess;
use crate::support::message;

/// The entry of `lang` in a `/v3/languages` answer.
fn entry<'a>(list: &'a Value, lang: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|l| l["lang"] == lang)
}

#[tokio::test]
async fn v3_languages_for_text_say_which_side_and_which_features() -> Result<()> {
    let app = InProcess::new("v3_langs_text").await?;
    let (code, list) = app.get("/v3/languages?resource=translate_text").await?;
    assert_eq!(code, 200, "{list}");
    // English: a source; its variants are the targets.
    let en = entry(&list, "en").context("en")?;
    assert_eq!(en["usable_as_source"], true, "{en}");
    assert_eq!(en["usable_as_target"], false, "{en}");
    assert_eq!(en["name"], "English");
    assert_eq!(en["status"], "stable");
    assert_eq!(en["features"]["auto_detection"]["status"], "stable", "{en}");
    let en_us = entry(&list, "en-US").context("en-US")?;
    assert_eq!(en_us["usable_as_source"], false);
    assert_eq!(en_us["usable_as_target"], true);
    // Spanish both ways, with the target features.
    let es = entry(&list, "es").context("es")?;
    assert_eq!(
        (&es["usable_as_source"], &es["usable_as_target"]),
        (&true.into(), &true.into())
    );
    for feature in ["tag_handling", "glossary", "style_rules"] {
        assert!(es["features"].get(feature).is_some(), "{feature}: {es}");
    }
    // Detection is claimed where a model exists: Italian and Serbo-Croatian
    // yes, Galician (lingua has no model) no.
    for (lang, detected) in [("it", true), ("sh", true), ("eu", true), ("gl", false)] {
        let e = entry(&list, lang).with_context(|| lang.to_owned())?;
        assert_eq!(e["usable_as_source"], true, "{e}");
        assert_eq!(
            e["features"].get("auto_detection").is_some(),
            detected,
            "{e}"
        );
    }
    // Every item has the schema's required fields.
    for item in list.as_array().context("array")? {
        for field in [
            "lang",
            "name",
            "usable_as_source",
            "usable_as_target",
            "features",
            "status",
        ] {
            assert!(item.get(field).is_some(), "{field}: {item}");
        }
        assert!(item["features"].is_object(), "{item}");
    }
    // include= takes beta and external.
    let (code, _) = app
        .get("/v3/languages?resource=translate_text&include=beta&include=external")
        .await?;
    assert_eq!(code, 200);
    Ok(())
}

#[tokio::test]
async fn v3_languages_per_resource_and_their_errors() -> Result<()> {
    let app = InProcess::new("v3_langs_resources").await?;
    // Glossaries and memories name base languages.
    let (code, glossary) = app.get("/v3/languages?resource=glossary").await?;
    assert_eq!(code, 200, "{glossary}");
    let en = entry(&glossary, "en").context("en")?;
    assert_eq!(
        (&en["usable_as_source"], &en["usable_as_target"]),
        (&true.into(), &true.into())
    );
    assert!(entry(&glossary, "en-US").is_none(), "{glossary}");
    // Speech is recognised in English only: one source.
    let (code, voice) = app.get("/v3/languages?resource=voice").await?;
    assert_eq!(code, 200, "{voice}");
    let sources: Vec<&Value> = voice
        .as_array()
        .context("array")?
        .iter()
        .filter(|l| l["usable_as_source"] == true)
        .collect();
    assert_eq!(sources.len(), 1, "{voice}");
    assert_eq!(sources[0]["lang"], "en");
    assert!(entry(&voice, "es").is_some_and(|es| es["usable_as_target"] == true));
    // Write: targets with a Hunspell dictionary, with style and tone.
    let (code, write) = app.get("/v3/languages?resource=write").await?;
    assert_eq!(code, 200, "{write}");
    let items = write.as_array().context("array")?;
    assert!(!items.is_empty(), "{write}");
    assert!(
        items
            .iter()
            .all(|l| l["usable_as_target"] == true && l["features"].get("writing_style").is_some())
    );
    for resource in ["translate_document", "style_rules", "translation_memory"] {
        let (code, list) = app
            .get(&format!("/v3/languages?resource={resource}"))
            .await?;
        assert_eq!(code, 200, "{resource}: {list}");
        assert!(list.as_array().is_some_and(|l| !l.is_empty()), "{resource}");
    }
    // No resource, an unknown one, an unknown include: 400 naming the field.
    for (path, field) in [
        ("/v3/languages", "'resource'"),
        ("/v3/languages?resource=teleport", "'resource'"),
        ("/v3/languages?resource=glossary&include=alpha", "'include'"),
    ] {
        let (code, body) = app.get(path).await?;
        assert_eq!(code, 400, "{path}: {body}");
        assert!(message(&body).contains(field), "{path}: {body}");
    }
    Ok(())
}

#[tokio::test]
async fn v3_language_resources_list_every_resource_and_feature_needs() -> Result<()> {
    let app = InProcess::new("v3_langs_res").await?;
    let (code, resources) = app.get("/v3/languages/resources").await?;
    assert_eq!(code, 200, "{resources}");
    let names: Vec<&str> = resources
        .as_array()
        .context("array")?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "translate_text",
            "translate_document",
            "glossary",
            "voice",
            "write",
            "style_rules",
            "translation_memory"
        ]
    );
    let text = &resources[0]["features"];
    let formality = text
        .as_array()
        .context("features")?
        .iter()
        .find(|f| f["name"] == "formality")
        .context("formality")?;
    assert_eq!(formality["needs_target_support"], true);
    assert!(formality.get("needs_source_support").is_none());
    Ok(())
}

#[tokio::test]
async fn glossary_language_pairs_are_the_pairs_the_engines_translate() -> Result<()> {
    let app = InProcess::new("gloss_pairs").await?;
    let (code, body) = app.get("/v2/glossary-language-pairs").await?;
    assert_eq!(code, 200, "{body}");
    let pairs: Vec<(String, String)> = body["supported_languages"]
        .as_array()
        .context("supported_languages")?
        .iter()
        .map(|p| {
            (
                p["source_lang"].as_str().unwrap_or_default().to_owned(),
                p["target_lang"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for pair in [("en", "es"), ("es", "en"), ("en", "pt")] {
        assert!(
            pairs.contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?} missing: {body}"
        );
    }
    assert!(pairs.iter().all(|(s, t)| s != t && s == &s.to_lowercase()));
    let mut unique = pairs.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), pairs.len(), "duplicates: {body}");
    Ok(())
}

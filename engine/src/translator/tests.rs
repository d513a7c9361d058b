use super::*;
use crate::Pair;
use async_trait::async_trait;

/// An engine that tags texts with the pair id; `flaky` always fails transiently.
struct Fake {
    pairs: Vec<&'static str>,
    flaky: bool,
}

#[async_trait]
impl Engine for Fake {
    fn name(&self) -> &str {
        if self.flaky { "flaky" } else { "fake" }
    }
    fn pairs(&self) -> Vec<Pair> {
        self.pairs
            .iter()
            .filter_map(|id| {
                let (s, t) = id.split_once('-')?;
                Some(Pair {
                    id: (*id).to_owned(),
                    source: Lang::from_apertium(s)?,
                    target: Lang::from_apertium(t)?,
                })
            })
            .collect()
    }
    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        _: TagHandling,
        _: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        if self.flaky {
            return Err(EngineError::Unavailable("down".into()));
        }
        Ok(texts
            .into_iter()
            .map(|t| format!("{t}>{}", pair.id))
            .collect())
    }
}

fn translator() -> Translator {
    let flaky: Arc<dyn Engine> = Arc::new(Fake {
        pairs: vec!["eng-spa"],
        flaky: true,
    });
    let fake: Arc<dyn Engine> = Arc::new(Fake {
        pairs: vec![
            "eng-spa",
            "spa-eng",
            "spa-eng_US",
            "es-pt",
            "es-pt_BR",
            "jpn-kor",
        ],
        flaky: false,
    });
    Translator::new(vec![flaky, fake]).unwrap()
}

fn req(source: Option<&str>, target: &str, texts: &[&str]) -> TranslateRequest {
    TranslateRequest {
        source_lang: source.map(str::to_owned),
        target_lang: target.to_owned(),
        texts: texts.iter().map(|t| (*t).to_owned()).collect(),
        tag_handling: TagHandling::None,
        ..Default::default()
    }
}

#[tokio::test]
async fn routes_with_pivot_and_fallback() {
    let t = translator();
    let res = t
        .translate(req(Some("en"), "PT-BR", &["a", "b"]))
        .await
        .unwrap();
    assert_eq!(res.texts, ["a>eng-spa>es-pt_BR", "b>eng-spa>es-pt_BR"]);
    assert_eq!(res.route, ["eng-spa", "es-pt_BR"]);
    assert_eq!(res.detected_source_lang, "EN");
    assert_eq!(
        t.route("PT", "EN-US"),
        Err(EngineError::UnsupportedPair {
            source: "PT".into(),
            target: "EN-US".into(),
            reachable_from: vec!["ES".into()],
        })
    );
    assert_eq!(t.route("ES", "EN-US").unwrap(), ["spa-eng_US"]);
    assert_eq!(t.route("ES", "EN-GB").unwrap(), ["spa-eng"]);
}

#[tokio::test]
async fn errors() {
    let t = translator();
    assert_eq!(
        t.route("EN", "EN-GB"),
        Err(EngineError::SameLanguage { lang: "EN".into() })
    );
    assert_eq!(
        t.translate(req(Some("EN"), "JA", &["x"])).await,
        Err(EngineError::UnsupportedPair {
            source: "EN".into(),
            target: "JA".into(),
            reachable_from: Vec::new(),
        })
    );
    assert!(matches!(
        t.translate(req(Some("EN"), "XX", &["x"])).await,
        Err(EngineError::UnknownLanguage {
            field: "target_lang",
            ..
        })
    ));
    assert!(matches!(
        t.translate(req(Some("QQ"), "ES", &["x"])).await,
        Err(EngineError::UnknownLanguage {
            field: "source_lang",
            ..
        })
    ));
}

#[tokio::test]
async fn detection() {
    let t = translator();
    let res = t
        .translate(req(
            None,
            "ES",
            &["The weather is lovely today and we are going to the park."],
        ))
        .await
        .unwrap();
    assert_eq!(res.detected_source_lang, "EN");
    assert_eq!(res.route, ["eng-spa"]);
    // Already in the target language: unchanged.
    let res = t
        .translate(req(None, "EN-US", &["The weather is lovely today."]))
        .await
        .unwrap();
    assert_eq!(res.texts, ["The weather is lovely today."]);
    assert!(res.route.is_empty());
    // Nothing to detect.
    let res = t.translate(req(None, "ES", &["", "  "])).await.unwrap();
    assert_eq!(res.texts, ["", "  "]);
}

#[test]
fn translator_is_shareable() {
    fn check<T: Send + Sync + Clone + 'static>() {}
    check::<Translator>();
}

#[test]
fn languages_are_the_reachable_ones() {
    let t = translator();
    let l = t.languages();
    let src: Vec<&str> = l.source.iter().map(|x| x.code.as_str()).collect();
    let tgt: Vec<&str> = l.target.iter().map(|x| x.code.as_str()).collect();
    assert_eq!(src, ["EN", "ES", "JA"]);
    assert_eq!(tgt, ["EN-GB", "EN-US", "ES", "KO", "PT-BR", "PT-PT"]);
}

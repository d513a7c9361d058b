//! The [`Translator`]: one front over all engines, with DeepL language
//! codes, detection, routing through pivot languages and fallback between
//! engines.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::apertium::{ApertiumConfig, ApertiumEngine};
use crate::detect::Detector;
use crate::route::{Candidate, Graph, Hop};
use crate::tags::{Layout, MarkupOptions, Segmenter};
use crate::{
    Engine, EngineError, Feature, Lang, TagHandling, TranslateOptions, Vocabulary, lang, markup,
};

/// Characters of the request used to detect its language.
const DETECT_SAMPLE: usize = 4096;

/// A translation request in DeepL terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TranslateRequest {
    /// DeepL source code (`EN`, any case); `None` to detect it.
    pub source_lang: Option<String>,
    /// DeepL target code (`ES`, `EN-US`, `PT-BR`, any case).
    pub target_lang: String,
    /// The texts; each is translated on its own, order is kept.
    pub texts: Vec<String>,
    /// Whether the texts are plain or carry inline XML tags.
    pub tag_handling: TagHandling,
    /// Formality, context, custom instructions, model type.
    pub options: TranslateOptions,
    /// Structure of the markup (with [`TagHandling::Xml`]): splitting,
    /// non-splitting and ignored tags, HTML, outline detection.
    pub markup: MarkupOptions,
}

/// The answer to a [`TranslateRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslateResponse {
    /// One translation per input text, in order.
    pub texts: Vec<String>,
    /// DeepL code (upper case, no variant) of the source language, as given
    /// or as detected, e.g. `EN`.
    pub detected_source_lang: String,
    /// The engine pairs used, in order, e.g. `["eng-spa", "es-pt"]`; empty
    /// when nothing had to be translated.
    pub route: Vec<String>,
}

impl TranslateResponse {
    /// Whether the last step of the route ran Apertium (in process, or
    /// through APY: pair ids `apy:…`; other upstreams' ids are `engine:…`),
    /// whose output has Apertium's known artefacts.
    pub fn by_apertium(&self) -> bool {
        self.route
            .last()
            .is_some_and(|id| !id.contains(':') || id.starts_with("apy:"))
    }
}

/// A language offered by the router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageInfo {
    /// DeepL code (`EN`, `EN-US`).
    pub code: String,
    /// English name (`English (American)`).
    pub name: String,
    /// Whether the `formality` option has an effect (some configured engine
    /// into this language supports it).
    pub supports_formality: bool,
}

/// Source and target languages that are really reachable (directly or
/// through pivots), sorted by code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Languages {
    /// Languages that can be translated from (no variants, as DeepL lists them).
    pub source: Vec<LanguageInfo>,
    /// Languages that can be translated into (`EN-GB`, `EN-US`, `PT-BR`,
    /// `PT-PT` instead of bare `EN`/`PT`, as DeepL lists them).
    pub target: Vec<LanguageInfo>,
}

/// The router over all configured engines. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Translator {
    inner: Arc<Inner>,
}

struct Inner {
    engines: Vec<Arc<dyn Engine>>,
    graph: Graph,
    languages: Languages,
    /// Bases of [`Languages::source`], in the same order.
    sources: Vec<String>,
    detector: Detector,
}

impl std::fmt::Debug for Translator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Translator")
            .field(
                "engines",
                &self
                    .inner
                    .engines
                    .iter()
                    .map(|e| e.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .field("languages", &self.inner.languages)
            .finish()
    }
}

impl Translator {
    /// A router over `engines`; earlier engines are preferred when several
    /// offer the same pair, later ones are the fallback. Fails if no engine
    /// offers any pair.
    pub fn new(engines: Vec<Arc<dyn Engine>>) -> Result<Self, EngineError> {
        let graph = Graph::new(engines.iter().enumerate().map(|(i, e)| (i, e.pairs())));
        let deepl: Vec<String> = graph
            .languages()
            .into_iter()
            .filter(|b| Lang::new(b.as_str()).deepl_base().is_some())
            .collect();
        if deepl.is_empty() {
            return Err(EngineError::Failed(
                "no engine offers a language pair with DeepL language codes".into(),
            ));
        }
        let reachable = |s: &String, t: &String| s != t && graph.path(s, t).is_some();
        let sources: Vec<String> = deepl
            .iter()
            .filter(|s| deepl.iter().any(|t| reachable(s, t)))
            .cloned()
            .collect();
        let targets: Vec<&String> = deepl
            .iter()
            .filter(|t| deepl.iter().any(|s| reachable(s, t)))
            .collect();

        let mut languages = Languages::default();
        for s in &sources {
            let l = Lang::new(s.as_str());
            if let (Some(code), Some(name)) = (l.deepl_base(), l.name()) {
                languages.source.push(LanguageInfo {
                    code: code.to_owned(),
                    name: name.to_owned(),
                    supports_formality: false,
                });
            }
        }
        for t in targets {
            let formality = engines.iter().any(|e| {
                e.pairs()
                    .iter()
                    .any(|p| p.target.base == *t && e.supports(p, Feature::Formality))
            });
            for (code, name) in lang::target_codes(&Lang::new(t.as_str())) {
                languages.target.push(LanguageInfo {
                    code,
                    name,
                    supports_formality: formality,
                });
            }
        }
        languages.source.sort_by(|a, b| a.code.cmp(&b.code));
        languages.target.sort_by(|a, b| a.code.cmp(&b.code));
        let detector = Detector::new(&sources);
        Ok(Self {
            inner: Arc::new(Inner {
                engines,
                graph,
                languages,
                sources,
                detector,
            }),
        })
    }

    /// A router over the Apertium pairs found in `config.modes_dir`.
    pub fn apertium(config: ApertiumConfig) -> Result<Self, EngineError> {
        let engine = ApertiumEngine::new(config)?;
        Self::new(vec![Arc::new(engine)])
    }

    /// The engines, in preference order.
    pub fn engines(&self) -> &[Arc<dyn Engine>] {
        &self.inner.engines
    }

    /// Reachable source and target languages.
    pub fn languages(&self) -> Languages {
        self.inner.languages.clone()
    }

    /// The pairs a translation from `source` to `target` (DeepL codes) would
    /// use, without translating.
    pub fn route(&self, source: &str, target: &str) -> Result<Vec<String>, EngineError> {
        let source = lang::parse_source(source)?;
        let target = lang::parse_target(target)?;
        let hops = self.hops(&source, &target)?;
        Ok(hops
            .iter()
            .filter_map(|h| h.first().map(|c| c.pair.id.clone()))
            .collect())
    }

    /// DeepL codes of the listed sources that reach the base language
    /// `target` (directly or through pivots), sorted.
    fn sources_reaching(&self, target: &str) -> Vec<String> {
        let mut codes: Vec<String> = self
            .inner
            .sources
            .iter()
            .filter(|s| *s != target && self.inner.graph.path(s, target).is_some())
            .map(|s| deepl_base(&Lang::new(s.as_str())))
            .collect();
        codes.sort();
        codes
    }

    /// The listed target languages (`EN-GB`, `PT-BR`, …) that texts in the
    /// source language `source` (a DeepL code) reach, directly or through
    /// pivots; its own variants are not listed.
    pub fn targets_from(&self, source: &str) -> Result<Vec<LanguageInfo>, EngineError> {
        let source = lang::parse_source(source)?;
        Ok(self
            .inner
            .languages
            .target
            .iter()
            .filter(|t| {
                lang::parse_target(&t.code).is_ok_and(|t| {
                    t.base != source.base && self.inner.graph.path(&source.base, &t.base).is_some()
                })
            })
            .cloned()
            .collect())
    }

    /// Whether texts in the source language `code` (a DeepL code) can be
    /// recognised by [`Translator::detect`].
    pub fn detectable(&self, code: &str) -> bool {
        lang::parse_source(code).is_ok_and(|l| self.inner.detector.covers(&l.base))
    }

    /// DeepL code of the language of `text` (inline tags are ignored), among
    /// the reachable source languages.
    pub fn detect(&self, text: &str) -> Option<String> {
        let sample: String = text.chars().take(DETECT_SAMPLE).collect();
        let sample = if sample.contains('<') || sample.contains('&') {
            markup::plain_text(&sample)
        } else {
            sample
        };
        let base = self.inner.detector.detect(&sample)?;
        Lang::new(base).deepl_base().map(str::to_owned)
    }

    /// The language of each text of one request translated into `target`
    /// (a DeepL code), told text by text (`detect.rs`): a DeepL base code and
    /// a confidence, `None` for a text without letters. Short texts are
    /// weighed with the engines' dictionaries of their likely languages.
    pub async fn detect_each(
        &self,
        texts: &[String],
        tags: TagHandling,
        target: &str,
    ) -> Result<Vec<Option<(String, f64)>>, EngineError> {
        let target = lang::parse_target(target).map_or_else(|_| String::new(), |l| l.base);
        let samples: Vec<String> = texts
            .iter()
            .map(|t| {
                let sample: String = t.chars().take(DETECT_SAMPLE).collect();
                match tags {
                    TagHandling::Xml => markup::plain_text(&sample),
                    TagHandling::None => sample,
                }
            })
            .collect();
        let inner = self.inner.clone();
        let observed = {
            let samples = samples.clone();
            tokio::task::spawn_blocking(move || inner.detector.observe(&samples))
                .await
                .map_err(|e| EngineError::Failed(format!("language detection failed: {e}")))?
        };
        // Dictionaries of the short texts' likely languages, English and the
        // target; then, for a text none of those knows whole, every other
        // candidate's (lingua's ranking can miss the language of one word).
        let unsure: Vec<usize> = (0..observed.len())
            .filter(|&i| observed[i].is_unsure())
            .collect();
        let mut known: HashMap<(usize, String), Vocabulary> = HashMap::new();
        let first: Vec<(usize, Vec<String>)> = unsure
            .iter()
            .map(|&i| {
                let mut bases = vec!["eng".to_owned(), target.clone()];
                bases.extend(observed[i].leading().map(str::to_owned));
                (i, bases)
            })
            .collect();
        self.look_up(&samples, &first, &mut known).await;
        let second: Vec<(usize, Vec<String>)> = unsure
            .iter()
            .filter(|&&i| {
                !known
                    .iter()
                    .any(|((j, _), v)| *j == i && v.share_known() >= 1.0)
            })
            .map(|&i| {
                let bases = observed[i]
                    .confidences
                    .iter()
                    .map(|(c, _)| c.clone())
                    .filter(|c| !known.contains_key(&(i, c.clone())))
                    .collect();
                (i, bases)
            })
            .collect();
        self.look_up(&samples, &second, &mut known).await;
        let graph = &self.inner.graph;
        let serves = |base: &str| base == target || graph.path(base, &target).is_some();
        let guesses = self.inner.detector.decide(
            &observed,
            |i, base| known.get(&(i, base.to_owned())).cloned(),
            &target,
            serves,
        );
        Ok(guesses
            .into_iter()
            .map(|g| {
                g.and_then(|g| {
                    Lang::new(g.base)
                        .deepl_base()
                        .map(|code| (code.to_owned(), g.confidence))
                })
            })
            .collect())
    }

    /// Asks the engines' dictionaries of each text's `bases` which share of
    /// its words they know (one look-up per language, all its texts at once).
    async fn look_up(
        &self,
        samples: &[String],
        wanted: &[(usize, Vec<String>)],
        known: &mut HashMap<(usize, String), Vocabulary>,
    ) {
        let mut by_base: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, bases) in wanted {
            for b in bases {
                let texts = by_base.entry(b.as_str()).or_default();
                if !texts.contains(i) {
                    texts.push(*i);
                }
            }
        }
        let lookups = by_base.into_iter().map(|(base, texts)| async move {
            let sample: Vec<String> = texts.iter().map(|&i| samples[i].clone()).collect();
            let shares = self.vocabularies(base, &sample).await?;
            Some((base, texts, shares))
        });
        for (base, texts, shares) in futures::future::join_all(lookups)
            .await
            .into_iter()
            .flatten()
        {
            for (i, vocabulary) in texts.into_iter().zip(shares) {
                known.insert((i, base.to_owned()), vocabulary);
            }
        }
    }

    /// Process ids of the engines' local processes (diagnostics).
    pub fn process_ids(&self) -> Vec<u32> {
        self.inner
            .engines
            .iter()
            .flat_map(|e| e.process_ids())
            .collect()
    }

    fn hops(&self, source: &Lang, target: &Lang) -> Result<Vec<Hop>, EngineError> {
        if source.base == target.base {
            return Err(EngineError::SameLanguage {
                lang: deepl_base(source),
            });
        }
        self.inner
            .graph
            .route(source, target)
            .ok_or_else(|| EngineError::UnsupportedPair {
                source: deepl_base(source),
                target: target.deepl_code().unwrap_or_else(|| target.to_string()),
                reachable_from: self.sources_reaching(&target.base),
            })
    }

    /// Translates the request's texts.
    ///
    /// Without `source_lang`, the language is detected on the texts
    /// ([`EngineError::DetectionFailed`] if that fails); if the texts turn out
    /// to be in the target language already, they are returned unchanged.
    /// An explicit `source_lang` whose variant the target is (`EN` →
    /// `EN-US`) returns the texts unchanged too; one equal to a target without
    /// variant is [`EngineError::SameLanguage`].
    pub async fn translate(&self, req: TranslateRequest) -> Result<TranslateResponse, EngineError> {
        if req.tag_handling != TagHandling::Xml {
            return self.translate_texts(req).await;
        }
        // Markup: cut every text into segments at the tags that split
        // sentences, translate the segments, put the texts together again.
        let markup_options = req.markup.clone();
        let mut segmenter = Segmenter::new(&markup_options);
        if let Some(source) = req.source_lang.as_deref() {
            segmenter = segmenter.keep_other_languages(source);
        }
        let layouts = req
            .texts
            .iter()
            .map(|t| segmenter.add(t))
            .collect::<Result<Vec<Layout>, _>>()?;
        let segments = segmenter.segments;
        let res = self
            .translate_texts(TranslateRequest {
                texts: segments,
                ..req
            })
            .await?;
        let texts = layouts
            .iter()
            .map(|l| {
                l.join(&res.texts)
                    .ok_or_else(|| EngineError::Failed("a translated segment is missing".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TranslateResponse { texts, ..res })
    }

    /// Translates texts that need no segmenting.
    async fn translate_texts(
        &self,
        req: TranslateRequest,
    ) -> Result<TranslateResponse, EngineError> {
        let target = lang::parse_target(&req.target_lang)?;
        let (source, detected) = match req.source_lang.as_deref().map(str::trim) {
            Some(code) if !code.is_empty() => (lang::parse_source(code)?, false),
            _ => match self.detect_request(&req).await? {
                Some(base) => (Lang::new(base), true),
                None => {
                    // Nothing with letters to translate.
                    return Ok(TranslateResponse {
                        texts: req.texts,
                        detected_source_lang: self.default_source(),
                        route: Vec::new(),
                    });
                }
            },
        };
        let detected_source_lang = deepl_base(&source);
        // Already in the target language (detected, or a variant of the
        // given source such as EN → EN-US): returned unchanged, as DeepL does.
        if source.base == target.base && (detected || target.variant.is_some()) {
            return Ok(TranslateResponse {
                texts: req.texts,
                detected_source_lang,
                route: Vec::new(),
            });
        }
        let hops = self.hops(&source, &target)?;
        let mut texts = req.texts;
        let mut route = Vec::with_capacity(hops.len());
        if texts.is_empty() {
            return Ok(TranslateResponse {
                texts,
                detected_source_lang,
                route,
            });
        }
        // The source words no dictionary of the source language knows, to be
        // marked in the translation.
        let unknown = if req.options.mark_unknown {
            self.unknown_words(&source.base, &texts, req.tag_handling)
                .await
        } else {
            None
        };
        let last = hops.len().saturating_sub(1);
        for (h, hop) in hops.into_iter().enumerate() {
            let options = hop_options(&req.options, h == 0, h == last);
            let needs: Vec<Feature> = [
                options.formality.is_strict().then_some(Feature::Formality),
                (!options.custom_instructions.is_empty()).then_some(Feature::CustomInstructions),
            ]
            .into_iter()
            .flatten()
            .collect();
            let candidates: Vec<_> = hop
                .iter()
                .filter(|c| {
                    let engine = &self.inner.engines[c.engine];
                    needs.iter().all(|f| engine.supports(&c.pair, *f))
                })
                .collect();
            if candidates.is_empty() {
                let code = target.deepl_code().unwrap_or_else(|| target.to_string());
                return Err(EngineError::Unsupported(match needs.first() {
                    Some(Feature::Formality) => format!(
                        "Target language {code} does not support formality with the configured engines."
                    ),
                    _ => format!(
                        "Parameter 'custom_instructions' is not supported for target_lang {code} by the configured engines."
                    ),
                }));
            }
            let (out, pair) = self
                .run_hop(&candidates, texts, req.tag_handling, &options)
                .await?;
            texts = out;
            route.push(pair);
        }
        if let Some(unknown) = unknown {
            let xml = req.tag_handling == TagHandling::Xml;
            texts = texts
                .iter()
                .zip(&unknown)
                .map(|(t, u)| markup::mark_words(t, &u.unknown, xml))
                .collect();
        }
        Ok(TranslateResponse {
            texts,
            detected_source_lang,
            route,
        })
    }

    /// One step of a route: the first candidate that answers translates the
    /// texts (an engine that is unavailable passes them to the next); the
    /// translations and the pair that made them.
    async fn run_hop(
        &self,
        candidates: &[&Candidate],
        mut texts: Vec<String>,
        tags: TagHandling,
        options: &TranslateOptions,
    ) -> Result<(Vec<String>, String), EngineError> {
        let expected = texts.len();
        let mut last_error = EngineError::Failed("no engine for a step of the route".into());
        for (k, candidate) in candidates.iter().enumerate() {
            let engine = &self.inner.engines[candidate.engine];
            let input = if k + 1 < candidates.len() {
                texts.clone()
            } else {
                std::mem::take(&mut texts)
            };
            match engine
                .translate(&candidate.pair, input, tags, options)
                .await
            {
                Ok(out) if out.len() == expected => return Ok((out, candidate.pair.id.clone())),
                Ok(out) => {
                    return Err(EngineError::Failed(format!(
                        "{} returned {} texts for {expected} on {}",
                        engine.name(),
                        out.len(),
                        candidate.pair.id
                    )));
                }
                Err(e) if e.is_transient() => {
                    tracing::warn!(engine = engine.name(), pair = candidate.pair.id, error = %e, "engine unavailable; trying the next one");
                    last_error = e;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_error)
    }

    /// What the first engine with a dictionary of `base` knows of each
    /// text's words (its character data with markup); `None` when no engine
    /// has one.
    async fn unknown_words(
        &self,
        base: &str,
        texts: &[String],
        tags: TagHandling,
    ) -> Option<Vec<Vocabulary>> {
        let samples: Vec<String> = texts
            .iter()
            .map(|t| match tags {
                TagHandling::Xml => markup::plain_text(t),
                TagHandling::None => t.clone(),
            })
            .collect();
        self.vocabularies(base, &samples).await
    }

    /// What the first engine with a dictionary of `base` (in preference
    /// order) knows of each of `texts`; `None` when no engine has one.
    async fn vocabularies(&self, base: &str, texts: &[String]) -> Option<Vec<Vocabulary>> {
        for engine in &self.inner.engines {
            if let Some(known) = engine.known_words(base, texts).await {
                return Some(known);
            }
        }
        None
    }

    /// Detects the source base of a request; `Ok(None)` if there is nothing
    /// to detect (no letters).
    async fn detect_request(&self, req: &TranslateRequest) -> Result<Option<String>, EngineError> {
        let mut sample = String::new();
        for t in &req.texts {
            if sample.len() >= DETECT_SAMPLE {
                break;
            }
            match req.tag_handling {
                TagHandling::Xml => sample.push_str(&markup::plain_text(t)),
                TagHandling::None => sample.push_str(t),
            }
            sample.push('\n');
        }
        if !sample.chars().any(char::is_alphabetic) {
            return Ok(None);
        }
        let inner = self.inner.clone();
        let base = tokio::task::spawn_blocking(move || inner.detector.detect(&sample))
            .await
            .map_err(|e| EngineError::Failed(format!("language detection failed: {e}")))?;
        base.map(Some).ok_or(EngineError::DetectionFailed)
    }

    /// Reported source language when there was nothing to detect: English,
    /// when it is a source, else the first source (a DeepL code).
    pub fn default_source(&self) -> String {
        let base = self
            .inner
            .sources
            .iter()
            .find(|b| *b == "eng")
            .or(self.inner.sources.first());
        base.map(|b| deepl_base(&Lang::new(b.as_str())))
            .unwrap_or_default()
    }
}

fn deepl_base(l: &Lang) -> String {
    l.deepl_base()
        .map_or_else(|| l.base.to_uppercase(), str::to_owned)
}

/// The options of one step of a route: context is in the source language
/// (first step only); formality and instructions concern the output (last
/// step only).
fn hop_options(all: &TranslateOptions, first: bool, last: bool) -> TranslateOptions {
    TranslateOptions {
        formality: if last {
            all.formality
        } else {
            Default::default()
        },
        context: if first { all.context.clone() } else { None },
        custom_instructions: if last {
            all.custom_instructions.clone()
        } else {
            Vec::new()
        },
        model_type: all.model_type.clone(),
        style_instructions: if last {
            all.style_instructions.clone()
        } else {
            Vec::new()
        },
        mark_unknown: false,
    }
}

#[cfg(test)]
mod tests;

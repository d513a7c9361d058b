//! [`Pipeline::translate`]: segments, options and customisations in,
//! translations out (see the crate documentation for the steps).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{StreamExt, TryStreamExt};
use tolk_engine::glossary::{self, Terms};
use tolk_engine::{MarkupOptions, TagHandling, TranslateOptions, TranslateRequest};
use tolk_formats::inline;
use tolk_storage::StorageError;
use tolk_style::language;

use crate::chunks::{self, CHUNKS_IN_FLIGHT};
use crate::repair::repair;
use crate::{Customizations, Pipeline, PipelineError, hyphens, lines, protect};

/// One translation.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// DeepL source code; `None` to detect it, text by text (each group of
    /// texts in one language then goes through the pipeline on its own).
    pub source_lang: Option<String>,
    /// DeepL target code.
    pub target_lang: String,
    /// The texts, translated each on its own, order kept.
    pub texts: Vec<String>,
    /// `Some` when the texts carry XML or HTML markup (with its options);
    /// `None` for plain text.
    pub markup: Option<MarkupOptions>,
    /// Cut texts into lines, so that a line break ends a sentence.
    pub split_lines: bool,
    /// Formality, context, custom instructions, model type (the style list's
    /// instructions are added from the customisations).
    pub options: TranslateOptions,
    /// Glossary terms, style rules, translation memory.
    pub custom: &'a Customizations,
    /// Placeholders (`{name}`, `%s`) pass through the engines verbatim
    /// (false: translated with the text, a JSON upload's
    /// `json-placeholders:translate`). URLs, addresses and paths always do.
    pub protect_placeholders: bool,
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// One translation per text, in order.
    pub texts: Vec<String>,
    /// DeepL code (upper case, no variant) of the source language, as given or
    /// as detected (detected per text: the language of most texts).
    pub detected_source_lang: String,
    /// The source language of each text, in order (all the same when given).
    pub detected_source_langs: Vec<String>,
}

/// Told how far a translation has come (e.g. a document's progress column).
pub trait Progress: Sync {
    /// `done` of `total` segments sent to the engines are translated.
    fn advance(
        &self,
        done: usize,
        total: usize,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;
}

/// Progress nobody follows.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    async fn advance(&self, _done: usize, _total: usize) -> Result<(), StorageError> {
        Ok(())
    }
}

/// Whether `text` (XML when `markup`) holds a span to protect.
fn has_protected(text: &str, markup: bool, placeholders: bool) -> bool {
    if markup {
        protect::any(text, placeholders)
    } else {
        protect::any(
            &glossary::protect(text, &Terms::default(), false),
            placeholders,
        )
    }
}

/// What the engines returned for the segments sent to them.
struct EngineOutput {
    texts: Vec<String>,
    detected_source_lang: Option<String>,
}

impl Pipeline<'_> {
    /// Translates plain `texts` from `source_lang` to `target_lang` with no
    /// customisation (back-translations, transcripts).
    pub async fn translate_plain(
        &self,
        source_lang: &str,
        target_lang: &str,
        texts: Vec<String>,
    ) -> Result<Translated, PipelineError> {
        let none = Customizations::default();
        let req = Request {
            source_lang: Some(source_lang.to_owned()),
            target_lang: target_lang.to_owned(),
            texts,
            markup: None,
            protect_placeholders: true,
            split_lines: false,
            options: TranslateOptions::default(),
            custom: &none,
        };
        self.translate(req, &NoProgress).await
    }

    /// Translates `req`'s texts through the whole pipeline.
    pub async fn translate(
        &self,
        req: Request<'_>,
        progress: &impl Progress,
    ) -> Result<Translated, PipelineError> {
        let mut req = req;
        if req.source_lang.is_some() || req.texts.is_empty() {
            return self.translate_from(req, progress).await;
        }
        // Detection text by text: each language's texts translated on their own.
        let tags = if req.markup.is_some() {
            TagHandling::Xml
        } else {
            TagHandling::None
        };
        let guesses = self
            .translator
            .detect_each(&req.texts, tags, &req.target_lang)
            .await?;
        let target_base = tolk_lang::deepl_base(&req.target_lang);
        let mut langs: Vec<String> = Vec::with_capacity(guesses.len());
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, guess) in guesses.into_iter().enumerate() {
            match guess {
                // Already in the target language (the detector is sure of
                // it): unchanged, as DeepL does.
                Some((code, _)) if code == target_base => langs.push(code),
                Some((code, _)) => {
                    groups.entry(code.clone()).or_default().push(i);
                    langs.push(code);
                }
                // No letters: nothing to translate.
                None => langs.push(String::new()),
            }
        }
        let mut texts = std::mem::take(&mut req.texts);
        for (code, indices) in &groups {
            let group = Request {
                source_lang: Some(code.clone()),
                target_lang: req.target_lang.clone(),
                texts: indices.iter().map(|&i| texts[i].clone()).collect(),
                markup: req.markup.clone(),
                split_lines: req.split_lines,
                options: req.options.clone(),
                custom: req.custom,
                protect_placeholders: req.protect_placeholders,
            };
            let out = self.translate_from(group, progress).await?;
            for (&i, t) in indices.iter().zip(out.texts) {
                texts[i] = t;
            }
        }
        // The language of most texts stands for the request.
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for l in langs.iter().filter(|l| !l.is_empty()) {
            *counts.entry(l.as_str()).or_default() += 1;
        }
        let main = counts.iter().max_by_key(|(_, n)| **n).map_or_else(
            || self.translator.default_source(),
            |(l, _)| (*l).to_owned(),
        );
        let detected_source_langs = langs
            .into_iter()
            .map(|l| if l.is_empty() { main.clone() } else { l })
            .collect();
        Ok(Translated {
            texts,
            detected_source_lang: main,
            detected_source_langs,
        })
    }

    /// Translates `req`'s texts from its source language (or, without texts,
    /// nothing at all).
    async fn translate_from(
        &self,
        req: Request<'_>,
        progress: &impl Progress,
    ) -> Result<Translated, PipelineError> {
        let count = req.texts.len();
        let markup = req.markup.is_some();
        let (layouts, segments) = if req.split_lines {
            let (layouts, lines) = lines::split(&req.texts);
            (Some(layouts), lines)
        } else {
            (None, req.texts.clone())
        };
        let (segments, hyphenated): (Vec<String>, Vec<Vec<String>>) =
            segments.into_iter().map(hyphens::strip).unzip();
        let hits = match &req.custom.memory {
            Some(memory) => {
                let hits = self.memory_matches(memory, &segments, markup).await?;
                tracing::debug!(
                    segments = segments.len(),
                    applied = hits.iter().filter(|h| h.is_some()).count(),
                    "translation memory matches"
                );
                hits
            }
            None => vec![None; segments.len()],
        };
        let pending: Vec<String> = segments
            .into_iter()
            .zip(&hits)
            .filter(|(_, hit)| hit.is_none())
            .map(|(s, _)| s)
            .collect();
        let mut engine = self.engines(&req, pending.clone(), progress).await?;
        if markup {
            engine.texts = self.keep_tags(&req, &pending, engine.texts).await?;
        }
        let detected_source_lang = engine
            .detected_source_lang
            .or_else(|| req.source_lang.clone())
            .or_else(|| {
                req.custom
                    .memory
                    .as_ref()
                    .and_then(|m| m.source_language.clone())
            })
            .map(|l| tolk_lang::deepl_base(&l))
            .unwrap_or_default();
        let mut from_engine = engine.texts.into_iter();
        let sent = hits.iter().filter(|h| h.is_none()).count();
        let segments = hits
            .into_iter()
            .map(|hit| match hit {
                Some(t) => Ok(t),
                None => from_engine
                    .next()
                    .ok_or(PipelineError::Mismatch { sent, got: 0 }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let segments: Vec<String> = segments
            .into_iter()
            .zip(&hyphenated)
            .map(|(t, words)| hyphens::restore(t, words))
            .collect();
        let texts = match layouts {
            Some(layouts) => lines::join(layouts, &segments).ok_or(PipelineError::Mismatch {
                sent: count,
                got: segments.len(),
            })?,
            None => segments,
        };
        // The style list's deterministic rules, after any engine or memory.
        let texts = match &req.custom.style {
            Some(rules) => {
                let source = detected_source_lang.to_ascii_lowercase();
                texts
                    .iter()
                    .map(|t| rules.apply(t, markup, Some(&source)))
                    .collect()
            }
            None => texts,
        };
        if texts.len() != count {
            return Err(PipelineError::Mismatch {
                sent: count,
                got: texts.len(),
            });
        }
        Ok(Translated {
            detected_source_langs: vec![detected_source_lang.clone(); texts.len()],
            texts,
            detected_source_lang,
        })
    }

    /// Translates again, piece by piece, each segment whose translation did
    /// not keep its inline tags in an order the document allows (a span out
    /// of its parent, lost or doubled — see [`inline::tags_agree`]): the text
    /// between tags is translated on its own and put back between the
    /// source's tags, so a link never lands on the wrong words.
    async fn keep_tags(
        &self,
        req: &Request<'_>,
        sources: &[String],
        mut translations: Vec<String>,
    ) -> Result<Vec<String>, PipelineError> {
        let broken: Vec<usize> = sources
            .iter()
            .zip(&translations)
            .enumerate()
            .filter(|(_, (source, translation))| !inline::tags_agree(source, translation))
            .map(|(i, _)| i)
            .collect();
        if broken.is_empty() {
            return Ok(translations);
        }
        tracing::info!(
            segments = broken.len(),
            "inline tags came back out of place: translating those segments piece by piece"
        );
        let mut pieces = Vec::new();
        for &i in &broken {
            inline::map_text(&sources[i], |text| {
                if text.chars().any(char::is_alphanumeric) {
                    pieces.push(inline::escape(text.trim()));
                }
                String::new()
            });
        }
        let translated = self.engines(req, pieces, &NoProgress).await?;
        let mut translated = translated.texts.into_iter();
        for &i in &broken {
            translations[i] = inline::map_text(&sources[i], |text| {
                if !text.chars().any(char::is_alphanumeric) {
                    return text.to_owned();
                }
                let core = translated
                    .next()
                    .map_or_else(|| text.trim().to_owned(), |t| inline::plain_text(&t));
                let lead = &text[..text.len() - text.trim_start().len()];
                let trail = &text[text.trim_end().len()..];
                format!("{lead}{core}{trail}")
            });
        }
        Ok(translations)
    }

    /// Sends `texts` to the engines in chunks, a few in flight, glossary terms
    /// protected before and released after.
    async fn engines(
        &self,
        req: &Request<'_>,
        texts: Vec<String>,
        progress: &impl Progress,
    ) -> Result<EngineOutput, PipelineError> {
        let total = texts.len();
        if total == 0 {
            return Ok(EngineOutput {
                texts,
                detected_source_lang: None,
            });
        }
        let terms: &Terms = &req.custom.terms;
        let markup_in = req.markup.is_some();
        // Glossary terms and protected spans travel through the engines as
        // ignored elements: plain text is sent as XML for that.
        let wrapped = !terms.is_empty()
            || texts
                .iter()
                .any(|t| has_protected(t, markup_in, req.protect_placeholders));
        let mut markup = req.markup.clone().unwrap_or_default();
        if wrapped {
            markup.ignore_tags.push(glossary::TERM_TAG.to_owned());
        }
        let tag_handling = if markup_in || wrapped {
            TagHandling::Xml
        } else {
            TagHandling::None
        };
        let source_base = req.source_lang.as_deref().map(language::base);
        let mut options = req.options.clone();
        if let Some(style) = &req.custom.style {
            options.style_instructions = style.instructions(source_base.as_deref());
        }
        let chunks = if req.source_lang.is_some() {
            chunks::chunk(texts)
        } else {
            vec![texts]
        };
        let target = req.target_lang.as_str();
        let done = AtomicUsize::new(0);
        let results: Vec<(Vec<String>, String)> = futures::stream::iter(chunks)
            .map(|sources| {
                let n = sources.len();
                let texts = if wrapped {
                    sources
                        .iter()
                        .map(|t| {
                            protect::spans(
                                &glossary::protect(t, terms, markup_in),
                                req.protect_placeholders,
                            )
                        })
                        .collect()
                } else {
                    sources.clone()
                };
                // The texts as sent, for the whitespace around their spans
                // and placeholder tags.
                let sent: Vec<String> = if wrapped || markup_in {
                    texts.clone()
                } else {
                    Vec::new()
                };
                let request = TranslateRequest {
                    source_lang: req.source_lang.clone(),
                    target_lang: req.target_lang.clone(),
                    texts,
                    tag_handling,
                    options: options.clone(),
                    markup: markup.clone(),
                };
                let done = &done;
                async move {
                    let res = self.translator.translate(request).await?;
                    if res.texts.len() != n {
                        return Err(PipelineError::Mismatch {
                            sent: n,
                            got: res.texts.len(),
                        });
                    }
                    let finished = done.fetch_add(n, Ordering::Relaxed) + n;
                    progress.advance(finished, total).await?;
                    // Apertium's artefacts repaired while terms and
                    // protected spans are still wrapped, then released.
                    let how = Returned {
                        apertium: res.by_apertium(),
                        markup_in,
                        wrapped,
                        target,
                    };
                    let texts = sources
                        .iter()
                        .zip(res.texts)
                        .enumerate()
                        .map(|(i, (source, t))| how.settle(source, sent.get(i), t))
                        .collect();
                    Ok((texts, res.detected_source_lang))
                }
            })
            .buffered(CHUNKS_IN_FLIGHT)
            .try_collect()
            .await?;
        let detected_source_lang = results.first().map(|(_, d)| d.clone());
        Ok(EngineOutput {
            texts: results.into_iter().flat_map(|(t, _)| t).collect(),
            detected_source_lang,
        })
    }
}

/// How the engines' translations of a chunk came back.
struct Returned<'a> {
    /// Made by Apertium (whose artefacts are repaired).
    apertium: bool,
    /// The texts are markup.
    markup_in: bool,
    /// Terms and protected spans were wrapped as ignored elements.
    wrapped: bool,
    /// The target language.
    target: &'a str,
}

impl Returned<'_> {
    /// One translation made final: Apertium's artefacts repaired while terms
    /// and protected spans are still wrapped, the whitespace around them as
    /// the text `sent` had it, then the spans released.
    fn settle(&self, source: &str, sent: Option<&String>, t: String) -> String {
        let (markup_in, wrapped) = (self.markup_in, self.wrapped);
        let t = if self.apertium {
            repair(source, markup_in, t, markup_in || wrapped, self.target)
        } else {
            t
        };
        let t = match sent {
            Some(protected) => glossary::respace(protected, &t),
            None => t,
        };
        if wrapped {
            glossary::release(&t, markup_in)
        } else {
            t
        }
    }
}

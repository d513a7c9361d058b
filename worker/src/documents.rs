//! Handler of `translate-document` jobs: source object → formats::extract →
//! engine → formats::merge → result object, then one transaction marks the
//! document done and appends the usage entry.

use apalis::prelude::*;
use futures::{StreamExt, TryStreamExt};
use tolk_engine::glossary::{self, Terms};
use tolk_engine::{MarkupOptions, TagHandling, TranslateOptions, TranslateRequest};
use tolk_formats::{DocumentFormat, inline};
use tolk_storage::StorageError;
use tolk_storage::documents::{self, Document};
use tolk_storage::quality;
use tolk_storage::queue::{self, EvaluateQuality, TranslateDocument};
use tolk_storage::translation_memories as memories;
use tolk_storage::usage::{self, UsageEvent};
use tolk_storage::{glossaries, style_rules};
use tolk_style::StyleRules;

use crate::WorkerState;
use crate::job::{self, JobError, Tracked};

/// Segments per engine call: large enough to batch, small enough to report progress.
const CHUNK_SEGMENTS: usize = 200;
/// Characters per engine call at most.
const CHUNK_CHARS: usize = 40_000;
/// Chunks of one document in flight at once.
const CHUNKS_IN_FLIGHT: usize = 2;
/// Characters sampled for language detection.
const DETECT_SAMPLE_CHARS: usize = 4_000;

/// The job handler registered with apalis.
pub async fn translate_document(
    job: TranslateDocument,
    state: Data<WorkerState>,
    task_id: TaskId,
    attempt: Attempt,
) -> Result<(), BoxDynError> {
    let span = tracing::info_span!(
        "translate_document",
        document_id = %job.document_id,
        trace_id = %job.trace_id,
        job_id = %task_id,
        attempt = attempt.current()
    );
    job::execute(&job, &state, &task_id, &attempt, span, run(&job, &state)).await
}

impl Tracked for TranslateDocument {
    const MAX_ATTEMPTS: i32 = queue::TRANSLATE_DOCUMENT_MAX_ATTEMPTS;
    const NOUN: &'static str = "document";

    fn queue(&self) -> &'static str {
        queue::TRANSLATE_DOCUMENT
    }

    async fn attempts(&self, state: &WorkerState) -> Result<i32, StorageError> {
        Ok(documents::get(&state.db, &self.document_id)
            .await?
            .map_or(0, |d| d.attempts))
    }

    async fn fail(&self, state: &WorkerState, message: &str) -> Result<(), StorageError> {
        documents::fail(&state.db, &self.document_id, message).await?;
        fail_evaluation(state, &self.document_id).await;
        Ok(())
    }

    async fn retry(&self, state: &WorkerState, reason: &str) -> Result<(), StorageError> {
        documents::requeue(&state.db, &self.document_id, reason).await
    }

    fn exhausted(runs: i32, message: &str) -> String {
        format!("The document could not be translated after {runs} attempts: {message}")
    }
}

/// A document that failed has nothing to evaluate: its evaluation ends in error.
async fn fail_evaluation(state: &WorkerState, document_id: &str) {
    match quality::for_document(&state.db, document_id).await {
        Ok(Some(eid)) => {
            if let Err(e) = quality::fail(
                &state.db,
                eid,
                "The document could not be translated, so there is no translation to evaluate.",
            )
            .await
            {
                tracing::warn!(error = %e, "could not fail the document's evaluation");
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "could not look up the document's evaluation"),
    }
}

async fn run(job: &TranslateDocument, state: &WorkerState) -> Result<(), JobError> {
    if !documents::start(&state.db, &job.document_id).await? {
        tracing::info!("document already finished; nothing to do");
        return Ok(());
    }
    let doc = documents::get(&state.db, &job.document_id)
        .await?
        .ok_or_else(|| JobError::Permanent("The document no longer exists.".to_owned()))?;
    let format = DocumentFormat::from_extension(&doc.input_format)
        .ok_or_else(|| JobError::Permanent(format!("Unsupported format {}", doc.input_format)))?;
    let source = state.objects.get(&doc.source_object).await?;

    let extracted = tokio::task::spawn_blocking(move || tolk_formats::extract(format, &source))
        .await
        .map_err(|e| JobError::Transient(format!("extraction task failed: {e}")))??;
    let segments = extracted.segments().to_vec();
    let billed: i64 = segments
        .iter()
        .map(|s| inline::plain_text(s).chars().count() as i64)
        .sum();

    let source_lang = source_language(state, &doc, &segments).await?;
    let custom = Customizations {
        terms: glossary_terms(state, &doc, &source_lang).await?,
        style: style(state, &doc).await?,
    };
    let sources = segments.clone();
    let translated = translate_with_memory(state, &doc, &source_lang, segments, &custom).await?;

    let evaluation = match quality::for_document(&state.db, &doc.id).await? {
        Some(eid) => Some(write_evaluation_input(state, eid, &sources, &translated).await?),
        None => None,
    };
    let output = tokio::task::spawn_blocking(move || extracted.merge(&translated))
        .await
        .map_err(|e| JobError::Transient(format!("merge task failed: {e}")))??;
    let result_object = format!("results/{}/translated.{}", doc.id, doc.output_format);
    state.objects.put(&result_object, output.into()).await?;

    let mut tx = state.db.begin().await.map_err(StorageError::from)?;
    if documents::complete(&mut tx, &doc.id, &result_object, billed).await? {
        usage::record(
            &mut tx,
            &UsageEvent {
                organization_id: doc.organization_id,
                api_key_id: &doc.api_key_id,
                kind: usage::kind::DOCUMENT_TRANSLATION,
                amount: billed,
                custom_tag: None,
                document_id: Some(&doc.id),
            },
        )
        .await?;
        if let Some(eid) = evaluation {
            // The report is a job of its own: its findings never touch the document.
            let job_id = queue::new_job_id();
            queue::enqueue(
                &mut tx,
                queue::EVALUATE_QUALITY,
                &job_id,
                &EvaluateQuality {
                    evaluation_id: eid,
                    trace_id: doc.trace_id.clone(),
                },
                queue::EVALUATE_QUALITY_MAX_ATTEMPTS,
                &format!("quality:{eid}"),
            )
            .await?;
            quality::set_job(&mut tx, eid, &job_id, &source_lang).await?;
        }
    }
    tx.commit().await.map_err(StorageError::from)?;
    if evaluation.is_some()
        && let Err(e) = queue::notify_enqueued(&state.db, queue::EVALUATE_QUALITY).await
    {
        tracing::warn!(error = %e, "could not notify workers of the evaluation job");
    }
    Ok(())
}

/// Writes the segment pairs of a document evaluation to the object store.
async fn write_evaluation_input(
    state: &WorkerState,
    eid: uuid::Uuid,
    sources: &[String],
    translated: &[String],
) -> Result<uuid::Uuid, JobError> {
    let input = crate::quality::EvaluationInput {
        segments: sources
            .iter()
            .zip(translated)
            .map(|(s, t)| crate::quality::Pair {
                source: s.clone(),
                target: t.clone(),
            })
            .collect(),
        ..Default::default()
    };
    let bytes = serde_json::to_vec(&input)
        .map_err(|e| JobError::Permanent(format!("evaluation input: {e}")))?;
    state
        .objects
        .put(&crate::quality::segments_object(eid), bytes.into())
        .await?;
    Ok(eid)
}

/// The given source language, or the detected one; refuses source == target.
async fn source_language(
    state: &WorkerState,
    doc: &Document,
    segments: &[String],
) -> Result<String, JobError> {
    let lang = match &doc.source_lang {
        Some(l) => l.clone(),
        None => {
            let mut sample = String::new();
            for s in segments {
                if sample.len() >= DETECT_SAMPLE_CHARS {
                    break;
                }
                sample.push_str(&inline::plain_text(s));
                sample.push('\n');
            }
            let lang = state.translator.detect(&sample).ok_or_else(|| {
                JobError::Permanent(
                    "The source language of the document could not be detected; set source_lang."
                        .to_owned(),
                )
            })?;
            documents::set_detected_source(&state.db, &doc.id, &lang).await?;
            lang
        }
    };
    if base(&lang) == base(&doc.target_lang) {
        return Err(JobError::Permanent(format!(
            "Source and target language are the same ({}); choose a different target_lang.",
            base(&lang)
        )));
    }
    Ok(lang)
}

fn base(code: &str) -> String {
    code.split('-').next().unwrap_or(code).to_ascii_uppercase()
}

/// The glossary terms and style rules of a document.
struct Customizations {
    /// Terms of the document's glossaries for its language pair.
    terms: Terms,
    /// The style rule list, if any.
    style: Option<StyleRules>,
}

/// Lower-case DeepL base code, as glossary dictionaries store languages.
fn glossary_lang(code: &str) -> Option<String> {
    tolk_engine::lang::parse_source(code)
        .ok()
        .and_then(|l| l.deepl_base())
        .map(|b| b.to_ascii_lowercase())
}

/// Loads the entries of the document's glossaries for its pair. A glossary
/// deleted (or emptied of the pair) since the upload fails the document.
async fn glossary_terms(
    state: &WorkerState,
    doc: &Document,
    source_lang: &str,
) -> Result<Terms, JobError> {
    if doc.glossary_ids.is_empty() {
        return Ok(Terms::default());
    }
    let (Some(s), Some(t)) = (glossary_lang(source_lang), glossary_lang(&doc.target_lang)) else {
        return Err(JobError::Permanent(format!(
            "Glossaries do not support the pair {source_lang}→{}.",
            doc.target_lang
        )));
    };
    let mut pairs = Vec::new();
    for id in &doc.glossary_ids {
        let dicts = glossaries::entries(&state.db, doc.organization_id, *id, Some((&s, &t)))
            .await?
            .ok_or_else(|| JobError::Permanent(format!("The glossary {id} no longer exists.")))?;
        let d = dicts.into_iter().next().ok_or_else(|| {
            JobError::Permanent(format!(
                "The glossary {id} no longer has a dictionary for {s}→{t}."
            ))
        })?;
        pairs.extend(d.sources.into_iter().zip(d.targets));
    }
    Ok(Terms::new(pairs))
}

/// Loads the document's style rule list; one deleted since the upload fails
/// the document.
async fn style(state: &WorkerState, doc: &Document) -> Result<Option<StyleRules>, JobError> {
    let Some(id) = doc.style_id else {
        return Ok(None);
    };
    let l = style_rules::get(&state.db, doc.organization_id, id)
        .await?
        .ok_or_else(|| {
            JobError::Permanent(format!("The style rule list {id} no longer exists."))
        })?;
    Ok(Some(StyleRules::from_json(
        &l.language,
        &l.configured_rules,
        &l.custom_instructions,
    )))
}

/// Segments without inline tags whose plain text has a good enough match in
/// the document's translation memory take the memory's translation; the
/// others are translated by the engines.
async fn translate_with_memory(
    state: &WorkerState,
    doc: &Document,
    source_lang: &str,
    segments: Vec<String>,
    custom: &Customizations,
) -> Result<Vec<String>, JobError> {
    let Some(memory) = memories::for_document(&state.db, &doc.id).await? else {
        return translate_segments(state, doc, source_lang, segments, custom).await;
    };
    let mut hits: Vec<Option<String>> = Vec::with_capacity(segments.len());
    for s in &segments {
        let text = inline::plain_text(s);
        let core = text.trim();
        let hit = if s.contains('<') || core.is_empty() {
            None
        } else {
            memories::lookup(
                &state.db,
                memory.memory_id,
                &memory.target_language,
                core,
                memory.threshold,
            )
            .await?
            .map(|m| {
                let lead = &text[..text.len() - text.trim_start().len()];
                let trail = &text[text.trim_end().len()..];
                inline::escape(&format!("{lead}{}{trail}", m.target_text))
            })
        };
        hits.push(hit);
    }
    let applied = hits.iter().filter(|h| h.is_some()).count();
    tracing::info!(
        segments = segments.len(),
        applied,
        "translation memory matches"
    );
    let pending: Vec<String> = segments
        .into_iter()
        .zip(&hits)
        .filter(|(_, h)| h.is_none())
        .map(|(s, _)| s)
        .collect();
    let mut engine = translate_segments(state, doc, source_lang, pending, custom)
        .await?
        .into_iter();
    hits.into_iter()
        .map(|h| match h {
            Some(t) => Ok(t),
            None => engine.next().ok_or_else(|| {
                JobError::Transient("the engines returned fewer segments than sent".to_owned())
            }),
        })
        .collect()
}

/// Translates all segments in chunks, a few chunks in flight, recording progress.
/// Glossary terms are protected before the engine and released after it (the
/// same way as in `/v2/translate`); the style list's deterministic rules run
/// last.
async fn translate_segments(
    state: &WorkerState,
    doc: &Document,
    source_lang: &str,
    segments: Vec<String>,
    custom: &Customizations,
) -> Result<Vec<String>, JobError> {
    let total = segments.len();
    if total == 0 {
        return Ok(Vec::new());
    }
    let chunks = chunk(segments);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut markup = MarkupOptions::default();
    if !custom.terms.is_empty() {
        markup.ignore_tags.push(glossary::TERM_TAG.to_owned());
    }
    let source_base = tolk_style::language::base(source_lang);
    let options = TranslateOptions {
        style_instructions: custom
            .style
            .as_ref()
            .map(|s| s.instructions(Some(&source_base)))
            .unwrap_or_default(),
        ..Default::default()
    };
    let results: Vec<Vec<String>> = futures::stream::iter(chunks)
        .map(|texts| {
            let n = texts.len();
            let texts = if custom.terms.is_empty() {
                texts
            } else {
                texts
                    .iter()
                    .map(|t| glossary::protect(t, &custom.terms, true))
                    .collect()
            };
            let req = TranslateRequest {
                source_lang: Some(source_lang.to_owned()),
                target_lang: doc.target_lang.clone(),
                texts,
                tag_handling: TagHandling::Xml,
                options: options.clone(),
                markup: markup.clone(),
            };
            let done = &done;
            let source_base = source_base.as_str();
            async move {
                let res = state
                    .translator
                    .translate(req)
                    .await
                    .map_err(JobError::from)?;
                if res.texts.len() != n {
                    return Err(JobError::Transient(format!(
                        "the engine returned {} texts for {n}",
                        res.texts.len()
                    )));
                }
                let finished = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
                documents::set_progress(&state.db, &doc.id, finished as f32 / total as f32).await?;
                let texts = res.texts.into_iter().map(|t| {
                    let t = if custom.terms.is_empty() {
                        t
                    } else {
                        glossary::release(&t, true)
                    };
                    match &custom.style {
                        Some(style) => style.apply(&t, true, Some(source_base)),
                        None => t,
                    }
                });
                Ok(texts.collect::<Vec<_>>())
            }
        })
        .buffered(CHUNKS_IN_FLIGHT)
        .try_collect()
        .await?;
    Ok(results.into_iter().flatten().collect())
}

fn chunk(segments: Vec<String>) -> Vec<Vec<String>> {
    let mut chunks = Vec::new();
    let mut current = Vec::new();
    let mut chars = 0;
    for s in segments {
        if !current.is_empty() && (current.len() >= CHUNK_SEGMENTS || chars + s.len() > CHUNK_CHARS)
        {
            chunks.push(std::mem::take(&mut current));
            chars = 0;
        }
        chars += s.len();
        current.push(s);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_order_and_bounds() {
        let segs: Vec<String> = (0..450).map(|i| format!("segment {i}")).collect();
        let chunks = chunk(segs.clone());
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.len() <= CHUNK_SEGMENTS));
        assert_eq!(chunks.concat(), segs);
        let big = vec!["x".repeat(CHUNK_CHARS); 3];
        assert_eq!(chunk(big).len(), 3);
    }

    #[test]
    fn base_language() {
        assert_eq!(base("en-gb"), "EN");
        assert_eq!(base("PT-BR"), "PT");
    }
}

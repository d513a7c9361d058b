//! Handler of `translate-document` jobs: source object → the document's
//! filter (`tolk_formats::translate`), batch by batch through the
//! translation pipeline (`tolk_pipeline`) → result object, then one
//! transaction marks the document done and appends the usage entry.

use apalis::prelude::*;
use tolk_engine::{MarkupOptions, TranslateOptions};
use tolk_formats::{Conversion, DocumentFormat, Output, TranslateError, inline};
use tolk_pipeline::{Customizations, MemoryUse, Progress, Request};
use tolk_storage::StorageError;
use tolk_storage::documents::{self, Document};
use tolk_storage::quality;
use tolk_storage::queue::{self, EvaluateQuality, TranslateDocument};
use tolk_storage::translation_memories as memories;
use tolk_storage::usage::{self, UsageEvent};

use crate::WorkerState;
use crate::job::{self, JobError, Tracked};

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

/// The delivered document with the mark of machine translation
/// (`enable_watermark`), set on a blocking thread.
async fn watermark(output_format: Output, bytes: Vec<u8>) -> Result<Vec<u8>, JobError> {
    match tokio::task::spawn_blocking(move || tolk_formats::mark(output_format, &bytes)).await {
        Ok(Ok(marked)) => Ok(marked),
        Ok(Err(e)) => Err(e.into()),
        Err(e) => Err(JobError::Transient(format!("watermark task failed: {e}"))),
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

    let translate_json_placeholders = doc.json_placeholders.as_deref() == Some("translate");
    let mut options = tolk_formats::ExtractOptions {
        translate_json_placeholders,
        source_language: doc.source_lang.clone(),
        target_language: Some(doc.target_lang.clone()),
        overwrite_targets: doc.xliff_targets.as_deref() == Some("overwrite"),
        encoding: None,
        fonts: None,
        ocr: Some(state.ocr.ocr()),
    };
    let source_lang = source_language(state, &doc, format, &source, &options).await?;
    let images = matches!(format, DocumentFormat::Png | DocumentFormat::Jpeg);
    if images || format == DocumentFormat::Pdf {
        // A picture's (or a scanned page's) text is read with the model of
        // its language, the detected one too (it was sampled with
        // English's).
        options.source_language = Some(source_lang.clone());
    }
    let custom = customizations(state, &doc, &source_lang).await?;
    let evaluation = quality::for_document(&state.db, &doc.id).await?;

    // The filter runs on a blocking thread and hands its batches over; each
    // is translated here and its translations handed back, so the document
    // is read, translated and written a batch at a time.
    let (batches, mut incoming) = tokio::sync::mpsc::channel::<Batch>(1);
    let target_lang = doc.target_lang.clone();
    // The requested output format, when it differs: SubRip ↔ WebVTT and
    // PDF → Word here, PDF or Word by LibreOffice once translated.
    let output_format =
        Output::from_extension(&doc.output_format).unwrap_or(Output::Document(format));
    let conversion = tolk_formats::conversion(format, output_format).ok_or_else(|| {
        JobError::Permanent(format!(
            "Conversion from {} to {} is not supported.",
            format.extension(),
            output_format.extension()
        ))
    })?;
    let fonts = (format == DocumentFormat::Pdf || images).then(|| state.fonts.clone());
    let filter = tokio::task::spawn_blocking(move || {
        let fonts = fonts.map(|f| f.get());
        let options = tolk_formats::ExtractOptions {
            fonts: fonts.clone(),
            ..options
        };
        let mut hand_over = |segments: &[String], read: f32| {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let batch = Batch {
                segments: segments.to_vec(),
                read,
                reply,
            };
            batches.blocking_send(batch).map_err(|_| Abandoned)?;
            answer.blocking_recv().map_err(|_| Abandoned)
        };
        let translation =
            tolk_formats::translate(format, &source, options, &target_lang, &mut hand_over)?;
        let bytes = match conversion {
            Conversion::Office { .. } => translation.bytes,
            _ => tolk_formats::convert(translation.bytes, format, output_format, fonts.as_ref())?,
        };
        Ok((bytes, translation.notes))
    });
    let translated = Translated::of(
        state,
        &doc,
        &source_lang,
        &custom,
        evaluation.is_some(),
        translate_json_placeholders,
        &mut incoming,
    )
    .await?;
    let (output, notes) = match filter.await {
        Ok(Ok(written)) => written,
        Ok(Err(TranslateError::Format(e))) => return Err(e.into()),
        Ok(Err(TranslateError::Translator(Abandoned))) => {
            return Err(JobError::Transient(
                "the document's translation stopped before its end".to_owned(),
            ));
        }
        Err(e) => return Err(JobError::Transient(format!("filter task failed: {e}"))),
    };
    let output = match conversion {
        Conversion::Office { import, export } => {
            state
                .office
                .convert(
                    &tolk_formats::office_input(format, output),
                    format.extension(),
                    import,
                    export,
                    output_format,
                )
                .await?
        }
        _ => output,
    };
    let output = if doc.watermark {
        watermark(output_format, output).await?
    } else {
        output
    };
    let evaluation = match evaluation {
        Some(eid) => Some(write_evaluation_input(state, eid, translated.pairs).await?),
        None => None,
    };
    finish(
        state,
        &doc,
        output,
        &notes,
        translated.billed,
        evaluation,
        &source_lang,
    )
    .await
}

/// What the engine made of a document's batches.
struct Translated {
    /// Characters billed: the plain text of every segment.
    billed: i64,
    /// Each segment and its translation, when the document is evaluated.
    pairs: Vec<(String, String)>,
}

impl Translated {
    /// Translates every batch the filter hands over on `incoming` and hands
    /// its translations back, reporting progress as the filter reads on.
    async fn of(
        state: &WorkerState,
        doc: &Document,
        source_lang: &str,
        custom: &Customizations,
        evaluated: bool,
        translate_json_placeholders: bool,
        incoming: &mut tokio::sync::mpsc::Receiver<Batch>,
    ) -> Result<Self, JobError> {
        let mut billed: i64 = 0;
        let mut pairs = Vec::new();
        let mut read_before = 0.0;
        while let Some(batch) = incoming.recv().await {
            billed += batch
                .segments
                .iter()
                .map(|s| inline::plain_text(s).chars().count() as i64)
                .sum::<i64>();
            let sources = evaluated.then(|| batch.segments.clone());
            let translated = state
                .pipeline()
                .translate(
                    Request {
                        source_lang: Some(source_lang.to_owned()),
                        target_lang: doc.target_lang.clone(),
                        texts: batch.segments,
                        markup: Some(MarkupOptions::default()),
                        split_lines: false,
                        options: TranslateOptions::default(),
                        custom,
                        protect_placeholders: !translate_json_placeholders,
                    },
                    &DocumentProgress {
                        state,
                        document_id: &doc.id,
                        from: read_before,
                        to: batch.read,
                    },
                )
                .await?
                .texts;
            read_before = batch.read;
            if let Some(sources) = sources {
                pairs.extend(sources.into_iter().zip(translated.iter().cloned()));
            }
            // The filter stops on its own if it is gone.
            let _ = batch.reply.send(translated);
        }
        Ok(Self { billed, pairs })
    }
}

/// Stores the translated document and, in one transaction, completes it
/// (with the notes of what its filter left untranslated), bills it and
/// enqueues its evaluation (when asked).
async fn finish(
    state: &WorkerState,
    doc: &documents::Document,
    output: Vec<u8>,
    notes: &[String],
    billed: i64,
    evaluation: Option<uuid::Uuid>,
    source_lang: &str,
) -> Result<(), JobError> {
    let result_object = format!("results/{}/translated.{}", doc.id, doc.output_format);
    state.objects.put(&result_object, output.into()).await?;

    let mut tx = state.db.begin().await.map_err(StorageError::from)?;
    if documents::complete(&mut tx, &doc.id, &result_object, billed, notes).await? {
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
            quality::set_job(&mut tx, eid, &job_id, source_lang).await?;
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

/// Writes the `(source, translation)` segment pairs of a document
/// evaluation to the object store.
async fn write_evaluation_input(
    state: &WorkerState,
    eid: uuid::Uuid,
    pairs: Vec<(String, String)>,
) -> Result<uuid::Uuid, JobError> {
    let input = crate::quality::EvaluationInput {
        segments: pairs
            .into_iter()
            .map(|(source, target)| crate::quality::Pair { source, target })
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

/// The given source language, or the one detected on a sample of the
/// document's text; refuses source == target.
async fn source_language(
    state: &WorkerState,
    doc: &Document,
    format: DocumentFormat,
    source: &bytes::Bytes,
    options: &tolk_formats::ExtractOptions,
) -> Result<String, JobError> {
    let lang = match &doc.source_lang {
        Some(l) => l.clone(),
        None => {
            let (source, options) = (source.clone(), options.clone());
            let sample = tokio::task::spawn_blocking(move || {
                tolk_formats::sample(format, &source, options, DETECT_SAMPLE_CHARS)
            })
            .await
            .map_err(|e| JobError::Transient(format!("sampling task failed: {e}")))??;
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
    if tolk_lang::same_language(&lang, &doc.target_lang) {
        return Err(JobError::Permanent(format!(
            "Source and target language are the same ({}); choose a different target_lang.",
            tolk_lang::deepl_base(&lang)
        )));
    }
    Ok(lang)
}

/// The glossaries, style rule list and translation memory the document was
/// uploaded with. One deleted since the upload fails the document.
async fn customizations(
    state: &WorkerState,
    doc: &Document,
    source_lang: &str,
) -> Result<Customizations, JobError> {
    let pipeline = state.pipeline();
    let terms = pipeline
        .glossary_terms(
            doc.organization_id,
            &doc.glossary_ids,
            source_lang,
            &doc.target_lang,
        )
        .await?;
    let style = match doc.style_id {
        Some(id) => Some(
            pipeline
                .style_rules(doc.organization_id, id, &doc.target_lang)
                .await?,
        ),
        None => None,
    };
    let memory = memories::for_document(&state.db, &doc.id)
        .await?
        .map(MemoryUse::from);
    Ok(Customizations {
        terms,
        style,
        memory,
    })
}

/// A batch of the document's segments on its way to the engines; the
/// translations go back through `reply`.
struct Batch {
    segments: Vec<String>,
    /// The share of the document read once this batch is written.
    read: f32,
    reply: tokio::sync::oneshot::Sender<Vec<String>>,
}

/// The job stopped taking batches (it failed).
#[derive(Debug)]
struct Abandoned;

/// A document's progress column, advanced as chunks come back: a batch
/// moves it from `from` to `to`.
struct DocumentProgress<'a> {
    state: &'a WorkerState,
    document_id: &'a str,
    from: f32,
    to: f32,
}

impl Progress for DocumentProgress<'_> {
    async fn advance(&self, done: usize, total: usize) -> Result<(), StorageError> {
        let share = done as f32 / total.max(1) as f32;
        let progress = self.from + (self.to - self.from) * share;
        documents::set_progress(&self.state.db, self.document_id, progress).await
    }
}

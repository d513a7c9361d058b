//! Handler of `import-tmx` jobs: the uploaded TMX file → a new translation
//! memory, all or nothing.
//!
//! The file is read from the object store as a stream and parsed on a
//! blocking thread by `tolk_formats::tmx::TmxReader` (one unit in memory at a
//! time); the thread turns units into COPY rows and hands them, 1 MiB at a
//! time, through a bounded channel (at most [`CHANNEL_BATCHES`] batches
//! waiting) to the task that streams them into `COPY translation_memory_units`.
//! The memory row, the COPY and the job's `completed` are one transaction: a
//! file that turns out not to be well-formed (or any failure) aborts the COPY
//! and rolls everything back, so nothing of a failed import is visible.

use std::collections::{BTreeMap, BTreeSet};

use apalis::prelude::*;
use serde_json::json;
use tokio::sync::mpsc;
use tolk_formats::tmx::{Entry, TmxError, TmxReader, Unit};
use tolk_storage::StorageError;
use tolk_storage::queue::{self, TmxJob};
use tolk_storage::translation_memories::jobs::{self, TmJob};
use tolk_storage::translation_memories::{self as memories, NewMemory, lang, words};
use uuid::Uuid;

use crate::WorkerState;
use crate::job::{self, JobError, Tracked};

/// Size of a batch of COPY rows sent to the database.
pub const BATCH_BYTES: usize = 1 << 20;
/// Batches that may wait between the parser and the database (memory bound).
pub const CHANNEL_BATCHES: usize = 4;
/// Skipped units listed in the job's result (all are counted).
pub const MAX_LISTED_SKIPS: usize = 100;
/// Read buffer of the parser.
const READ_BUFFER: usize = 256 << 10;

/// What the parser thread sends.
enum Msg {
    /// First: the memory's source language and the TMX header (JSON).
    Header {
        source_language: String,
        header: serde_json::Value,
    },
    /// COPY rows.
    Rows(Vec<u8>),
    /// Last, after a clean end of file.
    Done(Summary),
}

/// The outcome of a parse.
struct Summary {
    units: i64,
    targets: BTreeSet<String>,
    skipped_count: i64,
    skipped: Vec<serde_json::Value>,
}

/// The job handler registered with apalis.
pub async fn import_tmx(
    job: TmxJob,
    state: Data<WorkerState>,
    task_id: TaskId,
    attempt: Attempt,
) -> Result<(), BoxDynError> {
    execute_tmx(
        queue::IMPORT_TMX,
        &job,
        &state,
        &task_id,
        &attempt,
        run(&job, &state),
    )
    .await
}

/// Runs a TMX import or export (`queue`) under the job policy, in a span
/// naming the job.
pub(crate) async fn execute_tmx(
    queue: &'static str,
    job: &TmxJob,
    state: &WorkerState,
    task_id: &TaskId,
    attempt: &Attempt,
    run: impl std::future::Future<Output = Result<(), JobError>>,
) -> Result<(), BoxDynError> {
    let span = tracing::info_span!(
        "tmx_job",
        queue,
        tm_job = %job.job_id,
        trace_id = %job.trace_id,
        job_id = %task_id,
        attempt = attempt.current()
    );
    job::execute(
        &TmxTracked { job, queue },
        state,
        task_id,
        attempt,
        span,
        run,
    )
    .await
}

/// A TMX import or export as the job policy tracks it: its row in
/// `translation_memory_jobs`.
struct TmxTracked<'j> {
    /// The job.
    job: &'j TmxJob,
    /// Its queue: imports and exports share the table.
    queue: &'static str,
}

impl Tracked for TmxTracked<'_> {
    const MAX_ATTEMPTS: i32 = queue::TMX_MAX_ATTEMPTS;
    const NOUN: &'static str = "TMX job";

    fn queue(&self) -> &'static str {
        self.queue
    }

    async fn attempts(&self, state: &WorkerState) -> Result<i32, StorageError> {
        Ok(jobs::get(&state.db, self.job.job_id)
            .await?
            .map_or(0, |j| j.attempts))
    }

    async fn fail(&self, state: &WorkerState, message: &str) -> Result<(), StorageError> {
        jobs::fail(&state.db, self.job.job_id, message).await
    }

    async fn retry(&self, state: &WorkerState, reason: &str) -> Result<(), StorageError> {
        jobs::note_retry(&state.db, self.job.job_id, reason).await
    }
}

impl From<TmxError> for JobError {
    fn from(e: TmxError) -> Self {
        match e {
            TmxError::Malformed { .. } => Self::Permanent(e.to_string()),
            TmxError::Io(m) => Self::Transient(m),
        }
    }
}

/// Marks a TMX job (import or export) started and loads its row; `None` when
/// it has finished already (a repeated delivery).
pub(crate) async fn claim(state: &WorkerState, job: &TmxJob) -> Result<Option<TmJob>, JobError> {
    if !jobs::start(&state.db, job.job_id).await? {
        tracing::info!("TMX job already finished; nothing to do");
        return Ok(None);
    }
    let row = jobs::get(&state.db, job.job_id)
        .await?
        .ok_or_else(|| JobError::Permanent("The job no longer exists.".to_owned()))?;
    Ok(Some(row))
}

async fn run(job: &TmxJob, state: &WorkerState) -> Result<(), JobError> {
    let Some(row) = claim(state, job).await? else {
        return Ok(());
    };
    let reader = state.objects.reader(&row.object).await?;
    let (tx, mut rx) = mpsc::channel::<Result<Msg, TmxError>>(CHANNEL_BATCHES);
    let memory_id = row.translation_memory_id;
    let parser = tokio::task::spawn_blocking(move || {
        let input = std::io::BufReader::with_capacity(
            READ_BUFFER,
            tokio_util::io::SyncIoBridge::new(reader),
        );
        if let Err(e) = parse(input, memory_id, &tx) {
            // The receiver may be gone (database failure); nothing else to tell.
            let _ = tx.blocking_send(Err(e));
        }
    });
    let result = load(state, &row, &mut rx).await;
    // Unblocks the parser if the loader stopped early, then waits for it.
    drop(rx);
    parser
        .await
        .map_err(|e| JobError::Transient(format!("the TMX parser stopped: {e}")))?;
    // The upload is not needed once the job ended (a retry still needs it).
    if result.as_ref().err().is_none_or(JobError::is_permanent)
        && let Err(e) = state.objects.delete(&row.object).await
    {
        tracing::warn!(error = %e, "could not delete the uploaded TMX file");
    }
    result
}

/// Receives the parser's messages and loads them in one transaction.
async fn load(
    state: &WorkerState,
    row: &TmJob,
    rx: &mut mpsc::Receiver<Result<Msg, TmxError>>,
) -> Result<(), JobError> {
    let closed = || JobError::Transient("the TMX parser ended without a result".to_owned());
    let (source_language, header) = match rx.recv().await.ok_or_else(closed)?? {
        Msg::Header {
            source_language,
            header,
        } => (source_language, header),
        Msg::Rows(_) | Msg::Done(_) => {
            return Err(JobError::Transient(
                "the TMX parser sent no header".to_owned(),
            ));
        }
    };
    let mut tx = state.db.begin().await.map_err(StorageError::from)?;
    memories::insert(
        &mut tx,
        &NewMemory {
            id: row.translation_memory_id,
            organization_id: row.organization_id,
            name: row
                .display_name
                .clone()
                .or_else(|| row.file_name.clone())
                .unwrap_or_else(|| "Translation memory".to_owned()),
            source_language,
            header,
        },
    )
    .await?;
    let mut copy = tx
        .copy_in_raw(memories::COPY_UNITS)
        .await
        .map_err(StorageError::from)?;
    let summary = loop {
        match rx.recv().await {
            Some(Ok(Msg::Rows(rows))) => {
                copy.send(rows).await.map_err(StorageError::from)?;
            }
            Some(Ok(Msg::Done(summary))) => break summary,
            Some(Ok(Msg::Header { .. })) => {}
            Some(Err(e)) => {
                // Nothing of the file stays: abort the COPY, drop the transaction.
                let _ = copy.abort(e.to_string()).await;
                return Err(e.into());
            }
            None => {
                let _ = copy.abort("the parser stopped").await;
                return Err(closed());
            }
        }
    };
    if summary.units == 0 {
        let _ = copy.abort("no units").await;
        let why = summary
            .skipped
            .first()
            .map(|s| {
                format!(
                    " (line {}: {})",
                    s["line"],
                    s["reason"].as_str().unwrap_or_default()
                )
            })
            .unwrap_or_default();
        return Err(JobError::Permanent(format!(
            "The TMX file holds no usable translation unit; {} skipped{why}.",
            summary.skipped_count
        )));
    }
    let copied = copy.finish().await.map_err(StorageError::from)?;
    // Rarity of the bigram keys (fuzzy candidates), counted by PostgreSQL.
    memories::count_keys(&mut tx, row.translation_memory_id).await?;
    let targets: Vec<String> = summary.targets.into_iter().collect();
    memories::finish_import(&mut tx, row.translation_memory_id, &targets, summary.units).await?;
    let skipped = serde_json::Value::Array(summary.skipped);
    if !jobs::complete_import(&mut tx, row.id, summary.skipped_count, &skipped).await? {
        tracing::info!("the job ended meanwhile; the import is rolled back");
        return Ok(());
    }
    tx.commit().await.map_err(StorageError::from)?;
    tracing::info!(
        units = copied,
        skipped = summary.skipped_count,
        "translation memory imported"
    );
    Ok(())
}

/// Parses the whole file, sending the header, batches of COPY rows and the
/// summary. Runs on a blocking thread.
fn parse(
    input: impl std::io::BufRead,
    memory_id: Uuid,
    tx: &mpsc::Sender<Result<Msg, TmxError>>,
) -> Result<(), TmxError> {
    let gone = || TmxError::Io("the import was stopped".to_owned());
    let mut reader = TmxReader::new(input)?;
    let header = reader.header().clone();
    let mut first = None;
    let srclang = match header.srclang() {
        Some(l) => l.to_owned(),
        None => {
            // `*all*` or none: the language of the first variant of the first unit.
            let mut found = None;
            while let Some(entry) = reader.next_entry()? {
                if let Entry::Unit(u) = &entry
                    && let Some(v) = u.variants.first()
                {
                    found = Some(v.lang.clone());
                    first = Some(entry);
                    break;
                }
                first.get_or_insert(entry);
            }
            found.unwrap_or_default()
        }
    };
    let source = lang::base(&srclang);
    tx.blocking_send(Ok(Msg::Header {
        source_language: source.clone(),
        header: serde_json::to_value(&header).unwrap_or_default(),
    }))
    .map_err(|_| gone())?;
    let mut summary = Summary {
        units: 0,
        targets: BTreeSet::new(),
        skipped_count: 0,
        skipped: Vec::new(),
    };
    let mut rows = Vec::with_capacity(BATCH_BYTES + 64 * 1024);
    let skip = |summary: &mut Summary, line: u64, reason: String| {
        summary.skipped_count += 1;
        if summary.skipped.len() < MAX_LISTED_SKIPS {
            summary
                .skipped
                .push(json!({"line": line, "reason": reason}));
        }
    };
    let mut next = first;
    loop {
        let entry = match next.take() {
            Some(e) => e,
            None => match reader.next_entry()? {
                Some(e) => e,
                None => break,
            },
        };
        match entry {
            Entry::Skipped { line, reason } => skip(&mut summary, line, reason),
            Entry::Unit(unit) => match row_of(&unit, &source) {
                Ok((source_text, targets)) => {
                    let unit_no = i32::try_from(summary.units)
                        .map_err(|_| TmxError::Io("more than 2^31 units in one file".to_owned()))?;
                    let targets_json = serde_json::to_string(&targets).unwrap_or_default();
                    let unit_json = serde_json::to_string(&unit).unwrap_or_default();
                    let source_words = words::keys(source_text);
                    memories::copy_row(
                        &mut rows,
                        &memory_id,
                        unit_no,
                        source_text,
                        &targets_json,
                        &unit_json,
                        &source_words,
                    );
                    for t in targets.into_keys() {
                        if !summary.targets.contains(&t) {
                            summary.targets.insert(t);
                        }
                    }
                    summary.units += 1;
                    if rows.len() >= BATCH_BYTES {
                        let full = std::mem::replace(
                            &mut rows,
                            Vec::with_capacity(BATCH_BYTES + 64 * 1024),
                        );
                        tx.blocking_send(Ok(Msg::Rows(full))).map_err(|_| gone())?;
                    }
                }
                Err(reason) => skip(&mut summary, unit.line, reason),
            },
        }
    }
    if !rows.is_empty() {
        tx.blocking_send(Ok(Msg::Rows(rows))).map_err(|_| gone())?;
    }
    tx.blocking_send(Ok(Msg::Done(summary)))
        .map_err(|_| gone())?;
    Ok(())
}

/// The source text and the targets of a unit, or why it is skipped.
fn row_of<'u>(unit: &'u Unit, source: &str) -> Result<(&'u str, BTreeMap<String, String>), String> {
    if source.is_empty() {
        return Err("the file names no source language".to_owned());
    }
    let src = unit
        .variants
        .iter()
        .find(|v| lang::base(&v.lang) == source)
        .ok_or_else(|| format!("the unit has no variant in the source language ({source})"))?;
    let source_text = src.text.trim();
    if source_text.is_empty() {
        return Err("the source segment is empty".to_owned());
    }
    let mut targets = BTreeMap::new();
    for v in &unit.variants {
        if lang::base(&v.lang) == source {
            continue;
        }
        let text = v.text.trim();
        if text.is_empty() {
            continue;
        }
        targets
            .entry(lang::normalize(&v.lang))
            .or_insert_with(|| text.to_owned());
    }
    if targets.is_empty() {
        return Err("the unit has no translation (no non-empty target variant)".to_owned());
    }
    Ok((source_text, targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(tmx: &str) -> Result<(Vec<Msg>, Vec<u8>), TmxError> {
        let (tx, mut rx) = mpsc::channel(1024);
        parse(tmx.as_bytes(), Uuid::nil(), &tx)?;
        drop(tx);
        let mut msgs = Vec::new();
        let mut rows = Vec::new();
        while let Ok(m) = rx.try_recv() {
            match m? {
                Msg::Rows(r) => rows.extend(r),
                other => msgs.push(other),
            }
        }
        Ok((msgs, rows))
    }

    #[test]
    fn units_become_copy_rows_and_skips_are_reported() {
        let tmx = "<tmx version=\"1.4\"><header srclang=\"*all*\"/><body>\n\
            <tu><tuv xml:lang=\"en-US\"><seg> Hello\tthere </seg></tuv><tuv xml:lang=\"de-DE\"><seg>Hallo</seg></tuv><tuv xml:lang=\"pt-BR\"><seg>Olá</seg></tuv></tu>\n\
            <tu><tuv xml:lang=\"de\"><seg>Nur Deutsch</seg></tuv><tuv xml:lang=\"fr\"><seg>Français</seg></tuv></tu>\n\
            <tu><tuv xml:lang=\"en\"><seg>Alone</seg></tuv></tu>\n\
            </body></tmx>";
        let (msgs, rows) = parse_all(tmx).unwrap();
        let Msg::Header {
            source_language, ..
        } = &msgs[0]
        else {
            panic!("no header first");
        };
        assert_eq!(source_language, "en");
        let Msg::Done(summary) = &msgs[1] else {
            panic!("no summary");
        };
        assert_eq!(summary.units, 1);
        assert_eq!(summary.skipped_count, 2);
        assert_eq!(
            summary.targets.iter().cloned().collect::<Vec<_>>(),
            ["de", "pt-br"]
        );
        assert_eq!(summary.skipped[0]["line"], 3);
        let text = String::from_utf8(rows).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("\tHello\\tthere\t"), "{text}");
        assert!(text.contains(r#"{"de":"Hallo","pt-br":"Olá"}"#), "{text}");
    }

    #[test]
    fn malformed_files_fail_with_their_line() {
        let tmx = "<tmx version=\"1.4\"><header srclang=\"en\"/><body>\n<tu><tuv xml:lang=\"en\"><seg>a</seg></tuv><tuv xml:lang=\"de\"><seg>b</seg></tuv></tu>\n<tu><tuv xml:lang=\"en\"><seg>a</tu>\n";
        match parse_all(tmx) {
            Err(TmxError::Malformed { line, .. }) => assert_eq!(line, 3),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("accepted"),
        }
    }
}

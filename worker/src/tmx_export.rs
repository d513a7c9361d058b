//! Handler of `export-tmx` jobs: a translation memory → a TMX 1.4b file in
//! the object store.
//!
//! The memory's row and units are read in one REPEATABLE READ, READ ONLY
//! transaction (a consistent snapshot, streamed row by row); units are written
//! by `tolk_formats::tmx::TmxWriter` into a buffer that is flushed, 1 MiB at a
//! time, into a multipart upload: memory stays bounded whatever the size of
//! the memory. The job completes once the upload is finished.

use apalis::prelude::*;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tolk_formats::tmx::{Header, TmxWriter, Unit};
use tolk_storage::StorageError;
use tolk_storage::queue::{self, TmxJob};
use tolk_storage::translation_memories::{self as memories, jobs};

use crate::WorkerState;
use crate::job::JobError;
use crate::tmx_import::execute_tmx;

/// How long an exported file can be downloaded.
pub const DOWNLOAD_HOURS: i64 = 24;
/// Bytes buffered before they go to the upload.
const FLUSH_BYTES: usize = 1 << 20;

/// The job handler registered with apalis.
pub async fn export_tmx(
    job: TmxJob,
    state: Data<WorkerState>,
    task_id: TaskId,
    attempt: Attempt,
) -> Result<(), BoxDynError> {
    execute_tmx(
        queue::EXPORT_TMX,
        &job,
        &state,
        &task_id,
        &attempt,
        run(&job, &state),
    )
    .await
}

async fn run(job: &TmxJob, state: &WorkerState) -> Result<(), JobError> {
    let Some(row) = crate::tmx_import::claim(state, job).await? else {
        return Ok(());
    };
    let mut upload = state.objects.writer(&row.object);
    match write(state, row.translation_memory_id, &mut upload).await {
        Ok(bytes) => {
            upload
                .shutdown()
                .await
                .map_err(|e| JobError::Transient(format!("finishing the upload failed: {e}")))?;
            let until = chrono::Utc::now() + chrono::Duration::hours(DOWNLOAD_HOURS);
            jobs::complete_export(&state.db, row.id, bytes, until).await?;
            tracing::info!(bytes, "translation memory exported");
            Ok(())
        }
        Err(e) => {
            if let Err(abort) = upload.abort().await {
                tracing::warn!(error = %abort, "could not abort the partial upload");
            }
            Err(e)
        }
    }
}

/// Streams the memory as TMX into `upload`; returns the bytes written.
async fn write(
    state: &WorkerState,
    memory_id: uuid::Uuid,
    upload: &mut object_store::buffered::BufWriter,
) -> Result<i64, JobError> {
    let mut tx = state.db.begin().await.map_err(StorageError::from)?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *tx)
        .await
        .map_err(StorageError::from)?;
    let memory = memories::get_any(&mut tx, memory_id)
        .await?
        .ok_or_else(|| {
            JobError::Permanent("The translation memory no longer exists.".to_owned())
        })?;
    let mut header: Header = serde_json::from_value(memory.header.clone()).unwrap_or_default();
    if header.srclang().is_none() {
        header.attrs.retain(|(k, _)| k != "srclang");
        header
            .attrs
            .push(("srclang".to_owned(), memory.source_language.clone()));
    }
    let mut tmx = TmxWriter::start(Vec::with_capacity(FLUSH_BYTES * 2), &header)?;
    let mut written: i64 = 0;
    let mut units = memories::units(&mut tx, memory_id);
    while let Some(json) = units.next().await {
        let unit: Unit = serde_json::from_str(&json?)
            .map_err(|e| JobError::Permanent(format!("a stored unit is unreadable: {e}")))?;
        tmx.write_unit(&unit)?;
        let buf = tmx.get_mut();
        if buf.len() >= FLUSH_BYTES {
            upload
                .write_all(buf)
                .await
                .map_err(|e| JobError::Transient(format!("writing the export failed: {e}")))?;
            written += buf.len() as i64;
            buf.clear();
        }
    }
    drop(units);
    let rest = tmx.finish()?;
    upload
        .write_all(&rest)
        .await
        .map_err(|e| JobError::Transient(format!("writing the export failed: {e}")))?;
    written += rest.len() as i64;
    tx.commit().await.map_err(StorageError::from)?;
    Ok(written)
}

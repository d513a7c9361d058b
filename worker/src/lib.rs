//! Tolk's workers: one handler per job kind, run on the apalis-postgres queue.
//!
//! Every process start registers its workers under a unique name
//! (`{queue}-{host}-{pid}-{ulid}`), so a worker killed with `kill -9` never shares
//! a name with its replacement and its jobs are re-enqueued once its heartbeat is
//! stale (by any live worker of the queue, and by the scheduler's sweep).

#![deny(missing_docs)]

pub mod documents;
pub mod fonts;
mod job;
pub mod ocr;
pub mod office;
pub mod pools;
pub mod quality;
pub mod run;
pub mod supervise;
pub mod tmx_export;
pub mod tmx_import;
pub mod voice;
pub mod wake;

pub use fonts::PdfFonts;
pub use ocr::Tesseract;
pub use office::Office;
pub use pools::{Kind, Pools};
pub use run::{WorkerConfig, WorkerState, run};

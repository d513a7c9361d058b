//! `tolk-bench documents`: documents through the platform vs raw apertium.
//!
//! Placeholder: another change fills this in.

/// Runs the documents benchmark.
pub async fn run() -> anyhow::Result<()> {
    anyhow::bail!("`tolk-bench documents` is not yet implemented (see bench/src/documents.rs)")
}

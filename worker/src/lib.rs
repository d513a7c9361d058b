//! tolk-worker

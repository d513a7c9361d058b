//! tolk-scheduler

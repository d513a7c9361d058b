//! tolk-storage

//! Translation engines (see the contract in the crate docs once written).

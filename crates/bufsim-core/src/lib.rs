//! bufsim's engine: a block cache driven by prefetch-aware replacement policies.
//!
//! The map of the crate follows a request: [`layout`] places its blocks on devices, [`engine`]
//! splits it into block accesses, [`cache`] keeps residency and asks a [`policy`] for victims,
//! [`run`] reads a trace once and runs many (policy, cache size) configurations over it.

pub mod blockmap;
pub mod cache;
pub mod cluster;
pub mod engine;
pub mod error;
pub mod heap;
pub mod layout;
pub mod list;
pub mod nonresident;
pub mod policy;
pub mod prefetch;
pub mod run;

pub use error::SimError;
pub use bufsim_config::{rng, spec};
pub use bufsim_trace as trace;

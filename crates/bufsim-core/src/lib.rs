//! bufsim's engine: a block cache driven by prefetch-aware replacement policies.
//!
//! The map of the crate follows a request: [`layout`] places its blocks on devices, [`access`]
//! splits it into block accesses (one step shared by both engines), [`cache`] keeps residency and asks a [`policy`] for victims,
//! [`run`] reads a trace once and runs many (policy, cache size) configurations over it.
//! [`timed`] drives the same pipeline with discrete events, devices and I/O schedulers
//! (execution time).

pub mod access;
pub mod array;
pub mod block_table;
pub mod blockmap;
pub mod breakdown;
pub mod buckets;
pub mod cache;
pub mod cluster;
pub mod engine;
pub mod error;
pub mod evicted;
pub mod frames;
pub mod ghosts;
pub mod heap;
pub mod hierarchy;
pub mod huge_pages;
pub mod layout;
pub mod list;
pub mod memory_hint;
pub mod nonresident;
pub mod options;
pub mod page_log;
pub mod policy;
pub mod prefetch;
pub mod row;
pub mod run;
pub mod sample_set;
pub mod timed;
pub mod zeroed;

pub use bufsim_config as config;
pub use bufsim_config::{rng, spec};
pub use bufsim_device as device;
pub use bufsim_trace as trace;
pub use error::SimError;

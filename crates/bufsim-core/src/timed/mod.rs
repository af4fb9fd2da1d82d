//! Timed mode: the cache, read-ahead and clustering of count mode driven by discrete events,
//! with devices and I/O schedulers from bufsim-device, giving execution time.
//!
//! Follows the prefetching paper's AccuSim (§5.1-5.2, Fig. 4): each stream alternates think
//! time (from the trace, or fixed) and I/O; a demand miss is synchronous, read-ahead issued
//! asynchronously overlaps with think time, and a demand access to a block whose I/O is still
//! in flight waits for the rest and counts as a miss. Deviations: streams (pids) run
//! concurrently unless `single_stream` merges them as the paper did; writes are write-back.
//!
//! - [`events`]: the event queue, ordered by (time in ns, sequence number).
//! - [`streams`]: streams, think time, reading the trace once for all of them.
//! - [`storage`]: devices indexed by device id, one scheduler queue each, and the mapping from
//!   cache blocks to device requests; with [`network`] (LogGP) between cache and devices and
//!   [`faults`] that slow a device down mid-run (storage-aware caching, docs/storage-aware.md).
//! - [`engine`]: the engine itself.
//! - [`histogram`]: fixed-bucket latency histograms for percentiles.
//! - [`options`]: the settings of timed mode; [`stats`]: what a timed run measures.

pub mod engine;
pub mod events;
pub mod faults;
pub mod histogram;
pub mod network;
pub mod options;
pub mod sequences;
pub mod stats;
pub mod storage;
pub mod streams;

pub use engine::TimedEngine;
pub use faults::Fault;
pub use histogram::LatencyHistogram;
pub use network::LogGp;
pub use options::{HitRule, TimingOptions, DEFAULT_DEVICE, DEFAULT_NETWORK, DEFAULT_SCHEDULER, MAX_CLOSED};
pub use stats::{DeviceStats, IoClass, Summary, TimedStats};
pub use storage::Storage;
pub use streams::{StreamPlan, StreamPlanner, Streams, Think};

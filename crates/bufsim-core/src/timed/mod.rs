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

pub mod engine;
pub mod events;
pub mod faults;
pub mod histogram;
pub mod network;
pub mod storage;
pub mod streams;

pub use engine::TimedEngine;
pub use faults::Fault;
pub use histogram::LatencyHistogram;
pub use network::LogGp;
pub use storage::Storage;
pub use streams::{StreamPlan, StreamPlanner, Streams, Think};

use crate::spec::SpecError;

/// The settings of timed mode.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingOptions {
    /// Device spec for every device id, such as `disk(preset=st39102lw)` or `avg`.
    pub device: String,
    /// I/O scheduler spec for every device queue: `noop`, `sstf`, `cscan`, `deadline(...)`.
    pub scheduler: String,
    pub think: Think,
    /// Merge all pids into one stream (the prefetching paper's AccuSim, §5.1).
    pub single_stream: bool,
    /// Device specs of single devices, overriding `device` (storage-aware caching §4.3: one
    /// aged disk among new ones). Later entries for the same device win.
    pub device_for: Vec<(u16, String)>,
    /// The network between the cache and the devices: `none` or `loggp(...)`
    /// ([`network`]; storage-aware caching §4.4).
    pub network: String,
    /// A closed workload (storage-aware caching §4.1): this many requests outstanding, the
    /// next request of the trace issued as soon as one completes; `None` runs each pid (or the
    /// single stream) with its think times.
    pub closed: Option<u32>,
    /// Performance faults injected into devices ([`faults`]).
    pub faults: Vec<Fault>,
    /// Write back every dirty block when the last stream ends, as an application's data must
    /// reach the disk before it is done; the execution time then ends when the flush does.
    pub final_flush: bool,
}

/// Device of timed mode when none is given: the disk AccuSim and DULO simulate.
pub const DEFAULT_DEVICE: &str = "st39102lw";
/// Scheduler when none is given: first come, first served, as AccuSim's DiskSim driver ran.
pub const DEFAULT_SCHEDULER: &str = "noop";

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            device: DEFAULT_DEVICE.to_string(),
            scheduler: DEFAULT_SCHEDULER.to_string(),
            think: Think::Trace,
            single_stream: false,
            device_for: Vec::new(),
            network: DEFAULT_NETWORK.to_string(),
            closed: None,
            faults: Vec::new(),
            final_flush: true,
        }
    }
}

/// Network when none is given: none (devices attached directly, as AccuSim's disk).
pub const DEFAULT_NETWORK: &str = "none";

/// Most outstanding requests a closed workload takes: each is a stream with its own state
/// (about 200 bytes), allocated before the run, so a mistyped count must not exhaust memory.
pub const MAX_CLOSED: u32 = 1_000_000;

impl TimingOptions {
    /// Checks the device, scheduler and network specs by building them once.
    pub fn validate(&self, seed: u64) -> Result<(), SpecError> {
        bufsim_device::build_device(&self.device, seed)?;
        for (d, spec) in &self.device_for {
            bufsim_device::build_device(spec, seed).map_err(|e| SpecError(format!("device {d}: {e}")))?;
        }
        bufsim_device::build_scheduler(&self.scheduler)?;
        LogGp::parse(&self.network)?;
        if self.closed == Some(0) {
            return Err(SpecError("a closed workload needs at least 1 outstanding request".into()));
        }
        if let Some(n) = self.closed.filter(|&n| n > MAX_CLOSED) {
            return Err(SpecError(format!(
                "a closed workload takes at most {MAX_CLOSED} outstanding requests, not {n}"
            )));
        }
        if self.closed.is_some() && self.single_stream {
            return Err(SpecError(
                "a closed workload (--closed) already decides the streams; drop --single-stream".into(),
            ));
        }
        Ok(())
    }

    /// The device spec of device `d`.
    pub fn device_spec(&self, d: u16) -> &str {
        self.device_for.iter().rev().find(|(x, _)| *x == d).map_or(self.device.as_str(), |(_, s)| s.as_str())
    }
}

/// Disk requests of one kind (synchronous reads, asynchronous reads, write-backs): how many,
/// how many blocks, and the sum of their times from issue to completion (the columns of the
/// prefetching paper's Table 6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoClass {
    pub requests: u64,
    pub blocks: u64,
    pub time_ns: u64,
}

impl IoClass {
    /// Mean time from issue to completion, ns.
    pub fn mean_time_ns(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.time_ns as f64 / self.requests as f64
        }
    }
}

/// Mean and percentiles of a latency histogram, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub max_ns: u64,
}

impl Summary {
    pub fn of(h: &LatencyHistogram) -> Summary {
        Summary {
            count: h.count(),
            mean_ns: h.mean_ns(),
            p50_ns: h.quantile_ns(0.50),
            p90_ns: h.quantile_ns(0.90),
            p99_ns: h.quantile_ns(0.99),
            max_ns: h.max_ns(),
        }
    }
}

/// What one device did.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceStats {
    /// Read requests the cache waited for, and the time it waited for them in all (issue to
    /// delivery: network, queueing, service; storage-aware caching's wait time).
    pub reads: u64,
    pub wait_ns: u64,
    pub device: u16,
    /// The model's one-line description.
    pub model: String,
    pub requests: u64,
    /// Time with at least one request in service.
    pub busy_ns: u64,
    /// `busy_ns` over the simulated time (`end_time_ns`).
    pub utilization: f64,
    /// Mean time a request waited in the scheduler queue before the device started it.
    pub queue_wait_mean_ns: f64,
    pub max_queue: u64,
}

/// Timing of one run. Times are integer nanoseconds of simulated time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimedStats {
    /// When the last stream finished its last request (the application's execution time), or,
    /// with the end-of-run flush, when the flush finished.
    pub exec_time_ns: u64,
    /// How long the end-of-run flush of dirty blocks took (from the last stream's end).
    pub flush_time_ns: u64,
    /// The end-of-run flush's write requests (counted apart from `write`: the write-backs of
    /// evictions during the run).
    pub flush: IoClass,
    /// When the last event happened: read-ahead and write-back may outlive the streams.
    pub end_time_ns: u64,
    /// Device busy time, summed over devices.
    pub io_time_ns: u64,
    /// Time streams spent waiting for I/O, summed over streams.
    pub stall_time_ns: u64,
    /// Think time, summed over streams.
    pub think_time_ns: u64,
    pub streams: u32,
    /// Demand accesses that found their block still in flight from an earlier request
    /// (counted as misses).
    pub inflight_misses: u64,
    pub sync: IoClass,
    pub async_: IoClass,
    pub write: IoClass,
    /// Device service time per device request (start to completion).
    pub service: Summary,
    /// Response time per cache-level I/O (issue to completion: queueing plus service).
    pub response: Summary,
    pub devices: Vec<DeviceStats>,
    /// Bytes the simulated requests asked for (throughput = bytes / execution time).
    pub bytes: u64,
}

impl TimedStats {
    /// Requested bytes per second of execution time, in MB/s (10^6 bytes).
    pub fn throughput_mb_s(&self) -> f64 {
        if self.exec_time_ns == 0 {
            0.0
        } else {
            self.bytes as f64 / self.exec_time_ns as f64 * 1e3
        }
    }
}

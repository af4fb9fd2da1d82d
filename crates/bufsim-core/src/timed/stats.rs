//! What a timed run measures: I/O by kind, latency summaries, per-device statistics.

use super::histogram::LatencyHistogram;
use super::sequences::SequenceSizes;

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
    /// Blocks by the size of the disk access sequence they were served in, all devices.
    pub sequences: SequenceSizes,
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

//! Devices and I/O schedulers for bufsim's timed mode.
//!
//! A [`DeviceModel`] says how long a request takes once the device starts on it; a
//! [`Scheduler`] orders the requests waiting for a device. Both are built from spec strings
//! (`disk(preset=st39102lw)`, `deadline(fifo-batch=8)`) through [`build_device`] and
//! [`build_scheduler`], and both are listed with their parameters and defaults in
//! [`registry`]. Time is integer nanoseconds throughout the API.
//!
//! The engine that drives them (discrete events, think time, sync and async I/O) lives in
//! bufsim-core; this crate knows nothing of caches.

pub mod avg;
pub mod disk;
pub mod params;
pub mod registry;
pub mod sched;
pub mod seek;
pub mod ssd;
pub mod zones;

pub use bufsim_config::SpecError;

/// The largest device, in bytes (1 EiB): block and sector numbers on it, and the bytes of a
/// request past them, stay far from 2^64.
pub const MAX_CAPACITY_BYTES: u64 = 1 << 60;
pub use registry::{build_device, build_disk, build_scheduler, DEVICES, SCHEDULERS};

/// One request as the device sees it: a run of contiguous device blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// Unique per run: schedulers break ties by it, and the deadline scheduler finds requests
    /// by (block, id).
    pub id: u64,
    pub device: u16,
    /// First device block, in units of `block_size` bytes.
    pub block: u64,
    pub blocks: u32,
    pub block_size: u32,
    pub write: bool,
    /// A process waits for it (demand miss) rather than read-ahead or write-back.
    pub sync: bool,
    /// When the request was created; schedulers use the `now_ns` given to `push` instead.
    pub issue_ns: u64,
}

impl IoRequest {
    /// The block just after the request: where a sequential successor starts.
    #[inline]
    pub fn end_block(&self) -> u64 {
        self.block + self.blocks as u64
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.blocks as u64 * self.block_size as u64
    }
}

/// How long a device takes to serve a request.
///
/// Contract: the engine calls `service_ns` once per request, when the device starts it, with
/// `start_ns` never decreasing from one call to the next. The model moves its own state
/// (head position, busy channels) and returns the time from `start_ns` until the request
/// completes. A device asked to start while it is still busy (more than
/// [`DeviceModel::queue_depth`] requests outstanding) counts the wait in the returned time
/// rather than failing. Same seed and same calls give the same answers.
pub trait DeviceModel: Send {
    fn service_ns(&mut self, req: &IoRequest, start_ns: u64) -> u64;
    /// Whole blocks of `block_size` bytes the device holds. Requests beyond the end wrap
    /// around to block 0 (as AccuSim's fixed-size disk does) rather than failing.
    fn capacity_blocks(&self, block_size: u32) -> u64;
    /// One line for logs and result records, e.g. the preset and its key figures.
    fn describe(&self) -> String;
    /// The block just after the last one served: where the head is, for seek-aware
    /// schedulers (SSTF, C-SCAN).
    fn head_block(&self) -> u64;
    /// How many requests the device serves at once: 1 for disks, the channel count for SSDs.
    fn queue_depth(&self) -> u32 {
        1
    }
    /// What a request costs on average before any state is known (storage-aware caching §5.2:
    /// "the expected transfer time from each disk as a function of its seek time, rotation
    /// delay, and peak bandwidth"): a fixed positioning part and a part per byte. Faults and
    /// queueing are not in it.
    fn expected_service(&self) -> ExpectedService;
}

/// A device's expected service time for a request of `blocks` blocks of `block_size` bytes:
/// `positioning_ns + blocks * ns_per_block + bytes * ns_per_byte`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExpectedService {
    /// Mean positioning time of a request (average seek plus average rotational delay for
    /// disks, access latency for flash).
    pub positioning_ns: f64,
    /// Transfer time per block whatever its size (`avg(transfer=0.2ms)`), usually 0.
    pub ns_per_block: f64,
    /// Transfer time per byte at the device's peak rate.
    pub ns_per_byte: f64,
}

impl ExpectedService {
    /// Expected service time of a request of `blocks` blocks of `block_size` bytes, in ns.
    #[inline]
    pub fn ns(&self, blocks: u64, block_size: u64) -> f64 {
        self.positioning_ns + blocks as f64 * (self.ns_per_block + block_size as f64 * self.ns_per_byte)
    }

    /// The same for a request of `bytes` bytes in blocks of `block_size`.
    pub fn ns_for_bytes(&self, bytes: u64, block_size: u64) -> f64 {
        self.ns(bytes.div_ceil(block_size.max(1)), block_size)
    }
}

/// Orders the requests waiting for one device. One scheduler per device queue.
///
/// `pop` is called when the device can take a request; `head_block` is the device's
/// [`DeviceModel::head_block`]. Ties are broken by request id so runs are deterministic.
pub trait Scheduler: Send {
    fn push(&mut self, req: IoRequest, now_ns: u64);
    fn pop(&mut self, now_ns: u64, head_block: u64) -> Option<IoRequest>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Nanoseconds from a float count, rounded, never negative.
#[inline]
pub(crate) fn round_ns(ns: f64) -> u64 {
    if ns <= 0.0 {
        0
    } else {
        ns.round() as u64
    }
}

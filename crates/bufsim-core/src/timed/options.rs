//! Timed mode's options: device, scheduler, network, faults, closed workloads.

use super::faults::Fault;
use super::network::LogGp;
use super::streams::Think;
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
    /// When a block read ahead counts as a hit at its first demand access.
    pub hit_rule: HitRule,
}

/// When the first demand access to a block read ahead counts as a hit in timed mode. A block
/// whose read an earlier request started and which is still in flight is a miss under both
/// rules (the access waits for the disk). They differ on the blocks a request's own
/// synchronous read-ahead reads together with its first missing block: the request waits for
/// that read too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HitRule {
    /// A hit only if the block's read had completed when the request began: the prefetching
    /// paper §5.1 ("access to a prefetched block is counted as a hit if the prefetching is
    /// completed and as a miss otherwise"), which AccuSim checks per block
    /// (`check_group_ready` in its `prefetch.cc`).
    #[default]
    Completed,
    /// Also a hit when the request's own read is bringing the block (count mode's view, where
    /// every read completes at once).
    OwnReads,
}

impl HitRule {
    pub const ALL: [HitRule; 2] = [HitRule::Completed, HitRule::OwnReads];

    pub fn name(self) -> &'static str {
        match self {
            HitRule::Completed => "completed",
            HitRule::OwnReads => "own-reads",
        }
    }

    pub fn parse(s: &str) -> Result<HitRule, SpecError> {
        let s = s.trim();
        HitRule::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| SpecError(format!("hit rule `{s}` is not known; use completed or own-reads")))
    }
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
            hit_rule: HitRule::Completed,
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

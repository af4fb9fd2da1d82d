//! Static: storage-aware caching §5.2 (Forney et al., FAST '02): one LRU partition per device,
//! sizes fixed in proportion to each device's expected service time for the mean request size.
//! Deviation: none; blocks past a partition's size are given up as eager partitioning does.
//! `ratio=R` fixes the sizes by hand instead, as Figure 4 varies them: each device slower than
//! the fastest gets R times the share of each fastest device.
//!
//! "The ratio of partition sizes is statically set and is directly proportional to the ratio of
//! the expected service time of each disk. Since we use Trace 1, we know the mean request size
//! is 256 KB. As such, we directly compute the expected transfer time from each disk as a
//! function of its seek time, rotation delay, and peak bandwidth" (§5.2). The expected service
//! time comes from each device's model ([`super::StorageView`]); wait times are still measured
//! per epoch, for the timeline, but never move a block.

use super::split::{split_policy, DeviceSplit, Sizing};
use super::{RepartitionConfig, WINDOW};
use crate::policy::{Args, BuildEnv, Lru, ParamInfo, PolicyDef, PolicyInfo, Range};
use crate::spec::{Size, SpecError};

pub struct StaticSplit {
    split: DeviceSplit<Lru>,
}

impl StaticSplit {
    /// `request_bytes`: the mean request size the expected service times are computed for;
    /// `ratio`: the slow devices' share over each fastest device's (`None`: in proportion to
    /// the expected service times).
    pub fn new(capacity: usize, request_bytes: u64, ratio: Option<f64>, window: u64) -> Self {
        let cfg = RepartitionConfig { window: window.max(1), threshold: f64::MAX, base: 1, tolerance: 0.0 };
        let sizing = match ratio {
            None => Sizing::ExpectedService { request_bytes },
            Some(ratio) => Sizing::SlowRatio { request_bytes, ratio },
        };
        StaticSplit { split: DeviceSplit::new(capacity, Lru::new, sizing, cfg, false) }
    }

    pub fn split(&self) -> &DeviceSplit<Lru> {
        &self.split
    }
}

split_policy!(StaticSplit, |s, pins, a| s.split.eager_victim(pins, a));

impl PolicyDef for StaticSplit {
    const INFO: PolicyInfo = PolicyInfo {
        name: "static",
        aliases: &["static-lru"],
        paper: "storage-aware caching (Forney et al., FAST '02) §5.2, Figure 3",
        summary: "one LRU partition per device, sized once in proportion to each device's expected service time for the mean request size",
        params: &[
            ParamInfo { name: "request", default: "256KiB", doc: "mean request size the expected service times are computed for (§5.2: Trace 1's 256 KB)", range: Range::Bytes(1, 1 << 40) },
            ParamInfo { name: "ratio", default: "service", doc: "service: sizes in proportion to expected service times (§5.2); or R: each device slower than the fastest gets R times a fastest device's share (Figure 4's x-axis)", range: Range::Or(&["service"], &Range::Positive(1e6)) },
            ParamInfo { name: "window", default: WINDOW.default, doc: "device requests per measurement epoch (the timeline's wait times; no repartitioning)", range: Range::Whole(1, u64::MAX) },
        ],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        device_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let request = match Size::parse(args.text("request")) {
            Ok(s) => s.to_blocks(env.block_size).max(1) * env.block_size,
            Err(e) => return Err(SpecError(format!("policy `static`: parameter request: {e}"))),
        };
        let ratio = match args.text("ratio") {
            "service" => None,
            _ => match args.f64("ratio")? {
                r if r > 0.0 => Some(r),
                _ => return Err(args.bad("ratio", "service or a number above 0")),
            },
        };
        let window = args.u64("window")?;
        if window == 0 {
            return Err(SpecError("policy `static`: parameter window must be at least 1".into()));
        }
        Ok(StaticSplit::new(env.capacity, request, ratio, window))
    }
}

//! Lazy LRU: storage-aware caching §2.2-§2.3 and §5.3 (Forney et al., FAST '02): one LRU
//! partition per device, targets moved by §3.1's repartitioning, the victim partition drawn by
//! an inverse lottery (seeded). Deviation: none.
//!
//! "Each partition is given a number of tickets in inverse proportion to its desired size.
//! When a replacement is needed, a lottery is held by selecting a random ticket; the partition
//! holding that ticket is picked as the victim. The victim then gives up its least valuable
//! page" (§2.2). Partitions therefore drift towards sizes whose share of the misses matches
//! their share of the tickets; no size is enforced.

use super::split::{split_policy, DeviceSplit, Sizing};
use super::{repartition_config, STEP, THRESHOLD, TOLERANCE, WINDOW};
use crate::policy::{Args, BuildEnv, Lru, ParamInfo, PolicyDef, PolicyInfo, Range};
use crate::rng::Rng;
use crate::spec::SpecError;

pub struct LazyLru {
    split: DeviceSplit<Lru>,
    rng: Rng,
}

impl LazyLru {
    pub fn new(capacity: usize, cfg: super::RepartitionConfig, seed: u64) -> Self {
        LazyLru { split: DeviceSplit::new(capacity, Lru::new, Sizing::Equal, cfg, true), rng: Rng::new(seed) }
    }

    pub fn split(&self) -> &DeviceSplit<Lru> {
        &self.split
    }
}

split_policy!(LazyLru, |s, pins, a| s.split.lottery_victim(&mut s.rng, pins, a));

pub(crate) const SEED: ParamInfo = ParamInfo {
    name: "seed",
    default: "run",
    doc: "seed of the inverse lottery: the run's, or a number",
    range: Range::Seed,
};

impl PolicyDef for LazyLru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lazy-lru",
        aliases: &[],
        paper: "storage-aware caching (Forney et al., FAST '02) §2.2, §3.1, §5.3 (Lazy LRU)",
        summary: "one LRU partition per device; wait-time repartitioning (§3.1) sets target sizes; the victim partition is drawn by inverse lottery",
        params: &[WINDOW, THRESHOLD, STEP, TOLERANCE, SEED],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        device_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(LazyLru::new(env.capacity, repartition_config(args, env)?, args.seed(env.seed)?))
    }
}

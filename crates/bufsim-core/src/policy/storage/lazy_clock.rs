//! Lazy Clock (Partitioned-Clock with lazy partitions): storage-aware caching §3.2 and §5.4
//! (Forney et al., FAST '02). A clock hand per partition; the inverse lottery picks the victim
//! partition and only that partition's hand sweeps, clearing use bits only there. Deviation: none.
//!
//! §3.2's two optimizations are both in: "only those pages belonging to the victim's partition
//! should have their use bits cleared" and "a separate clock hand for each partition". Each
//! partition is a [`Clock`] ring over its own frames, so a sweep never touches another
//! partition's bits. Targets move by §3.1's repartitioning, as in `lazy-lru`.

use super::lazy_lru::SEED;
use super::split::{split_policy, DeviceSplit, Sizing};
use super::{repartition_config, STEP, THRESHOLD, TOLERANCE, WINDOW};
use crate::policy::{Args, BuildEnv, Clock, PolicyDef, PolicyInfo};
use crate::rng::Rng;
use crate::spec::SpecError;

pub struct LazyClock {
    split: DeviceSplit<Clock>,
    rng: Rng,
}

impl LazyClock {
    pub fn new(capacity: usize, cfg: super::RepartitionConfig, seed: u64) -> Self {
        LazyClock { split: DeviceSplit::new(capacity, Clock::new, Sizing::Equal, cfg, true), rng: Rng::new(seed) }
    }

    pub fn split(&self) -> &DeviceSplit<Clock> {
        &self.split
    }
}

split_policy!(LazyClock, |s, pins, a| s.split.lottery_victim(&mut s.rng, pins, a));

impl PolicyDef for LazyClock {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lazy-clock",
        aliases: &["partitioned-clock"],
        paper: "storage-aware caching (Forney et al., FAST '02) §3.2, §5.4 (Partitioned-Clock, Lazy Clock)",
        summary: "a CLOCK ring and hand per device partition; the inverse lottery picks the partition whose hand sweeps; wait-time repartitioning (§3.1) sets target sizes",
        params: &[WINDOW, THRESHOLD, STEP, TOLERANCE, SEED],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        device_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(LazyClock::new(env.capacity, repartition_config(args, env)?, args.seed(env.seed)?))
    }
}

//! Eager LRU: storage-aware caching §2.3 and §5.3 (Forney et al., FAST '02): one LRU partition
//! per device, targets moved by §3.1's repartitioning; the victim partition is the new block's
//! own. Deviation: blocks reach their new partition as misses need frames (docs/storage-aware.md).
//!
//! "With eager partitioning, when new partition sizes are desired, the algorithm immediately
//! reallocates pages using new cost information. Eager partitioning simplifies choosing a
//! victim partition, since it is the same as the location of the new page" (§2.3). A policy
//! cannot free frames on its own in bufsim (the cache owns residency), so at the end of an
//! epoch only the targets move; from then on a partition below its target takes its victims
//! from the partition furthest above its target, and every other partition evicts its own LRU
//! block. Sizes reach the targets as soon as enough misses have happened; the blocks of a
//! shrinking partition stay cached (and can still hit) until then.

use super::split::{split_policy, DeviceSplit, Sizing};
use super::{repartition_config, STEP, THRESHOLD, TOLERANCE, WINDOW};
use crate::policy::{Args, BuildEnv, Lru, PolicyDef, PolicyInfo};
use crate::spec::SpecError;

pub struct EagerLru {
    split: DeviceSplit<Lru>,
}

impl EagerLru {
    pub fn new(capacity: usize, cfg: super::RepartitionConfig) -> Self {
        EagerLru { split: DeviceSplit::new(capacity, Lru::new, Sizing::Equal, cfg, true) }
    }

    pub fn split(&self) -> &DeviceSplit<Lru> {
        &self.split
    }
}

split_policy!(EagerLru, |s, pins, a| s.split.eager_victim(pins, a));

impl PolicyDef for EagerLru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "eager-lru",
        aliases: &[],
        paper: "storage-aware caching (Forney et al., FAST '02) §2.3, §3.1, §5.3 (Eager LRU)",
        summary: "one LRU partition per device; wait-time repartitioning (§3.1) sets the sizes; a miss evicts from its own device's partition",
        params: &[WINDOW, THRESHOLD, STEP, TOLERANCE],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        device_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(EagerLru::new(env.capacity, repartition_config(args, env)?))
    }
}

//! Eager LRU: storage-aware caching §2.3 and §5.3 (Forney et al., FAST '02): one LRU partition
//! per device, targets moved by §3.1's repartitioning; the victim partition is the new block's
//! own.
//!
//! "With eager partitioning, when new partition sizes are desired, the algorithm immediately
//! reallocates pages using new cost information. Eager partitioning simplifies choosing a
//! victim partition, since it is the same as the location of the new page" (§2.3). With
//! `reallocate=immediate` (the paper's) the end of an epoch evicts every partition's blocks
//! above its new target at once ([`crate::policy::Policy::reallocate`]), least recently used
//! first, and leaves their frames free for the partitions below their targets; a miss whose
//! partition is full evicts that partition's own LRU block. `reallocate=lazy` moves only the
//! targets: a partition below its target takes its victims from the partition furthest above
//! its own, so blocks follow as misses need frames and a shrinking partition's blocks stay
//! cached (and can still hit) until then.

use super::split::{split_policy, DeviceSplit, Sizing};
use super::{repartition_config, STEP, THRESHOLD, TOLERANCE, WINDOW};
use crate::policy::{Args, BuildEnv, Lru, ParamInfo, PolicyDef, PolicyInfo, Range};
use crate::spec::SpecError;

const REALLOCATE: ParamInfo = ParamInfo {
    name: "reallocate",
    default: "immediate",
    doc: "immediate (§2.3: blocks above a new target leave at the end of the epoch) | lazy (only targets move; blocks follow as misses need frames)",
    range: Range::Choice(&["immediate", "lazy"]),
};

pub struct EagerLru {
    split: DeviceSplit<Lru>,
}

impl EagerLru {
    pub fn new(capacity: usize, cfg: super::RepartitionConfig, immediate: bool) -> Self {
        EagerLru { split: DeviceSplit::new(capacity, Lru::new, Sizing::Equal, cfg, true).immediate(immediate) }
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
        summary: "one LRU partition per device; wait-time repartitioning (§3.1) sets the sizes and blocks above a new size leave at once (§2.3); a miss evicts from its own device's partition",
        params: &[WINDOW, THRESHOLD, STEP, TOLERANCE, REALLOCATE],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
        device_partitioned: true,
        ..crate::policy::registry::Capabilities::NONE
    },
    };
    fn build(args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        let immediate = args.choice("reallocate", &["immediate", "lazy"])? == "immediate";
        Ok(EagerLru::new(env.capacity, repartition_config(args, env)?, immediate))
    }
}

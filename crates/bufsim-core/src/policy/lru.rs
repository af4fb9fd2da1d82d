//! LRU: give up the least recently used block.
//! The baseline of every paper here (prefetching paper §3 and §4: prefetched blocks enter at MRU).

use super::queue::{QueuePolicy, QueueRule};
use super::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct LruRule;

impl QueueRule for LruRule {
    const NAME: &'static str = "LRU";
    const MOVE_ON_HIT: bool = true;
    const EVICT_NEWEST: bool = false;
}

/// Front = most recently used; the victim is the back.
pub type Lru = QueuePolicy<LruRule>;

impl PolicyDef for Lru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lru",
        aliases: &[],
        paper: "least recently used; baseline in all five papers (prefetching paper §3-4)",
        summary: "evicts the least recently used block; prefetched blocks enter at the MRU end",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::RESIZABLE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Lru::new(env.capacity))
    }
}

//! MRU: give up the most recently used block; right for loops larger than the cache.
//! MQ paper §2 (a baseline) and AMP §3.2 (the policy of looping partitions).

use super::queue::{QueuePolicy, QueueRule};
use super::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct MruRule;

impl QueueRule for MruRule {
    const NAME: &'static str = "MRU";
    const MOVE_ON_HIT: bool = true;
    const EVICT_NEWEST: bool = true;
}

/// Front = most recently used, which is also the victim.
pub type Mru = QueuePolicy<MruRule>;

impl PolicyDef for Mru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "mru",
        aliases: &[],
        paper: "most recently used; MQ paper §2, AMP §3.2 (looping partitions)",
        summary: "evicts the most recently used block; suits loops larger than the cache",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::RESIZABLE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Mru::new(env.capacity))
    }
}

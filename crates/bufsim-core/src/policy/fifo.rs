//! FIFO: give up the block that entered the cache first; hits change nothing.
//! Classic baseline (MQ paper §2 lists it among the policies second-level caches were tried with).

use super::queue::{QueuePolicy, QueueRule};
use super::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct FifoRule;

impl QueueRule for FifoRule {
    const NAME: &'static str = "FIFO";
    const MOVE_ON_HIT: bool = false;
    const EVICT_NEWEST: bool = false;
}

/// Front = newest; the victim is the back, the block that entered first.
pub type Fifo = QueuePolicy<FifoRule>;

impl PolicyDef for Fifo {
    const INFO: PolicyInfo = PolicyInfo {
        name: "fifo",
        aliases: &[],
        paper: "first in, first out; classic baseline",
        summary: "evicts the block that entered first; hits do not reorder",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::RESIZABLE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Fifo::new(env.capacity))
    }
}

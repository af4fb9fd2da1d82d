//! FIFO: give up the block that entered the cache first; hits change nothing.
//! Classic baseline (MQ paper §2 lists it among the policies second-level caches were tried with).

use super::ring::{Ring, RingRule};
use super::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct FifoRule;

impl RingRule for FifoRule {
    const NAME: &'static str = "FIFO";
    const SECOND_CHANCE: bool = false;
}

/// The ring's hand is at the block that entered first, the victim (the first unpinned one from
/// there); the incoming block takes its frame and its place, and the hand moves on.
pub type Fifo = Ring<FifoRule>;

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

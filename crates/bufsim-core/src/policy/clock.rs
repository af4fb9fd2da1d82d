//! CLOCK (second chance): a FIFO ring whose hand spares blocks with the reference bit set,
//! clearing it. New blocks enter with the bit clear, just behind the hand (as libCacheSim's
//! Clock and Linux's page reclaim do), so a block needs a hit to earn its second chance.
//! Prefetched blocks likewise enter with the bit clear; their first demand access does not set
//! it, because it counts as the first access (prefetching paper §4).

use super::ring::{Ring, RingRule};
use super::{Args, BuildEnv, ParamInfo, PolicyDef, PolicyInfo};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct ClockRule;

impl RingRule for ClockRule {
    const NAME: &'static str = "CLOCK";
    const SECOND_CHANCE: bool = true;
}

/// The ring's hand spares a frame with its reference bit set, clearing it.
pub type Clock = Ring<ClockRule>;

impl PolicyDef for Clock {
    const INFO: PolicyInfo = PolicyInfo {
        name: "clock",
        aliases: &["second-chance"],
        paper: "CLOCK / second chance (Corbato 1968); the base of DULO §3 and storage-aware Partitioned-Clock",
        summary: "FIFO ring with one reference bit; new blocks enter with the bit clear",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Clock::new(env.capacity))
    }
}

//! FIFO: give up the block that entered the cache first; hits change nothing.
//! Classic baseline (MQ paper §2 lists it among the policies second-level caches were tried with).

use super::lru::back_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::list::{Links, List};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Fifo {
    links: Links,
    /// Front = newest.
    queue: List,
}

impl Policy for Fifo {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.links.push_front(&mut self.queue, frame);
    }
    #[inline]
    fn hit(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    #[inline]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        back_unpinned(&self.links, &self.queue, pins)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.links.remove(&mut self.queue, frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.queue)?;
        if self.queue.len() != resident {
            return Err(format!("FIFO queue holds {} frames, cache {resident}", self.queue.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Fifo {
    const INFO: PolicyInfo = PolicyInfo {
        name: "fifo",
        aliases: &[],
        paper: "first in, first out; classic baseline",
        summary: "evicts the block that entered first; hits do not reorder",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Fifo { links: Links::with_nodes(env.capacity), queue: List::new() })
    }
}

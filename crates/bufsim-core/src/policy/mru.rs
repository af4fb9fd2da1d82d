//! MRU: give up the most recently used block; right for loops larger than the cache.
//! MQ paper §2 (a baseline) and AMP §3.2 (the policy of looping partitions).

use super::lru::front_unpinned;
use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::list::{Links, List};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Mru {
    links: Links,
    /// Front = most recently used.
    queue: List,
}

impl Mru {
    pub fn new(capacity: usize) -> Self {
        Mru { links: Links::with_nodes(capacity), queue: List::new() }
    }
}

impl Policy for Mru {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.links.push_front(&mut self.queue, frame);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.links.move_to_front(&mut self.queue, frame);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, _a: &Access) {
        self.links.move_to_front(&mut self.queue, frame);
    }
    #[inline]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        front_unpinned(&self.links, &self.queue, pins)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.links.remove(&mut self.queue, frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.queue)?;
        if self.queue.len() != resident {
            return Err(format!("MRU queue holds {} frames, cache {resident}", self.queue.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Mru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "mru",
        aliases: &[],
        paper: "most recently used; MQ paper §2, AMP §3.2 (looping partitions)",
        summary: "evicts the most recently used block; suits loops larger than the cache",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Mru::new(env.capacity))
    }
}

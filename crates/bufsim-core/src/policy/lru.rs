//! LRU: give up the least recently used block.
//! The baseline of every paper here (prefetching paper §3 and §4: prefetched blocks enter at MRU).

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::list::{Links, List};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Lru {
    links: Links,
    /// Front = most recently used.
    queue: List,
}

impl Lru {
    pub fn new(capacity: usize) -> Self {
        Lru { links: Links::with_nodes(capacity), queue: List::new() }
    }

    /// Frames from most to least recently used (tests and dumps).
    pub fn order(&self) -> Vec<Frame> {
        self.links.iter(&self.queue).collect()
    }
}

/// The first unpinned frame walking from the back of `list` towards the front.
#[inline]
pub(crate) fn back_unpinned(links: &Links, list: &List, pins: &Pins) -> Option<Frame> {
    let mut cur = list.back();
    while let Some(f) = cur {
        if !pins.pinned(f) {
            return Some(f);
        }
        cur = links.prev(f);
    }
    None
}

/// The first unpinned frame walking from the front of `list` towards the back.
#[inline]
pub(crate) fn front_unpinned(links: &Links, list: &List, pins: &Pins) -> Option<Frame> {
    let mut cur = list.front();
    while let Some(f) = cur {
        if !pins.pinned(f) {
            return Some(f);
        }
        cur = links.next(f);
    }
    None
}

impl Policy for Lru {
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
        back_unpinned(&self.links, &self.queue, pins)
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.links.remove(&mut self.queue, frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.queue)?;
        if self.queue.len() != resident {
            return Err(format!("LRU queue holds {} frames, cache {resident}", self.queue.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Lru {
    const INFO: PolicyInfo = PolicyInfo {
        name: "lru",
        aliases: &[],
        paper: "least recently used; baseline in all five papers (prefetching paper §3-4)",
        summary: "evicts the least recently used block; prefetched blocks enter at the MRU end",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: Capabilities::NONE,
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Lru::new(env.capacity))
    }
}

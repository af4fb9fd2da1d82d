//! OPT (Belady's MIN): give up the block whose next demand access is furthest in the future.
//! The future comes from a pre-pass over the trace (`Access::next_use`). Prefetch-aware as in
//! the prefetching paper §4: a prefetched block carries the time of its next demand access, so
//! a useless prefetch (never demanded) is the first victim; blocks fetched together are pinned
//! by the cache and so never evict each other.

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::heap::IndexedHeap;
use crate::spec::SpecError;

pub struct Opt {
    /// Min-heap on (u64::MAX - next use, frame): the top is used furthest in the future.
    /// Ties (blocks never used again) go to the lowest frame, deterministically.
    order: IndexedHeap<(u64, u32)>,
}

impl Opt {
    #[inline]
    fn set(&mut self, frame: Frame, next_use: u64) {
        self.order.set(frame, (u64::MAX - next_use, frame));
    }
}

impl Policy for Opt {
    #[inline]
    fn insert(&mut self, frame: Frame, a: &Access, _origin: Origin) {
        self.set(frame, a.next_use);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, a: &Access) {
        self.set(frame, a.next_use);
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.set(frame, a.next_use);
    }
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        let top = self.order.peek()?;
        if !pins.pinned(top) {
            return Some(top);
        }
        self.order.min_unskipped(|f| pins.pinned(f))
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.order.remove(frame);
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.order.check()?;
        if self.order.len() != resident {
            return Err(format!("OPT orders {} frames, cache {resident}", self.order.len()));
        }
        Ok(())
    }
}

impl PolicyDef for Opt {
    const INFO: PolicyInfo = PolicyInfo {
        name: "opt",
        aliases: &["belady", "min"],
        paper: "Belady's MIN (1966); prefetch-aware OPT of the prefetching paper §4",
        summary: "evicts the block used furthest in the future (needs a pre-pass over the trace)",
        params: &[] as &[ParamInfo],
        preset_of: None,
        caps: crate::policy::registry::Capabilities {
            needs_future: true,
            ..crate::policy::registry::Capabilities::NONE
        },
    };
    fn build(_args: &Args, env: &BuildEnv) -> Result<Self, SpecError> {
        Ok(Opt { order: IndexedHeap::with_nodes(env.capacity) })
    }
}

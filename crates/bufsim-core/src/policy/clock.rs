//! CLOCK (second chance): a FIFO ring whose hand spares blocks with the reference bit set,
//! clearing it. New blocks enter with the bit clear, just behind the hand (as libCacheSim's
//! Clock and Linux's page reclaim do), so a block needs a hit to earn its second chance.
//! Prefetched blocks likewise enter with the bit clear; their first demand access does not set
//! it, because it counts as the first access (prefetching paper §4).

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::{Links, List};
use crate::policy::Capabilities;
use crate::spec::SpecError;

pub struct Clock {
    links: Links,
    /// The ring cut open at the hand: the back is the next frame the hand looks at, the front
    /// the frame it passed last.
    ring: List,
    referenced: FrameVec<bool>,
}

impl Clock {
    pub fn new(capacity: usize) -> Self {
        Clock { links: Links::with_nodes(capacity), ring: List::new(), referenced: FrameVec::filled(false, capacity) }
    }

    /// Frames from the hand onwards with their reference bits (tests and dumps).
    pub fn ring_from_hand(&self) -> Vec<(Frame, bool)> {
        let mut v: Vec<(Frame, bool)> = self.links.iter(&self.ring).map(|f| (f, self.referenced[f as usize])).collect();
        v.reverse();
        v
    }
}

impl Policy for Clock {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.referenced[frame as usize] = false;
        self.links.push_front(&mut self.ring, frame);
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.referenced[frame as usize] = true;
    }
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // Each frame is passed at most twice: once to clear its bit, once to take it.
        let mut budget = 2 * self.ring.len() + 1;
        while budget > 0 {
            budget -= 1;
            let f = self.ring.back()?;
            if pins.pinned(f) {
                // A pinned frame keeps its bit; the hand just moves past it.
                self.links.move_to_front(&mut self.ring, f);
                continue;
            }
            if self.referenced[f as usize] {
                self.referenced[f as usize] = false;
                self.links.move_to_front(&mut self.ring, f);
                continue;
            }
            return Some(f);
        }
        None
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.links.remove(&mut self.ring, frame);
        self.referenced[frame as usize] = false;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.ring)?;
        if self.ring.len() != resident {
            return Err(format!("CLOCK ring holds {} frames, cache {resident}", self.ring.len()));
        }
        Ok(())
    }
}

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

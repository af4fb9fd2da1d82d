//! CLOCK (second chance): a FIFO ring whose hand spares blocks with the reference bit set,
//! clearing it. New blocks enter with the bit clear, just behind the hand (as libCacheSim's
//! Clock and Linux's page reclaim do), so a block needs a hit to earn its second chance.
//! Prefetched blocks likewise enter with the bit clear; their first demand access does not set
//! it, because it counts as the first access (prefetching paper §4).

use super::{Access, Args, BuildEnv, Frame, Origin, ParamInfo, Pins, Policy, PolicyDef, PolicyInfo, Removal};
use crate::frames::FrameVec;
use crate::list::NIL;
use crate::policy::Capabilities;
use crate::spec::SpecError;

/// A frame's place on the ring and its reference bit, side by side: the hand reads both.
#[derive(Clone, Copy)]
struct Node {
    /// The frame that entered the ring before this one (towards the hand's past).
    prev: u32,
    /// The frame after it, which the hand looks at next.
    next: u32,
    referenced: bool,
}

pub struct Clock {
    /// A circular list, each frame linked to the one that entered after it; the newest links
    /// back to the oldest, where the hand is. Passing a frame is moving the hand one step: the
    /// frame passed is then the newest, with no relinking.
    nodes: FrameVec<Node>,
    /// The next frame the hand looks at, `NIL` when the ring is empty.
    hand: u32,
    len: usize,
}

impl Clock {
    pub fn new(capacity: usize) -> Self {
        Clock { nodes: FrameVec::filled(Node { prev: NIL, next: NIL, referenced: false }, capacity), hand: NIL, len: 0 }
    }

    /// Frames from the hand onwards with their reference bits (tests and dumps).
    pub fn ring_from_hand(&self) -> Vec<(Frame, bool)> {
        let mut v = Vec::with_capacity(self.len);
        let mut f = self.hand;
        for _ in 0..self.len {
            v.push((f, self.nodes[f as usize].referenced));
            f = self.nodes[f as usize].next;
        }
        v
    }
}

impl Policy for Clock {
    #[inline]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        // Just behind the hand: the newest frame, passed last.
        let node = if self.hand == NIL {
            self.hand = frame;
            Node { prev: frame, next: frame, referenced: false }
        } else {
            let (hand, newest) = (self.hand, self.nodes[self.hand as usize].prev);
            self.nodes.written_mut(newest as usize).next = frame;
            self.nodes.written_mut(hand as usize).prev = frame;
            Node { prev: newest, next: hand, referenced: false }
        };
        self.nodes[frame as usize] = node;
        self.len += 1;
    }
    #[inline]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        self.nodes.written_mut(frame as usize).referenced = true;
    }
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {}
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        // Each frame is passed at most twice: once to clear its bit, once to take it.
        let mut budget = 2 * self.len + 1;
        while budget > 0 && self.hand != NIL {
            budget -= 1;
            let f = self.hand;
            let node = self.nodes.written_mut(f as usize);
            if pins.pinned(f) {
                // A pinned frame keeps its bit; the hand just moves past it.
                self.hand = node.next;
                continue;
            }
            if node.referenced {
                node.referenced = false;
                self.hand = node.next;
                continue;
            }
            return Some(f);
        }
        None
    }
    #[inline]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        let Node { prev, next, .. } = *self.nodes.written_mut(frame as usize);
        if self.len == 1 {
            self.hand = NIL;
        } else {
            self.nodes.written_mut(prev as usize).next = next;
            self.nodes.written_mut(next as usize).prev = prev;
            if self.hand == frame {
                self.hand = next;
            }
        }
        *self.nodes.written_mut(frame as usize) = Node { prev: NIL, next: NIL, referenced: false };
        self.len -= 1;
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        if self.len != resident {
            return Err(format!("CLOCK ring holds {} frames, cache {resident}", self.len));
        }
        let mut f = self.hand;
        for i in 0..self.len {
            let n = self.nodes[f as usize];
            if self.nodes[n.next as usize].prev != f {
                return Err(format!(
                    "CLOCK ring: frame {f} (step {i}) links to {}, which links back to {}",
                    n.next, self.nodes[n.next as usize].prev
                ));
            }
            f = n.next;
        }
        if f != self.hand {
            return Err(format!("CLOCK ring does not close after {} frames", self.len));
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

//! The resident frames in a ring in the order they entered, with a hand at the oldest: the
//! whole state of CLOCK and FIFO, which differ only in whether a hit earns a block a second
//! chance (a reference bit the hand clears instead of evicting). Each policy's file holds its
//! rule, its paper and its registry entry.
//!
//! A ring rather than a list because the victim's frame takes the incoming block at once, and
//! the incoming block is the newest: just behind the hand, where the victim was. Replacing the
//! victim at the hand is then one step of the hand, with nothing relinked
//! ([`Policy::replace`]).

use super::{Access, Frame, LikelyVictims, Origin, Pins, Policy, Removal};
use crate::frames::FrameVec;
use crate::list::NIL;

/// What makes a ring policy what it is.
pub trait RingRule {
    /// Name in invariant messages.
    const NAME: &'static str;
    /// A hit sets the frame's reference bit, and the hand passes a frame with the bit set
    /// (clearing it) instead of evicting it: CLOCK. Without it (FIFO) the hand's frame is the
    /// victim, and hits change nothing.
    const SECOND_CHANCE: bool;
}

/// A frame's place on the ring and its reference bit, side by side: the hand reads both.
#[derive(Clone, Copy)]
struct Node {
    /// The frame that entered the ring before this one (towards the hand's past).
    prev: u32,
    /// The frame after it, which the hand looks at next.
    next: u32,
    referenced: bool,
}

pub struct Ring<R: RingRule> {
    /// A circular list, each frame linked to the one that entered after it; the newest links
    /// back to the oldest, where the hand is. Passing a frame is moving the hand one step: the
    /// frame passed is then the newest, with no relinking.
    nodes: FrameVec<Node>,
    /// The next frame the hand looks at, `NIL` when the ring is empty.
    hand: u32,
    len: usize,
    rule: std::marker::PhantomData<R>,
}

impl<R: RingRule> Ring<R> {
    pub fn new(capacity: usize) -> Self {
        Ring {
            nodes: FrameVec::filled(Node { prev: NIL, next: NIL, referenced: false }, capacity),
            hand: NIL,
            len: 0,
            rule: std::marker::PhantomData,
        }
    }

    /// Frames from the hand onwards (oldest first) with their reference bits (tests and dumps).
    pub fn ring_from_hand(&self) -> Vec<(Frame, bool)> {
        let mut v = Vec::with_capacity(self.len);
        let mut f = self.hand;
        for _ in 0..self.len {
            v.push((f, self.nodes[f as usize].referenced));
            f = self.nodes[f as usize].next;
        }
        v
    }

    /// Links `frame` in just behind the hand: the newest frame, passed last.
    #[inline(always)]
    fn link_newest(&mut self, frame: Frame) {
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
}

impl<R: RingRule> Policy for Ring<R> {
    #[inline(always)]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.link_newest(frame);
    }
    fn insert_cold(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.link_newest(frame);
        if !R::SECOND_CHANCE {
            // FIFO's next victim is the oldest, where the hand is. (CLOCK inserts the block
            // as any other, its bit clear.)
            self.hand = frame;
        }
    }
    #[inline(always)]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        if R::SECOND_CHANCE {
            self.nodes.written_mut(frame as usize).referenced = true;
        }
    }
    #[inline]
    fn first_demand(&mut self, _frame: Frame, _a: &Access) {
        // A read-ahead block's first demand counts as its first access (prefetching paper §4):
        // no reference bit.
    }
    #[inline(always)]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if !R::SECOND_CHANCE {
            // The oldest frame that is not pinned; pinned ones stay where they are, the oldest.
            let mut f = self.hand;
            for _ in 0..self.len {
                if !pins.pinned(f) {
                    return Some(f);
                }
                f = self.nodes[f as usize].next;
            }
            return None;
        }
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
    #[inline(always)]
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
    #[inline(always)]
    fn replace(&mut self, frame: Frame, key: u64, why: Removal, a: &Access, origin: Origin) {
        if frame == self.hand {
            // Unlinked from the hand and linked in behind the next frame, it would sit where
            // it is: the hand steps past it, and it is the newest. Its bit is clear (the hand
            // only stops at a clear one).
            debug_assert!(!self.nodes[frame as usize].referenced);
            self.hand = self.nodes[frame as usize].next;
        } else {
            self.remove(frame, key, why);
            self.insert(frame, a, origin);
        }
    }
    #[inline(always)]
    fn likely_victims(&self) -> LikelyVictims {
        if R::SECOND_CHANCE || self.hand == NIL {
            return LikelyVictims::NONE;
        }
        // FIFO: the hand's frame goes next, then the one after it.
        LikelyVictims { next: [Some(self.hand), None], after: [Some(self.nodes[self.hand as usize].next), None] }
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        if self.len != resident {
            return Err(format!("{} ring holds {} frames, cache {resident}", R::NAME, self.len));
        }
        let mut f = self.hand;
        for i in 0..self.len {
            let n = self.nodes[f as usize];
            if self.nodes[n.next as usize].prev != f {
                return Err(format!(
                    "{} ring: frame {f} (step {i}) links to {}, which links back to {}",
                    R::NAME,
                    n.next,
                    self.nodes[n.next as usize].prev
                ));
            }
            if n.referenced && !R::SECOND_CHANCE {
                return Err(format!("{} ring: frame {f} has a reference bit", R::NAME));
            }
            f = n.next;
        }
        if f != self.hand {
            return Err(format!("{} ring does not close after {} frames", R::NAME, self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::policy::queue::{QueuePolicy, QueueRule};
    use crate::policy::steps::{apply_op, cache_op};
    use crate::policy::Fifo;
    use proptest::prelude::*;

    /// FIFO as the ordered queue keeps it (newest at the front, the victim at the back): the
    /// ring must choose every victim as this does.
    struct ListFifo;
    impl QueueRule for ListFifo {
        const NAME: &'static str = "list FIFO";
        const MOVE_ON_HIT: bool = false;
        const EVICT_NEWEST: bool = false;
    }

    proptest! {
        #[test]
        fn the_ring_evicts_as_the_list_fifo(ops in prop::collection::vec(cache_op(), 1..400), cap in 1usize..9) {
            let mut ring = Cache::new(Fifo::new(cap), cap);
            let mut list = Cache::new(QueuePolicy::<ListFifo>::new(cap), cap);
            for (t, o) in ops.iter().enumerate() {
                prop_assert_eq!(apply_op(&mut ring, o, t as u64), apply_op(&mut list, o, t as u64), "op {} {:?}", t, o);
            }
        }
    }

    #[test]
    fn a_cold_insert_is_fifos_next_victim_and_clocks_newest() {
        let a = Access::default();
        let mut fifo = Fifo::new(4);
        for f in 0..3 {
            fifo.insert(f, &a, Origin::Demand);
        }
        fifo.insert_cold(3, &a, Origin::Demand);
        assert_eq!(fifo.victim(&Pins::none(), &a), Some(3));
        let mut clock = crate::policy::Clock::new(4);
        for f in 0..3 {
            clock.insert(f, &a, Origin::Demand);
        }
        clock.insert_cold(3, &a, Origin::Demand);
        assert_eq!(clock.ring_from_hand(), vec![(0, false), (1, false), (2, false), (3, false)]);
    }
}

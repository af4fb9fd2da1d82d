//! One ordered queue of the resident blocks, newest at the front: the whole state of LRU and
//! MRU, which differ only in which end gives the victim (FIFO, whose hits move nothing, is a
//! ring: `ring.rs`). Each policy's file holds its rule, its paper and its registry entry.

use super::{Access, Frame, LikelyVictims, Origin, Pins, Policy, Removal};
use crate::list::{Links, List};

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

/// What makes a queue policy what it is.
pub trait QueueRule {
    /// Name in invariant messages.
    const NAME: &'static str;
    /// A hit (and a read-ahead block's first demand) moves the block to the front.
    const MOVE_ON_HIT: bool;
    /// The victim is the newest block (front) instead of the oldest (back).
    const EVICT_NEWEST: bool;
}

pub struct QueuePolicy<R: QueueRule> {
    links: Links,
    /// Front = newest (most recently used, or most recently inserted).
    queue: List,
    rule: std::marker::PhantomData<R>,
}

impl<R: QueueRule> QueuePolicy<R> {
    pub fn new(capacity: usize) -> Self {
        QueuePolicy { links: Links::with_nodes(capacity), queue: List::new(), rule: std::marker::PhantomData }
    }

    /// Frames from the front (newest) to the back (tests and dumps).
    pub fn order(&self) -> Vec<Frame> {
        self.links.iter(&self.queue).collect()
    }
}

// The hot methods are always inlined: each is one or two list operations, cheaper than the
// call, and inlined into the cache's demand path they share its saved registers.
impl<R: QueueRule> Policy for QueuePolicy<R> {
    #[inline(always)]
    fn insert(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        self.links.push_front(&mut self.queue, frame);
    }
    fn insert_cold(&mut self, frame: Frame, _a: &Access, _origin: Origin) {
        // The end the victim is taken from.
        if R::EVICT_NEWEST {
            self.links.push_front(&mut self.queue, frame);
        } else {
            self.links.push_back(&mut self.queue, frame);
        }
    }
    #[inline(always)]
    fn hit(&mut self, frame: Frame, _a: &Access) {
        if R::MOVE_ON_HIT {
            self.links.move_to_front(&mut self.queue, frame);
        }
    }
    #[inline]
    fn first_demand(&mut self, frame: Frame, a: &Access) {
        self.hit(frame, a);
    }
    #[inline(always)]
    fn victim(&mut self, pins: &Pins, _incoming: &Access) -> Option<Frame> {
        if R::EVICT_NEWEST {
            front_unpinned(&self.links, &self.queue, pins)
        } else {
            back_unpinned(&self.links, &self.queue, pins)
        }
    }
    #[inline(always)]
    fn remove(&mut self, frame: Frame, _key: u64, _why: Removal) {
        self.links.remove(&mut self.queue, frame);
    }
    #[inline(always)]
    fn warms(&self) -> bool {
        true
    }
    #[inline(always)]
    fn warm(&self, frame: Option<Frame>, _key: u64) {
        // A hit moves the block (its links and its neighbours' change); an eviction unlinks it.
        if let Some(f) = frame {
            self.links.warm(f);
        }
    }
    #[inline(always)]
    fn likely_victims(&self) -> LikelyVictims {
        let (v, after) = if R::EVICT_NEWEST {
            let v = self.queue.front();
            (v, v.and_then(|f| self.links.next(f)))
        } else {
            let v = self.queue.back();
            (v, v.and_then(|f| self.links.prev(f)))
        };
        LikelyVictims { next: [v, None], after: [after, None] }
    }
    fn check(&self, resident: usize) -> Result<(), String> {
        self.links.check(&self.queue)?;
        if self.queue.len() != resident {
            return Err(format!("{} queue holds {} frames, cache {resident}", R::NAME, self.queue.len()));
        }
        Ok(())
    }
}

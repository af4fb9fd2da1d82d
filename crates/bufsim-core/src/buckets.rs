//! Frames kept in priority buckets, the O(1) LFU structure of Shah, Mitra and Matani ("An O(1)
//! algorithm for implementing the LFU cache eviction scheme", 2010): a list of buckets in
//! rising priority, each a list of its frames in the order they joined it. The lowest
//! priority's oldest frame comes first, and a frame whose priority rises by one moves to the
//! next bucket up (made if missing) in O(1): no heap sift. LFU and LeCaR's libCacheSim LFU
//! expert both order their frames this way.
//!
//! The caller keeps each frame's bucket id (beside its other per-frame state) and passes it in.

use crate::frames::FrameVec;
use crate::list::{Links, List, NIL};

#[derive(Clone, Copy, Debug)]
struct Bucket {
    priority: u64,
    /// Its frames, in the order they joined.
    members: List,
}

#[derive(Clone, Debug)]
pub struct PriorityBuckets {
    /// Frames within buckets: front = joined first.
    frames: Links,
    /// Bucket ids in priority order (front = lowest).
    buckets: Links,
    order: List,
    per_bucket: FrameVec<Bucket>,
    /// Buckets given back, reused last-freed first; buckets `fresh..` never used.
    free: Vec<u32>,
    fresh: u32,
    /// An empty bucket left at the front of the order for the next bucket made there (`NIL`:
    /// none). A miss evicts the lowest bucket's oldest frame, which in LFU is often the only
    /// one left of its priority, and the new block then takes the lowest priority again:
    /// kept, the bucket is not unlinked, freed, taken back and linked again on every such
    /// miss. Invisible to callers: they never see an empty bucket.
    spare: u32,
}

impl PriorityBuckets {
    /// Buckets for frames `0..capacity`.
    pub fn with_frames(capacity: usize) -> Self {
        // Every bucket in use holds a frame but the spare, and a move makes the new bucket
        // before the old one empties: capacity + 2 buckets at most.
        let nb = capacity + 2;
        PriorityBuckets {
            frames: Links::with_nodes(capacity),
            buckets: Links::with_nodes(nb),
            order: List::new(),
            per_bucket: FrameVec::filled(Bucket { priority: 0, members: List::new() }, nb),
            free: Vec::new(),
            fresh: 0,
            spare: NIL,
        }
    }

    #[inline]
    pub fn priority(&self, b: u32) -> u64 {
        self.per_bucket[b as usize].priority
    }

    /// The lowest bucket.
    #[inline]
    pub fn first_bucket(&self) -> Option<u32> {
        let front = self.order.front()?;
        if front == self.spare {
            self.buckets.next(front)
        } else {
            Some(front)
        }
    }

    /// Gives the spare bucket back, for a caller about to walk and renumber the buckets.
    pub fn settle(&mut self) {
        if self.spare != NIL {
            let b = std::mem::replace(&mut self.spare, NIL);
            self.drop_bucket(b);
        }
    }

    /// Starts loading `f`'s links within its bucket (a memory hint, [`crate::memory_hint`]).
    #[inline]
    pub fn warm(&self, f: u32) {
        self.frames.warm(f);
    }

    /// The bucket above `b`.
    #[inline]
    pub fn next_bucket(&self, b: u32) -> Option<u32> {
        self.buckets.next(b)
    }

    /// The frame that joined bucket `b` first.
    #[inline]
    pub fn first_frame(&self, b: u32) -> Option<u32> {
        self.per_bucket[b as usize].members.front()
    }

    /// The frame that joined its bucket after `f`.
    #[inline]
    pub fn next_frame(&self, f: u32) -> Option<u32> {
        self.frames.next(f)
    }

    /// The first frame, from the lowest bucket up and oldest first, that `skip` does not
    /// reject, with its bucket.
    #[inline]
    pub fn first_unskipped(&self, skip: impl Fn(u32) -> bool) -> Option<(u32, u32)> {
        // The spare, if any, has no frame to offer: the walk passes it by.
        let mut b = self.order.front();
        while let Some(bk) = b {
            let mut f = self.per_bucket[bk as usize].members.front();
            while let Some(x) = f {
                if !skip(x) {
                    return Some((x, bk));
                }
                f = self.frames.next(x);
            }
            b = self.buckets.next(bk);
        }
        None
    }

    /// The bucket of priority `p`, made if missing, searching up from bucket `from` (or from the
    /// lowest bucket when `from` is `NIL`); every bucket from `from` on has a priority below
    /// `p`, or is `p`'s.
    #[inline(always)]
    pub fn bucket_at_or_after(&mut self, from: u32, p: u64) -> u32 {
        let mut prev = from;
        let mut cur = if from == NIL { self.order.front() } else { self.buckets.next(from) };
        while let Some(b) = cur {
            let q = self.per_bucket[b as usize].priority;
            if q == p {
                if b == self.spare {
                    self.spare = NIL;
                }
                return b;
            }
            if q > p {
                break;
            }
            prev = b;
            cur = self.buckets.next(b);
        }
        self.make_bucket(prev, cur, p)
    }

    /// A new bucket of priority `p` between `prev` (`NIL`: none) and `next` (`None`: none).
    #[inline(always)]
    fn make_bucket(&mut self, prev: u32, next: Option<u32>, p: u64) -> u32 {
        // The spare is the front bucket and empty: a bucket made just before or just after it
        // can be the spare with its priority changed, the order unchanged.
        let spare = self.spare;
        if spare != NIL && (prev == spare || next == Some(spare)) {
            self.spare = NIL;
            self.per_bucket[spare as usize].priority = p;
            return spare;
        }
        let b = match self.free.pop() {
            Some(b) => b,
            None => {
                let b = self.fresh;
                assert!((b as usize) < self.buckets.len(), "bucket pool sized for capacity + 1");
                self.fresh += 1;
                b
            }
        };
        self.per_bucket[b as usize] = Bucket { priority: p, members: List::new() };
        match next {
            // Below every bucket: the common case on a miss, whose victim often emptied the
            // lowest bucket just before.
            Some(_) if prev == NIL => self.buckets.push_front(&mut self.order, b),
            Some(next) => self.buckets.insert_before(&mut self.order, next, b),
            None => self.buckets.push_back(&mut self.order, b),
        }
        debug_assert!(prev == NIL || self.per_bucket[prev as usize].priority < p);
        b
    }

    /// Appends `frame` (in no bucket) as the newest of bucket `b`.
    #[inline(always)]
    pub fn push_back(&mut self, b: u32, frame: u32) {
        self.frames.push_back(&mut self.per_bucket[b as usize].members, frame);
    }

    /// Puts `frame` before `at`, a member of bucket `b` (merging buckets in order).
    #[inline]
    pub fn insert_before(&mut self, b: u32, at: u32, frame: u32) {
        self.frames.insert_before(&mut self.per_bucket[b as usize].members, at, frame);
    }

    /// Takes `frame` out of bucket `b`, leaving `b` in place even if empty (the caller may
    /// still search up from it; [`PriorityBuckets::release_if_empty`] gives it back).
    #[inline(always)]
    pub fn detach(&mut self, b: u32, frame: u32) {
        self.frames.remove(&mut self.per_bucket[b as usize].members, frame);
    }

    /// Gives bucket `b` back if no frame is left in it.
    #[inline(always)]
    pub fn release_if_empty(&mut self, b: u32) {
        if self.per_bucket[b as usize].members.is_empty() {
            if self.spare == NIL && self.order.front() == Some(b) {
                self.spare = b;
                return;
            }
            self.buckets.remove(&mut self.order, b);
            self.free.push(b);
        }
    }

    /// Takes `frame` out of bucket `b` and gives `b` back if it empties.
    #[inline(always)]
    pub fn leave(&mut self, b: u32, frame: u32) {
        self.detach(b, frame);
        self.release_if_empty(b);
    }

    /// Moves `frame` from bucket `old` to the newest end of the bucket of priority `p`,
    /// returning that bucket. The search starts from `old` when `p` is above its priority (a
    /// count that rose), else from the lowest bucket (an aging policy whose inflation fell).
    #[inline(always)]
    pub fn promote(&mut self, old: u32, frame: u32, p: u64) -> u32 {
        let from = if p > self.priority(old) { old } else { NIL };
        self.detach(old, frame);
        let b = self.bucket_at_or_after(from, p);
        self.push_back(b, frame);
        self.release_if_empty(old);
        b
    }

    /// Sets bucket `b`'s priority; the caller keeps the buckets in rising order.
    #[inline]
    pub fn set_priority(&mut self, b: u32, p: u64) {
        self.per_bucket[b as usize].priority = p;
    }

    /// Drops the empty bucket `b` from the order (after merging its frames elsewhere).
    pub fn drop_bucket(&mut self, b: u32) {
        debug_assert!(self.per_bucket[b as usize].members.is_empty());
        self.buckets.remove(&mut self.order, b);
        self.free.push(b);
    }

    /// Buckets from the lowest: `(bucket, priority, frames oldest first)` (checks, dumps).
    pub fn dump(&self) -> Vec<(u32, u64, Vec<u32>)> {
        self.buckets
            .iter(&self.order)
            .filter(|&b| b != self.spare)
            .map(|b| {
                let bk = &self.per_bucket[b as usize];
                (b, bk.priority, self.frames.iter(&bk.members).collect())
            })
            .collect()
    }

    /// Frames in all buckets.
    pub fn len(&self) -> usize {
        self.buckets.iter(&self.order).map(|b| self.per_bucket[b as usize].members.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.first_bucket().is_none()
    }

    /// Verifies the links, rising priorities and that no empty bucket is kept but the spare,
    /// at the front.
    pub fn check(&self) -> Result<(), String> {
        self.buckets.check(&self.order)?;
        if self.spare != NIL && self.order.front() != Some(self.spare) {
            return Err(format!("the spare bucket {} is not the first", self.spare));
        }
        let mut prev: Option<u64> = None;
        for b in self.buckets.iter(&self.order) {
            let bk = &self.per_bucket[b as usize];
            if let Some(q) = prev.filter(|&q| q >= bk.priority) {
                return Err(format!("buckets out of order: {q} then {}", bk.priority));
            }
            prev = Some(bk.priority);
            self.frames.check(&bk.members)?;
            if bk.members.is_empty() && b != self.spare {
                return Err(format!("an empty bucket of priority {} is kept", bk.priority));
            }
        }
        Ok(())
    }
}

//! Residency: which block is in which frame, free frames, pins and prefetched-unused marks.
//! The policy only orders frames; this is the single place that keeps the cache consistent.
//!
//! Frames are handed out lowest first, and per-frame state (here and in every policy) is stored
//! only for the frames handed out so far, so memory follows the blocks a trace brings in, not
//! the cache size: a 1 TiB cache on a trace of a thousand blocks holds a thousand frames.

use crate::blockmap::BlockMap;
use crate::policy::{Access, Frame, Origin, Pins, Policy, Removal, PINNED, PREFETCHED};

/// What a demand access found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demand {
    /// Resident and demanded before.
    Hit,
    /// Resident, brought by read-ahead, demanded now for the first time.
    PrefetchHit,
    /// Not resident; now inserted.
    Miss,
    /// Not resident and could not be inserted because every frame is pinned.
    MissBypassed,
}

/// Frame flag: the resident copy came in by read-ahead (kept until eviction; the simple
/// prefetcher of the prefetching paper's Table 1 asks it of the previous access).
const BY_PREFETCH: u8 = 4;

/// Set in a map value when the frame holds a prefetched block not yet demanded, mirroring the
/// frame's PREFETCHED flag, so a plain hit reads nothing but the map.
const MAP_PREFETCHED: u32 = 1 << 31;

/// Frames a cache may have: frame numbers leave the top bit of a map value for the
/// prefetched mark. Callers refuse larger sizes with an error before building a cache.
pub const MAX_FRAMES: u64 = MAP_PREFETCHED as u64 - 1;

/// Set in a map value that is not a frame but a ghost of the policy (a policy that shares the
/// index, [`Policy::shares_index`]), with the ghost's node in the bits below. Only caches of
/// fewer frames than this share their index, so that no frame has the bit.
const GHOST: u32 = 1 << 30;

pub struct Cache<P: Policy> {
    pub policy: P,
    map: BlockMap,
    /// Key and flags of frames `0..fresh`.
    keys: Vec<u64>,
    flags: Vec<u8>,
    /// Frames given back (evicted or dropped), reused last-freed first before any fresh frame.
    free: Vec<Frame>,
    /// Frames `fresh..limit` were never used. Together with `free` this hands out frames
    /// exactly as a stack preloaded with `limit-1, ..., 1, 0` would: 0, 1, 2, ... with every
    /// freed frame reused before the next fresh one.
    fresh: usize,
    /// The bound of fresh frames: the capacity, plus the frames parked.
    limit: usize,
    /// The blocks the cache may hold now ([`Cache::set_capacity`]).
    capacity: usize,
    /// The capacity it was built with: the most it may ever hold.
    frames: usize,
    /// Frames given back when the capacity fell and not handed out until it rises again: no
    /// longer free, never resident.
    parked: Vec<Frame>,
    /// Prefetched blocks evicted before any demand access.
    pub evicted_unused: u64,
    pub evictions: u64,
    /// Blocks whose data the trace dropped while they were cached ([`Cache::drop_frame`]).
    pub dropped: u64,
    /// The frame and key of the last block evicted, until [`Cache::take_victim`] reads it
    /// (write-back first-level caches flush a dirty victim to the next level).
    victim: Option<(Frame, u64)>,
    /// Whether the map holds the policy's ghosts too (values with [`GHOST`]).
    shared: bool,
}

impl<P: Policy> Cache<P> {
    pub fn new(mut policy: P, capacity: usize) -> Self {
        assert!(capacity > 0 && capacity < MAP_PREFETCHED as usize, "cache capacity out of range");
        let shared = policy.shares_index() && capacity < GHOST as usize;
        if shared {
            policy.share_index();
        }
        Cache {
            shared,
            policy,
            map: BlockMap::new(),
            keys: Vec::new(),
            flags: Vec::new(),
            free: Vec::new(),
            fresh: 0,
            limit: capacity,
            capacity,
            frames: capacity,
            parked: Vec::new(),
            evicted_unused: 0,
            evictions: 0,
            dropped: 0,
            victim: None,
        }
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.fresh - self.free.len() - self.parked.len()
    }

    /// Changes the blocks the cache may hold to `capacity`, at most the capacity it was built
    /// with (whose frames every policy has state for). A smaller capacity evicts down to it now,
    /// victims chosen by the policy (counted as evictions; `a` is the access the policy is told
    /// the room is for: its time); a larger one lets later insertions fill it. No frame may be
    /// pinned: the engines call this between requests. Returns the blocks evicted.
    pub fn set_capacity(&mut self, capacity: usize, a: &Access) -> usize {
        assert!(capacity > 0 && capacity <= self.frames, "capacity {capacity} outside 1..={}", self.frames);
        let mut evicted = 0;
        while self.len() > capacity {
            let Some(v) = self.policy.victim(&Pins::new(&self.flags), a) else { break };
            self.evict(v);
            evicted += 1;
        }
        // Whatever the policy would not give up stays: the capacity is never below what is held.
        let capacity = capacity.max(self.len());
        if capacity < self.capacity {
            // Frames beyond the new capacity leave circulation: never-used ones first (the
            // limit falls), then free ones (parked).
            let mut excess = self.capacity - capacity;
            let unused = (self.limit - self.fresh).min(excess);
            self.limit -= unused;
            excess -= unused;
            for _ in 0..excess {
                let f = self.free.pop().expect("a free frame for each block over the capacity");
                self.parked.push(f);
            }
        } else {
            let mut more = capacity - self.capacity;
            while more > 0 {
                let Some(f) = self.parked.pop() else { break };
                self.free.push(f);
                more -= 1;
            }
            self.limit += more;
        }
        self.capacity = capacity;
        evicted
    }

    /// A free frame, if any: the last freed, else the lowest never used.
    #[inline]
    fn take_free(&mut self) -> Option<Frame> {
        if let Some(f) = self.free.pop() {
            return Some(f);
        }
        if self.fresh == self.limit {
            return None;
        }
        let f = self.fresh as Frame;
        self.fresh += 1;
        self.keys.push(0);
        self.flags.push(0);
        Some(f)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn frame_of(&self, key: u64) -> Option<Frame> {
        self.resident_value(key).map(|v| v & !MAP_PREFETCHED)
    }

    /// The map value of `key` if it is resident (not absent, not a ghost).
    #[inline]
    fn resident_value(&self, key: u64) -> Option<u32> {
        self.map.get(key).filter(|&v| !self.is_ghost(v))
    }

    /// Whether a map value is one of the policy's ghosts, not a frame.
    #[inline(always)]
    fn is_ghost(&self, value: u32) -> bool {
        self.shared && value & GHOST != 0
    }

    /// Starts loading the index slot of `key` into the CPU cache (a memory hint, unrelated to
    /// read-ahead; see [`BlockMap::warm`]).
    #[inline]
    pub fn warm(&self, key: u64) {
        self.map.warm(key);
    }

    /// The second step of [`Cache::warm`], a few requests later, when the index slot of `key`
    /// has arrived: starts loading what the policy will touch for it ([`Policy::warm`]).
    #[inline]
    pub fn warm_policy(&self, key: u64) {
        if !self.policy.warms() {
            return;
        }
        let frame = self.resident_value(key).map(|v| v & !MAP_PREFETCHED);
        self.policy.warm(frame, key);
    }

    /// Whether [`Cache::warm`] can help: the index has outgrown the CPU's caches.
    #[inline]
    pub fn worth_warming(&self) -> bool {
        self.map.worth_warming()
    }

    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.resident_value(key).is_some()
    }

    /// Whether the block in `frame` was prefetched and not yet demanded.
    #[inline]
    pub fn is_unused_prefetch(&self, frame: Frame) -> bool {
        self.flags[frame as usize] & PREFETCHED != 0
    }

    /// Whether the block in `frame` was brought in by read-ahead.
    #[inline]
    pub fn by_prefetch(&self, frame: Frame) -> bool {
        self.flags[frame as usize] & BY_PREFETCH != 0
    }

    /// A demand access of `a.key`: a hit updates the policy, a miss inserts the block.
    #[inline]
    pub fn demand(&mut self, a: &Access) -> Demand {
        self.demand_frame(a).0
    }

    /// [`Cache::demand`], also telling the frame that holds the block afterwards (`None` when
    /// the miss was bypassed). Always inlined, so [`Cache::demand`] drops the frame for free.
    #[inline(always)]
    pub fn demand_frame(&mut self, a: &Access) -> (Demand, Option<Frame>) {
        match self.map.find(a.key) {
            Ok(i) if self.is_ghost(self.map.value_at(i)) => match self.insert_shared(a, Origin::Demand, Ok(i), &[]) {
                Some(f) => (Demand::Miss, Some(f)),
                None => (Demand::MissBypassed, None),
            },
            Ok(i) => {
                let v = self.map.value_at_mut(i);
                if *v & MAP_PREFETCHED == 0 {
                    let f = *v;
                    self.policy.hit(f, a);
                    self.evict_surplus();
                    (Demand::Hit, Some(f))
                } else {
                    *v &= !MAP_PREFETCHED;
                    let f = *v;
                    self.flags[f as usize] &= !PREFETCHED;
                    self.policy.first_demand(f, a);
                    (Demand::PrefetchHit, Some(f))
                }
            }
            Err(vacant) => match self.insert_vacant(a, Origin::Demand, vacant) {
                Some(f) => (Demand::Miss, Some(f)),
                None => (Demand::MissBypassed, None),
            },
        }
    }

    /// Evicts the frames the policy gives up after a hit ([`Policy::surplus`]; a no-op for
    /// every policy but one, compiled away for them).
    #[inline(always)]
    fn evict_surplus(&mut self) {
        while let Some(v) = self.policy.surplus(&Pins::new(&self.flags)) {
            self.evict(v);
        }
    }

    /// Inserts a block that is not resident, evicting as the policy chooses. Returns the frame,
    /// or `None` when every resident frame is pinned (the block is then not cached).
    pub fn insert(&mut self, a: &Access, origin: Origin) -> Option<Frame> {
        match self.map.find(a.key) {
            Err(vacant) => self.insert_vacant(a, origin, vacant),
            Ok(i) if self.is_ghost(self.map.value_at(i)) => self.insert_shared(a, origin, Ok(i), &[]),
            Ok(_) => panic!("insert of a resident block"),
        }
    }

    /// [`Cache::insert`] given the map slot where the lookup that missed `a.key` stopped.
    #[inline(always)]
    fn insert_vacant(&mut self, a: &Access, origin: Origin, vacant: usize) -> Option<Frame> {
        if self.shared {
            return self.insert_shared(a, origin, Err(vacant), &[]);
        }
        self.policy.prepare_insert(a, origin);
        let value = |f: Frame| if origin == Origin::Prefetch { f | MAP_PREFETCHED } else { f };
        let frame = match self.take_free() {
            Some(f) => {
                self.map.insert_vacant(vacant, a.key, value(f));
                f
            }
            None => {
                let v = self.policy.victim(&Pins::new(&self.flags), a)?;
                // The victim's frame takes the block at once (what pushing it on the free
                // list and popping it would give), and the policy moves it from one to the
                // other in one step.
                let (old, why) = self.vacate(v);
                self.map.replace(old, vacant, a.key, value(v));
                self.set_frame(v, a, origin);
                self.policy.replace(v, old, why, a, origin);
                self.warm_next_victim();
                return Some(v);
            }
        };
        self.place(frame, a, origin);
        // A free frame went to a partition that may now hold more than its target: eager
        // partitioning gives one block back at once (the evicted block is this insertion's
        // victim, as if the policy had chosen it).
        if let Some(v) = self.policy.reallocate(&Pins::new(&self.flags)) {
            if v != frame {
                self.evict(v);
            }
        }
        Some(frame)
    }

    /// Evicts one frame the policy gives up to bring a partition down to its target
    /// ([`Policy::reallocate`]), leaving it free; the frame, so that a timed engine can write
    /// its block back. Engines ask after every completed device read until `None`.
    #[inline(always)]
    pub fn reallocate_one(&mut self) -> Option<Frame> {
        let v = self.policy.reallocate(&Pins::new(&self.flags))?;
        self.evict(v);
        self.victim = None; // the caller has it
        Some(v)
    }

    /// [`Cache::insert_vacant`] and [`Cache::insert_unless_evicting`] for a cache that shares its
    /// index with the policy's ghosts: `found` is `Ok(slot)` when the key is a ghost there, else
    /// `Err(vacant)`; the insertion is abandoned if the policy's victim is one of `group`.
    #[inline(always)]
    fn insert_shared(
        &mut self,
        a: &Access,
        origin: Origin,
        found: Result<usize, usize>,
        group: &[Frame],
    ) -> Option<Frame> {
        match found {
            Ok(i) => self.policy.prepare_insert_ghost(a, origin, self.map.value_at(i) & !GHOST),
            Err(_) => self.policy.prepare_insert(a, origin),
        }
        // The index is not touched until the frame is known: then the block's entry is written
        // where the lookup stopped (the ghost's slot, or the vacant one, which a forgotten
        // ghost's removal shares a probe with), and only then do forgotten ghosts go and the
        // victim's entry turn into a ghost. Removing first would move entries and cost a
        // second probe for the block's key.
        let value = if origin == Origin::Prefetch { MAP_PREFETCHED } else { 0 };
        let (frame, evicted) = match self.take_free() {
            Some(f) => (f, None),
            None => {
                let victim = self.policy.victim(&Pins::new(&self.flags), a).filter(|v| !group.contains(v));
                let Some(v) = victim else {
                    // The ghost the key was is the policy's no longer, and the block is not
                    // cached: its entry goes.
                    self.drop_forgotten();
                    if found.is_ok() {
                        self.map.remove(a.key);
                    }
                    return None;
                };
                (v, Some(self.release(v)))
            }
        };
        match found {
            Ok(i) => {
                *self.map.value_at_mut(i) = frame | value;
                self.drop_forgotten();
            }
            Err(vacant) => match self.policy.take_forgotten() {
                Some(k) => {
                    self.map.replace(k, vacant, a.key, frame | value);
                    self.drop_forgotten();
                }
                None => self.map.insert_vacant(vacant, a.key, frame | value),
            },
        }
        if let Some(old) = evicted {
            self.leave_ghost(old);
            self.warm_next_victim();
        }
        self.place(frame, a, origin);
        Some(frame)
    }

    /// Drops from the index the ghosts the policy forgot.
    #[inline(always)]
    fn drop_forgotten(&mut self) {
        while let Some(k) = self.policy.take_forgotten() {
            self.map.remove(k);
        }
    }

    /// The map entry of `key`, which just left the cache: the policy's ghost now, or gone.
    #[inline(always)]
    fn leave_ghost(&mut self, key: u64) {
        match self.policy.take_ghost() {
            Some(g) => {
                let i = self.map.find(key).expect("the evicted block's entry");
                *self.map.value_at_mut(i) = GHOST | g;
            }
            None => {
                self.map.remove(key);
            }
        }
    }

    /// Starts loading what the next two evictions will touch: the index entries of the blocks
    /// the policy expects to evict next (their keys were loaded by the previous call) and the
    /// state of those it expects after them (a memory hint; see [`Policy::likely_victims`]).
    #[inline(always)]
    fn warm_next_victim(&self) {
        if self.map.worth_warming() {
            // Each candidate is tested by name, not through an iterator over the arrays: the
            // compiler then drops all of this for a policy that names none (`LikelyVictims::NONE`),
            // where the iterators cost LFU 20 instructions per miss.
            let v = self.policy.likely_victims();
            let [n0, n1] = v.next;
            if let Some(f) = n0 {
                self.map.warm(self.keys[f as usize]);
            }
            if let Some(f) = n1 {
                self.map.warm(self.keys[f as usize]);
            }
            let [a0, a1] = v.after;
            if let Some(f) = a0 {
                self.warm_frame(f);
            }
            if let Some(f) = a1 {
                self.warm_frame(f);
            }
            if self.shared {
                for k in self.policy.likely_forgotten().into_iter().flatten() {
                    self.map.warm(k);
                }
            }
        }
    }

    /// Starts loading the key, flags and policy state of `frame`, a victim to come.
    #[inline(always)]
    fn warm_frame(&self, f: Frame) {
        crate::memory_hint::prefetch(&self.keys[f as usize]);
        crate::memory_hint::prefetch(&self.flags[f as usize]);
        self.policy.warm(Some(f), 0);
    }

    /// Inserts a block read ahead unless the policy's victim is one of `group`, the blocks read
    /// ahead together with it: then the insertion is abandoned. Pinned frames (the demanded
    /// block, whose I/O is in flight) are skipped as usual. This is the stopping rule of the
    /// prefetching paper's Table 1: "blocks fetched together do not evict each other; if
    /// prefetching a block would result in such an eviction, no more blocks are prefetched".
    pub fn insert_unless_evicting(&mut self, a: &Access, group: &[Frame]) -> Option<Frame> {
        let found = self.map.find(a.key);
        if let Ok(i) = found {
            assert!(self.is_ghost(self.map.value_at(i)), "insert of a resident block");
        }
        if self.shared {
            return self.insert_shared(a, Origin::Prefetch, found, group);
        }
        let Err(vacant) = found else { unreachable!("a ghost in a cache that shares no index") };
        self.policy.prepare_insert(a, Origin::Prefetch);
        let frame = match self.take_free() {
            Some(f) => {
                self.map.insert_vacant(vacant, a.key, f | MAP_PREFETCHED);
                f
            }
            None => {
                let v = self.policy.victim(&Pins::new(&self.flags), a)?;
                if group.contains(&v) {
                    return None;
                }
                let old = self.release(v);
                self.map.replace(old, vacant, a.key, v | MAP_PREFETCHED);
                v
            }
        };
        self.place(frame, a, Origin::Prefetch);
        Some(frame)
    }

    /// Residency of a block whose map entry is in place. Always inlined, as is
    /// [`Cache::release`]: each runs once per miss, and as a call its saved and restored
    /// registers cost about as much as its body.
    #[inline(always)]
    fn place(&mut self, frame: Frame, a: &Access, origin: Origin) {
        self.set_frame(frame, a, origin);
        self.policy.insert(frame, a, origin);
    }

    /// The cache's own record of the block `a.key` in `frame`: its key and flags.
    #[inline(always)]
    fn set_frame(&mut self, frame: Frame, a: &Access, origin: Origin) {
        let prefetched = origin == Origin::Prefetch;
        self.keys[frame as usize] = a.key;
        self.flags[frame as usize] = if prefetched { PREFETCHED | BY_PREFETCH } else { 0 };
    }

    /// Gives up `frame` (chosen by the policy, or by a caller that drops a block).
    pub fn evict(&mut self, frame: Frame) {
        let key = self.release(frame);
        self.unmap(key);
        self.free.push(frame);
    }

    /// The trace dropped the data of the block in `frame` (a file truncated or deleted): it
    /// leaves at once, not as an eviction, and the policy keeps nothing of it
    /// ([`Removal::Dropped`]). The frame must not be pinned.
    pub fn drop_frame(&mut self, frame: Frame) {
        let key = self.keys[frame as usize];
        debug_assert_eq!(self.frame_of(key), Some(frame));
        debug_assert!(self.flags[frame as usize] & PINNED == 0, "dropping a pinned frame");
        self.flags[frame as usize] = 0;
        self.policy.remove(frame, key, Removal::Dropped);
        self.dropped += 1;
        self.unmap(key);
        self.free.push(frame);
    }

    /// The trace dropped the data of block `key`, which is not cached: the policy forgets
    /// what it remembers of it ([`Policy::forget`]).
    #[inline]
    pub fn forget(&mut self, key: u64) {
        debug_assert!(!self.contains(key));
        self.policy.forget(key);
    }

    /// The map entry of `key`, whose frame was just given up: the policy's ghost now (a
    /// policy that shares the index), or gone.
    #[inline(always)]
    fn unmap(&mut self, key: u64) {
        if self.shared {
            self.drop_forgotten();
            self.leave_ghost(key);
        } else {
            self.map.remove(key);
        }
    }

    /// [`Cache::evict`] but for the map entry, which the caller removes, and the free list:
    /// the caller fills `frame` next. Returns the key that leaves.
    #[inline(always)]
    fn release(&mut self, frame: Frame) -> u64 {
        let (key, why) = self.vacate(frame);
        self.policy.remove(frame, key, why);
        key
    }

    /// [`Cache::release`] but for telling the policy: the key that leaves and why, for its
    /// `remove` or `replace`.
    #[inline(always)]
    fn vacate(&mut self, frame: Frame) -> (u64, Removal) {
        let key = self.keys[frame as usize];
        debug_assert_eq!(self.frame_of(key), Some(frame));
        debug_assert!(self.flags[frame as usize] & PINNED == 0, "evicting a pinned frame");
        let why = if self.flags[frame as usize] & PREFETCHED != 0 {
            self.evicted_unused += 1;
            Removal::UnusedPrefetch
        } else {
            Removal::Evicted
        };
        self.evictions += 1;
        self.victim = Some((frame, key));
        self.flags[frame as usize] = 0;
        (key, why)
    }

    /// The frame and key of the block evicted since the last call, if any.
    #[inline]
    pub fn take_victim(&mut self) -> Option<(Frame, u64)> {
        self.victim.take()
    }

    #[inline]
    pub fn is_pinned(&self, frame: Frame) -> bool {
        self.flags[frame as usize] & PINNED != 0
    }

    #[inline]
    pub fn pin(&mut self, frame: Frame) {
        self.flags[frame as usize] |= PINNED;
    }

    #[inline]
    pub fn unpin(&mut self, frame: Frame) {
        self.flags[frame as usize] &= !PINNED;
    }

    /// Resident keys (tests and dumps), in frame order.
    pub fn resident_keys(&self) -> Vec<u64> {
        let mut v: Vec<(Frame, u64)> =
            self.map.iter().filter(|&(_, f)| !self.is_ghost(f)).map(|(k, f)| (f & !MAP_PREFETCHED, k)).collect();
        v.sort_unstable();
        v.into_iter().map(|(_, k)| k).collect()
    }

    /// Checks residency bookkeeping and the policy's own invariants.
    pub fn check(&self) -> Result<(), String> {
        let ghosts = self.policy.shared_ghosts();
        if self.map.len() != self.len() + ghosts {
            return Err(format!("{} mapped keys but {} used frames and {ghosts} ghosts", self.map.len(), self.len()));
        }
        if self.len() > self.capacity {
            return Err(format!("{} blocks in a cache of {}", self.len(), self.capacity));
        }
        for (k, v) in self.map.iter() {
            if self.is_ghost(v) {
                continue;
            }
            let f = v & !MAP_PREFETCHED;
            if self.keys[f as usize] != k {
                return Err(format!("frame {f} maps {k} but holds {}", self.keys[f as usize]));
            }
            if (v & MAP_PREFETCHED != 0) != (self.flags[f as usize] & PREFETCHED != 0) {
                return Err(format!("frame {f}: prefetched mark in the map disagrees with its flag"));
            }
        }
        self.policy.check(self.len())
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::steps::Steps;
    use crate::policy::{Access, Linux, Lru};

    fn at(time: u64) -> Access {
        Access { time, ..Access::default() }
    }

    #[test]
    fn a_smaller_capacity_evicts_in_lru_order_and_a_larger_one_refills() {
        let mut s = Steps::new(Lru::new(4), 4);
        assert_eq!(s.run(&[1, 2, 3, 4, 1]), "MMMMH");
        // LRU order, oldest first: 2 3 4 1. Down to 2 blocks: 2 and 3 go.
        assert_eq!(s.cache.set_capacity(2, &at(5)), 2);
        assert_eq!((s.cache.len(), s.cache.capacity(), s.cache.evictions), (2, 2, 2));
        assert_eq!(s.cache.resident_keys().iter().copied().collect::<std::collections::BTreeSet<_>>(), [1, 4].into());
        s.cache.check().unwrap();
        // Full at 2: a new block evicts the LRU one (4), and 4 then evicts 1.
        assert_eq!(s.run(&[5, 4]), "MM");
        assert_eq!(s.cache.resident_keys().iter().copied().collect::<std::collections::BTreeSet<_>>(), [4, 5].into());
        // Back to 4: the next two misses fill the cache without evicting.
        s.cache.set_capacity(4, &at(7));
        let before = s.cache.evictions;
        assert_eq!(s.run(&[6, 7, 4, 5]), "MMHH");
        assert_eq!((s.cache.len(), s.cache.evictions - before), (4, 0));
        // Full at 4 again: 8 evicts the LRU block (6), and 6 then evicts 7.
        assert_eq!(s.run(&[8, 6]), "MM");
        assert_eq!((s.cache.len(), s.cache.evictions - before), (4, 2));
    }

    #[test]
    fn frames_parked_by_a_fall_come_back_and_never_exceed_the_build() {
        let mut s = Steps::new(Lru::new(8), 8);
        s.cache.set_capacity(3, &at(0));
        assert_eq!(s.run(&[1, 2, 3, 4, 5]), "MMMMM");
        assert_eq!((s.cache.len(), s.cache.evictions), (3, 2));
        // Down to 1 with 3 resident: two evictions, two frames parked.
        assert_eq!(s.cache.set_capacity(1, &at(5)), 2);
        assert_eq!(s.cache.resident_keys(), vec![5]);
        // Up to the whole build: 7 more blocks fit before the next eviction.
        s.cache.set_capacity(8, &at(5));
        let before = s.cache.evictions;
        assert_eq!(s.run(&[11, 12, 13, 14, 15, 16, 17]), "MMMMMMM");
        assert_eq!((s.cache.len(), s.cache.evictions - before), (8, 0));
        assert_eq!(s.run(&[18]), "M");
        assert_eq!((s.cache.len(), s.cache.evictions - before), (8, 1));
    }

    #[test]
    fn the_linux_policy_gives_up_its_inactive_tail_first_when_the_cache_shrinks() {
        let mut s = Steps::new(Linux::new(6, 48), 6);
        assert_eq!(s.run(&[1, 2, 1, 2, 3, 4, 5, 6]), "MMHHMMMM");
        assert_eq!(s.policy().dump(), "A: 2 1 | I: 6* 5* 4* 3*");
        // Down to 3: reclaim takes the inactive tail three times, 3, 4 and 5 (the inactive list
        // is never below the active one, so nothing is demoted); shadows remember them.
        assert_eq!(s.cache.set_capacity(3, &at(8)), 3);
        s.cache.check().unwrap();
        assert_eq!(s.cache.len(), 3);
        assert_eq!(s.policy().dump(), "A: 2 1 | I: 6*");
        // Once more: the inactive list (1) is below the active (2): the active tail 1 is
        // demoted, then the inactive tail 6 goes.
        assert_eq!(s.cache.set_capacity(2, &at(8)), 1);
        assert_eq!(s.policy().dump(), "A: 2 | I: 1");
        // Up to 6: 3 and 7 fill it without an eviction.
        s.cache.set_capacity(6, &at(8));
        let before = s.cache.evictions;
        assert_eq!(s.run(&[3, 7]), "MM");
        assert_eq!((s.cache.len(), s.cache.evictions - before), (4, 0));
    }
}

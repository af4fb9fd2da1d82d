//! LRU stack distances in one pass (Mattson, Gecsei, Slutz and Traiger, "Evaluation techniques
//! for storage hierarchies", IBM Systems Journal 1970), in O(log n) per access.
//!
//! The stack distance of an access is the block's position (1-based) in the LRU stack just before
//! the access: the number of distinct blocks referenced since its previous reference, itself
//! included. An LRU cache of C blocks hits exactly the accesses at distance <= C (the inclusion
//! property), so one pass gives the misses at every cache size.
//!
//! How: every block's most recent access owns a slot on a time line, a bit per slot says which
//! slots are occupied, and counters over groups of slots (1,024, then 64 times more per level)
//! count them. The distance of an access to a block whose last slot is `p` is the number of
//! occupied slots at or after `p`: the live blocks less those before `p`, which takes at most 15
//! word popcounts and 63 counters per level, read contiguously (a tree with this fan-out is
//! shallow, and its scans stay in a few cache lines, where a binary Fenwick tree jumps across the
//! whole array). Slots of blocks referenced again are freed, so the time line is compacted (live
//! slots renumbered in order) whenever it fills; with the line kept at least twice the live blocks
//! this costs O(1) amortized and keeps memory proportional to the distinct blocks, not to the
//! trace length.

use bufsim_core::blockmap::BlockMap;

/// Smallest time line (slots) after a compaction.
const MIN_SLOTS: usize = 1 << 12;
/// Bitset words per first-level group (1,024 slots).
const WORDS_PER_GROUP: usize = 16;
/// Counters per group of the next level.
const FANOUT: usize = 64;

pub struct StackDistances {
    /// Block key -> slot of its most recent access: the engine's open-addressing index, one
    /// memory access per lookup, with a prefetch hint so a lookup a few accesses ahead is cached.
    slot_of: BlockMap,
    /// Blocks `slot_of` is sized for; it is rebuilt twice as large when full.
    capacity: usize,
    /// Key owning each slot (meaningful where `occupied` is set).
    owner: Vec<u64>,
    /// Bit per slot: some block's most recent access is here.
    occupied: Vec<u64>,
    /// `counts[0][g]`: occupied slots in group g of 1,024 slots; `counts[j][g]`: in group g of
    /// 1,024 * 64^j slots. The last level has at most 64 counters.
    counts: Vec<Vec<u32>>,
    /// Next free slot; every occupied slot is below it.
    next: usize,
    /// Occupied slots = blocks currently in the stack.
    live: usize,
    /// Compaction's old-slot -> new-slot table, kept to avoid reallocating it each time.
    renumber: Vec<u32>,
}

impl Default for StackDistances {
    fn default() -> Self {
        Self::new()
    }
}

impl StackDistances {
    pub fn new() -> Self {
        let mut s = StackDistances {
            slot_of: BlockMap::with_max_len(MIN_SLOTS),
            capacity: MIN_SLOTS,
            owner: Vec::new(),
            occupied: Vec::new(),
            counts: Vec::new(),
            next: 0,
            live: 0,
            renumber: Vec::new(),
        };
        s.resize_line(MIN_SLOTS);
        s
    }

    /// Blocks in the stack (distinct blocks seen, less those removed).
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        self.slot_of.get(key).is_some()
    }

    /// Hints that `key` will be accessed soon: starts loading its index slot.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        self.slot_of.warm(key);
    }

    /// Second hint, a few accesses after [`prefetch`](Self::prefetch): the index slot is cached
    /// by now, so find the block's previous slot and start loading the occupancy words the
    /// distance will count. A stale slot (the block comes back in between) costs nothing.
    #[inline]
    pub fn prefetch_counts(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Some(slot) = self.slot_of.get(key) {
            let w = (slot as usize / 64) & !(WORDS_PER_GROUP - 1);
            if w < self.occupied.len() {
                // SAFETY: in bounds; prefetching never faults.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    let p = self.occupied.as_ptr().add(w) as *const i8;
                    _mm_prefetch(p, _MM_HINT_T0);
                    _mm_prefetch(p.add(64), _MM_HINT_T0);
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    fn slots(&self) -> usize {
        self.owner.len()
    }

    /// A line of `slots` slots (a power of two, at least 1,024) with counters sized for it; the
    /// occupancy bits and counters are left for the caller to fill.
    fn resize_line(&mut self, slots: usize) {
        self.owner.resize(slots, 0);
        self.occupied.resize(slots / 64, 0);
        self.counts.clear();
        let mut n = slots / (64 * WORDS_PER_GROUP);
        loop {
            self.counts.push(vec![0; n]);
            if n <= FANOUT {
                break;
            }
            n = n.div_ceil(FANOUT);
        }
    }

    #[inline]
    fn add(&mut self, slot: usize, delta: u32) {
        let mut g = slot / (64 * WORDS_PER_GROUP);
        for level in self.counts.iter_mut() {
            level[g] = level[g].wrapping_add(delta);
            g /= FANOUT;
        }
    }

    /// Occupied slots in `[0, slot)`.
    #[inline]
    fn prefix(&self, slot: usize) -> usize {
        let w = slot / 64;
        let mut total = (self.occupied[w] & ((1u64 << (slot % 64)) - 1)).count_ones();
        let g = w / WORDS_PER_GROUP;
        total += self.occupied[g * WORDS_PER_GROUP..w].iter().map(|x| x.count_ones()).sum::<u32>();
        let mut idx = g;
        for level in &self.counts {
            let parent = idx / FANOUT;
            total += level[parent * FANOUT..idx].iter().sum::<u32>();
            idx = parent;
        }
        total as usize
    }

    #[inline]
    fn occupy(&mut self, slot: usize, key: u64) {
        self.owner[slot] = key;
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.add(slot, 1);
    }

    #[inline]
    fn vacate(&mut self, slot: usize) {
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        self.add(slot, u32::MAX);
    }

    /// References `key`: its stack distance, or `None` on its first reference (a cold miss).
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.next == self.slots() {
            self.compact();
        }
        let now = self.next;
        self.next += 1;
        match self.slot_of.get_mut(key) {
            Some(slot) => {
                let prev = *slot as usize;
                *slot = now as u32;
                // Occupied slots at or after `prev`: the block itself and every distinct block
                // referenced since.
                let distance = self.live - self.prefix(prev);
                self.vacate(prev);
                self.occupy(now, key);
                Some(distance as u64)
            }
            None => {
                if self.live == self.capacity {
                    self.grow_index();
                }
                self.slot_of.insert_new(key, now as u32);
                self.live += 1;
                self.occupy(now, key);
                None
            }
        }
    }

    /// Forgets `key` (SHARDS fixed-size sampling drops blocks from the sample). Returns whether
    /// it was in the stack.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.slot_of.remove(key) {
            Some(slot) => {
                self.vacate(slot as usize);
                self.live -= 1;
                true
            }
            None => false,
        }
    }

    /// Doubles the index (amortized O(1) per new block).
    fn grow_index(&mut self) {
        self.capacity *= 2;
        let mut bigger = BlockMap::with_max_len(self.capacity);
        for (k, v) in self.slot_of.iter() {
            bigger.insert_new(k, v);
        }
        self.slot_of = bigger;
    }

    /// Renumbers the live slots 0..live in time order, in place, and sizes the line to at least
    /// twice the live blocks, so the next compaction is at least as many accesses away as this
    /// one costs. The line only reallocates when the live blocks outgrow it.
    fn compact(&mut self) {
        assert!(
            2 * self.live + 2 < u32::MAX as usize,
            "over 2^31 distinct blocks: beyond what one stack distance pass holds"
        );
        let slots = (2 * self.live + 2).max(MIN_SLOTS).next_power_of_two();
        // New number of each old slot (valid where occupied), and owners moved to the front:
        // a slot only moves down, so the move is safe in place.
        let mut renumber = std::mem::take(&mut self.renumber);
        renumber.resize(self.slots(), 0);
        let mut n = 0usize;
        for w in 0..self.occupied.len() {
            let mut bits = self.occupied[w];
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                renumber[slot] = n as u32;
                self.owner[n] = self.owner[slot];
                n += 1;
            }
        }
        debug_assert_eq!(n, self.live);
        for v in self.slot_of.values_mut() {
            *v = renumber[*v as usize];
        }
        self.renumber = renumber;
        self.occupied.iter_mut().for_each(|w| *w = 0);
        self.resize_line(slots);
        for s in 0..self.live {
            self.occupied[s / 64] |= 1 << (s % 64);
        }
        let mut span = 64 * WORDS_PER_GROUP;
        for level in self.counts.iter_mut() {
            for (g, c) in level.iter_mut().enumerate() {
                *c = self.live.saturating_sub(g * span).min(span) as u32;
            }
            span *= FANOUT;
        }
        self.next = self.live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stack distances by the definition: a list kept in recency order.
    fn naive(keys: &[u64]) -> Vec<Option<u64>> {
        let mut stack: Vec<u64> = Vec::new();
        keys.iter()
            .map(|&k| {
                let d = stack.iter().position(|&x| x == k).map(|p| p as u64 + 1);
                if let Some(p) = d {
                    stack.remove(p as usize - 1);
                }
                stack.insert(0, k);
                d
            })
            .collect()
    }

    #[test]
    fn hand_computed_distances() {
        // a b c a a d b: a at depth 3 (c, b above it), a again at 1, b at 4 (a, d, c above).
        let mut s = StackDistances::new();
        let got: Vec<_> = [1, 2, 3, 1, 1, 4, 2].iter().map(|&k| s.access(k)).collect();
        assert_eq!(got, vec![None, None, None, Some(3), Some(1), None, Some(4)]);
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn compaction_keeps_distances_exact() {
        // Enough accesses to compact many times, with few and with many live blocks.
        let mut rng = bufsim_core::rng::Rng::new(5);
        let keys: Vec<u64> = (0..40_000).map(|i| if i % 3 == 0 { rng.below(50) } else { rng.below(6_000) }).collect();
        let mut s = StackDistances::new();
        let got: Vec<_> = keys.iter().map(|&k| s.access(k)).collect();
        assert_eq!(got, naive(&keys));
    }

    #[test]
    fn removals_and_compactions_keep_distances_exact() {
        // SHARDS's fixed-size sampling removes blocks between accesses.
        let mut rng = bufsim_core::rng::Rng::new(11);
        let mut s = StackDistances::new();
        let mut naive: Vec<u64> = Vec::new();
        for _ in 0..30_000 {
            let k = rng.below(3_000);
            if rng.below(10) == 0 {
                let present = naive.iter().position(|&x| x == k);
                if let Some(p) = present {
                    naive.remove(p);
                }
                assert_eq!(s.remove(k), present.is_some());
                continue;
            }
            let want = naive.iter().position(|&x| x == k).map(|p| p as u64 + 1);
            if let Some(p) = want {
                naive.remove(p as usize - 1);
            }
            naive.insert(0, k);
            assert_eq!(s.access(k), want);
            assert_eq!(s.len(), naive.len());
        }
    }

    #[test]
    fn removed_blocks_leave_the_stack() {
        let mut s = StackDistances::new();
        for k in [1, 2, 3] {
            s.access(k);
        }
        assert!(s.remove(2));
        assert!(!s.remove(2));
        assert_eq!(s.access(1), Some(2)); // only 3 above it now
        assert_eq!(s.access(2), None);
    }
}

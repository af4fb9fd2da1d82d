//! LRU stack distances in one pass (Mattson, Gecsei, Slutz and Traiger, "Evaluation techniques
//! for storage hierarchies", IBM Systems Journal 1970), in O(log n) per access.
//!
//! The stack distance of an access is the block's position (1-based) in the LRU stack just before
//! the access: the number of distinct blocks referenced since its previous reference, itself
//! included. An LRU cache of C blocks hits exactly the accesses at distance <= C (the inclusion
//! property), so one pass gives the misses at every cache size.
//!
//! How: every block's most recent access owns a slot on a time line, and a Fenwick tree counts
//! the occupied slots. The distance of an access to a block whose last slot is `p` is the number
//! of occupied slots at or after `p`. Slots of blocks referenced again are freed, so the time
//! line is compacted (live slots renumbered in order) whenever it fills; with the line kept at
//! least twice the live blocks this costs O(1) amortized and keeps memory proportional to the
//! distinct blocks, not to the trace length.

use rustc_hash::FxHashMap;

/// Smallest time line (slots) after a compaction.
const MIN_SLOTS: usize = 1 << 12;

pub struct StackDistances {
    /// Block key -> slot of its most recent access.
    slot_of: FxHashMap<u64, u64>,
    /// Key owning each slot (meaningful where `occupied` is set).
    owner: Vec<u64>,
    /// Bit per slot: some block's most recent access is here.
    occupied: Vec<u64>,
    /// Fenwick tree over slots (1-based inside), counting occupied slots.
    tree: Vec<u32>,
    /// Next free slot; every occupied slot is below it.
    next: usize,
    /// Occupied slots = blocks currently in the stack.
    live: usize,
}

impl Default for StackDistances {
    fn default() -> Self {
        Self::new()
    }
}

impl StackDistances {
    pub fn new() -> Self {
        StackDistances {
            slot_of: FxHashMap::default(),
            owner: vec![0; MIN_SLOTS],
            occupied: vec![0; MIN_SLOTS / 64],
            tree: vec![0; MIN_SLOTS + 1],
            next: 0,
            live: 0,
        }
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
        self.slot_of.contains_key(&key)
    }

    #[inline]
    fn slots(&self) -> usize {
        self.owner.len()
    }

    #[inline]
    fn add(&mut self, slot: usize, delta: i32) {
        let n = self.slots();
        let mut i = slot + 1;
        while i <= n {
            self.tree[i] = self.tree[i].wrapping_add(delta as u32);
            i += i & i.wrapping_neg();
        }
    }

    /// Occupied slots in `[0, slot)`.
    #[inline]
    fn prefix(&self, slot: usize) -> usize {
        let mut i = slot;
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s as usize
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
        self.add(slot, -1);
    }

    /// References `key`: its stack distance, or `None` on its first reference (a cold miss).
    #[inline]
    pub fn access(&mut self, key: u64) -> Option<u64> {
        if self.next == self.slots() {
            self.compact();
        }
        let now = self.next;
        self.next += 1;
        match self.slot_of.insert(key, now as u64) {
            Some(prev) => {
                let prev = prev as usize;
                // Occupied slots at or after `prev`: the block itself and every distinct block
                // referenced since.
                let distance = self.live - self.prefix(prev);
                self.vacate(prev);
                self.occupy(now, key);
                Some(distance as u64)
            }
            None => {
                self.live += 1;
                self.occupy(now, key);
                None
            }
        }
    }

    /// Forgets `key` (SHARDS fixed-size sampling drops blocks from the sample). Returns whether
    /// it was in the stack.
    pub fn remove(&mut self, key: u64) -> bool {
        match self.slot_of.remove(&key) {
            Some(slot) => {
                self.vacate(slot as usize);
                self.live -= 1;
                true
            }
            None => false,
        }
    }

    /// Renumbers the live slots 0..live in time order and sizes the line to at least twice the
    /// live blocks, so the next compaction is at least as many accesses away as this one costs.
    fn compact(&mut self) {
        let slots = (2 * self.live + 2).max(MIN_SLOTS).next_power_of_two();
        let mut owner = Vec::with_capacity(slots);
        for (w, &word) in self.occupied.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let key = self.owner[slot];
                *self.slot_of.get_mut(&key).expect("an occupied slot's block is in the map") = owner.len() as u64;
                owner.push(key);
            }
        }
        debug_assert_eq!(owner.len(), self.live);
        owner.resize(slots, 0);
        self.owner = owner;
        self.occupied = vec![0; slots.div_ceil(64)];
        for s in 0..self.live {
            self.occupied[s / 64] |= 1 << (s % 64);
        }
        // Fenwick node i (1-based) covers slots (i - lowbit(i), i]; slots 1..=live are occupied.
        self.tree = (0..=slots)
            .map(|i| {
                if i == 0 {
                    return 0;
                }
                let low = i - (i & i.wrapping_neg());
                (i.min(self.live).saturating_sub(low)) as u32
            })
            .collect();
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
        let keys: Vec<u64> = (0..40_000)
            .map(|i| if i % 3 == 0 { rng.below(50) } else { rng.below(6_000) })
            .collect();
        let mut s = StackDistances::new();
        let got: Vec<_> = keys.iter().map(|&k| s.access(k)).collect();
        assert_eq!(got, naive(&keys));
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

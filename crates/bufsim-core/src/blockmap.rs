//! The residency index: block key -> frame, an open-addressing table with linear probing.
//!
//! Why not a general hash map: every access does one lookup here, and on a large cache that
//! lookup is a cache miss. Keeping key and value in one 16-byte slot (and the table at most 1/4
//! or 3/8 full, below) makes it one memory access in the common case, where SwissTable-style
//! maps touch a control group and a bucket. Deletion shifts later entries back (no tombstones),
//! so the table never degrades over billions of insert/remove pairs. The table doubles when an
//! insertion would fill it past its bound, so it takes memory for the blocks present, not for a
//! bound.
//!
//! How full: the length of a probe run sets the cost of a lookup and of a deletion's shift,
//! mostly through the mispredicted branches that end those loops, while the table stays in a
//! core's L2; past that, its size sets the cost (memory misses). So a table of up to 1 MiB
//! (65,536 slots) is kept at most 1/4 full and a larger one at most 3/8. Measured on the Intel
//! Xeon of docs/performance.md (whole process, min of 7 to 9 interleaved runs): 3/8 instead of
//! 1/2 at every size took LRU on P3 at 1% from 0.161 to 0.113 s and LRU on Zipf at 10% from
//! 0.214 to 0.166 s; then 1/4 for the small tables took ARC on Zipf at 1% from 0.200 to 0.166 s,
//! FIFO there from 0.168 to 0.141 s and ARC on P3 at 1% from 0.240 to 0.175 s, while 1/4 for
//! the large ones as well made ARC and LIRS on P3 at 10% about 10% slower. The cost is memory:
//! up to 128 bytes of index per entry in small tables and 85 in large ones, instead of 64.

/// Marks an empty slot (frames are always below this).
const EMPTY: u32 = u32::MAX;

/// Slots of the largest table kept at most 1/4 full (1 MiB); larger ones are kept at most 3/8
/// full.
const SPARSE_SLOTS: usize = 1 << 16;

/// Entries a table of `n` slots holds before it doubles.
#[inline]
fn holds(n: usize) -> usize {
    if n <= SPARSE_SLOTS {
        n / 4
    } else {
        n / 8 * 3
    }
}

/// Tables of at most this many bytes are not worth memory hints ([`BlockMap::worth_warming`]).
const WARM_ABOVE_BYTES: usize = 1024 * 1024;

#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    key: u64,
    value: u32,
}

pub struct BlockMap {
    slots: Vec<Slot>,
    mask: usize,
    shift: u32,
    len: usize,
}

impl Default for BlockMap {
    fn default() -> Self {
        BlockMap::new()
    }
}

impl BlockMap {
    /// An empty map that grows as entries arrive.
    pub fn new() -> Self {
        Self::with_max_len(0)
    }

    /// A map sized for `max_len` entries before it first grows.
    pub fn with_max_len(max_len: usize) -> Self {
        let mut n = 16;
        while holds(n) < max_len {
            n *= 2;
        }
        Self::with_slots(n)
    }

    /// An empty table of `n` slots, a power of two.
    fn with_slots(n: usize) -> Self {
        debug_assert!(n.is_power_of_two());
        BlockMap { slots: vec![Slot { key: 0, value: EMPTY }; n], mask: n - 1, shift: 64 - n.trailing_zeros(), len: 0 }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots in the table (memory accounting and tests).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slot `i`, where `i` is masked into the table (a home, a probe step or a slot found by
    /// one): every probe reads slots, and the bounds check the compiler cannot drop (it does
    /// not know `mask + 1` is the length) would cost two instructions each.
    #[inline(always)]
    fn slot(&self, i: usize) -> Slot {
        debug_assert!(i < self.slots.len());
        // SAFETY: `mask == slots.len() - 1` always (set together in `with_slots`), and every
        // caller passes an index masked by it or returned by `find`.
        unsafe { *self.slots.get_unchecked(i) }
    }

    /// [`BlockMap::slot`], mutably.
    #[inline(always)]
    fn slot_mut(&mut self, i: usize) -> &mut Slot {
        debug_assert!(i < self.slots.len());
        // SAFETY: as in `slot`.
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// Fibonacci hashing: the high bits of key * 2^64/phi spread sequential block numbers.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot of `key` if present (`Ok`), else the empty slot that ends its probe run, where
    /// an insertion would put it (`Err`). Either is valid until the map next changes; a miss
    /// hands its empty slot to [`BlockMap::insert_vacant`] or [`BlockMap::replace`] so that an
    /// insertion after a failed lookup probes the table once, not twice.
    #[inline]
    pub fn find(&self, key: u64) -> Result<usize, usize> {
        let mut i = self.home(key);
        loop {
            let s = self.slot(i);
            if s.value == EMPTY {
                return Err(i);
            }
            if s.key == key {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Whether the table is too big to stay in a CPU's caches between accesses, so that
    /// [`BlockMap::warm`] can save a memory stall. A smaller table is already cached and a
    /// hint would only cost its instructions. The bound is 1 MiB, half of a core's L2 on the
    /// Intel Xeon of docs/performance.md: the table shares the L2 with the policy's per-block
    /// state, about as large again. Measured there: ARC on Zipf at 1%, whose index of resident
    /// blocks and ghosts is 1 MiB at 1/4 full, took 0.232 s with hints and 0.174 s without (two
    /// runs of min of 9); at 2 MiB and more they save (LRU on Zipf at 10%: 0.86 of the time with
    /// them).
    #[inline]
    pub fn worth_warming(&self) -> bool {
        // `mask` is the slot count less one, and already in a register on the lookup path.
        self.mask >= WARM_ABOVE_BYTES / std::mem::size_of::<Slot>()
    }

    /// Asks the CPU to start loading the slot where `key` would sit, so a lookup a few
    /// requests later finds it in the CPU cache (the table is far larger than the CPU caches
    /// on big simulations, and every access probes it). A memory hint, not read-ahead.
    #[inline]
    pub fn warm(&self, key: u64) {
        crate::memory_hint::prefetch(self.slots.as_ptr().wrapping_add(self.home(key)));
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.find(key).ok().map(|i| self.slot(i).value)
    }

    /// Mutable access to the value of a present key.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut u32> {
        match self.find(key) {
            Ok(i) => Some(&mut self.slot_mut(i).value),
            Err(_) => None,
        }
    }

    /// The value in slot `i`, which [`BlockMap::find`] returned as `Ok`.
    #[inline]
    pub fn value_at(&self, i: usize) -> u32 {
        // Masked instead of bounds-checked (one instruction, and never out of the table).
        self.slot(i & self.mask).value
    }

    /// [`BlockMap::value_at`], mutably.
    #[inline]
    pub fn value_at_mut(&mut self, i: usize) -> &mut u32 {
        &mut self.slot_mut(i & self.mask).value
    }

    /// Inserts a key that is not present.
    #[inline]
    pub fn insert_new(&mut self, key: u64, value: u32) {
        match self.find(key) {
            Ok(_) => panic!("insert_new of a present key"),
            Err(vacant) => self.insert_vacant(vacant, key, value),
        }
    }

    /// Inserts `key`, not present, for which [`BlockMap::find`] returned `Err(vacant)` with no
    /// change to the map since.
    #[inline]
    pub fn insert_vacant(&mut self, vacant: usize, key: u64, value: u32) {
        debug_assert!(value != EMPTY);
        debug_assert_eq!(self.find(key), Err(vacant), "stale vacant slot");
        let mut i = vacant;
        if self.len >= holds(self.slots.len()) {
            self.grow();
            i = self.find(key).expect_err("insert_vacant of a present key");
        }
        // Masked: a caller's stale or wrong `vacant` misplaces an entry, never writes outside.
        *self.slot_mut(i & self.mask) = Slot { key, value };
        self.len += 1;
    }

    /// Removes `old`, present, and inserts `key`, not present, for which [`BlockMap::find`]
    /// returned `Err(vacant)` with no change to the map since; returns `old`'s value. The table
    /// ends exactly as `remove(old)` then `insert_new(key, value)` would leave it, with one
    /// probe for `key` instead of two. Always inlined, with the removal: it runs on every
    /// eviction, and as two calls it saved and restored registers each time.
    #[inline(always)]
    pub fn replace(&mut self, old: u64, vacant: usize, key: u64, value: u32) -> u32 {
        debug_assert!(value != EMPTY);
        debug_assert_eq!(self.find(key), Err(vacant), "stale vacant slot");
        let (old_value, hole) = self.remove_at(self.find(old).expect("replace of an absent key"));
        // The removal emptied one slot, `hole`, and filled none that was empty. Every slot from
        // `key`'s home to just before `vacant` was full, so `key`'s probe run now ends at the
        // hole if the hole lies on that stretch, and still at `vacant` otherwise.
        let home = self.home(key);
        let i = if hole.wrapping_sub(home) & self.mask < vacant.wrapping_sub(home) & self.mask { hole } else { vacant };
        // Masked: a caller's stale or wrong `vacant` misplaces an entry, never writes outside.
        *self.slot_mut(i & self.mask) = Slot { key, value };
        self.len += 1;
        old_value
    }

    /// Doubles the table and re-places every entry (amortised over the insertions that filled it).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut bigger = BlockMap::with_slots(self.slots.len() * 2);
        for (k, v) in self.iter() {
            bigger.insert_new(k, v);
        }
        *self = bigger;
    }

    /// Removes a key; returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let i = self.find(key).ok()?;
        Some(self.remove_at(i).0)
    }

    /// Empties slot `i`, which holds an entry; returns its value and the slot left empty at the
    /// end (the only slot that was full before and is empty now).
    #[inline(always)]
    fn remove_at(&mut self, i: usize) -> (u32, usize) {
        let mut hole = i;
        let value = self.slot(hole).value;
        self.len -= 1;
        // Backward-shift deletion: move later members of the probe run into the hole when the
        // hole lies between their home and their slot.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slot(j);
            if s.value == EMPTY {
                break;
            }
            let home = self.home(s.key);
            let dist_j = j.wrapping_sub(home) & self.mask;
            let dist_hole = hole.wrapping_sub(home) & self.mask;
            if dist_hole < dist_j {
                *self.slot_mut(hole) = s;
                hole = j;
            }
        }
        self.slot_mut(hole).value = EMPTY;
        (value, hole)
    }

    /// Every value, mutably, in table order (callers that renumber what the values point to).
    /// A value must never be set to `u32::MAX`, which marks an empty slot.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut u32> + '_ {
        self.slots.iter_mut().filter(|s| s.value != EMPTY).map(|s| &mut s.value)
    }

    /// Every (key, value) pair, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.slots.iter().filter(|s| s.value != EMPTY).map(|s| (s.key, s.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn inserts_finds_and_removes() {
        let mut m = BlockMap::with_max_len(8);
        for k in [0u64, u64::MAX, 5, 13, 21] {
            m.insert_new(k, k as u32 & 0xffff);
        }
        assert_eq!(m.get(u64::MAX), Some(0xffff));
        assert_eq!(m.remove(5), Some(5));
        assert_eq!(m.get(5), None);
        assert_eq!(m.get(13), Some(13));
        *m.get_mut(13).unwrap() = 7;
        assert_eq!(m.get(13), Some(7));
        assert_eq!(m.len(), 4);
        m.values_mut().for_each(|v| *v += 1);
        assert_eq!((m.get(13), m.get(0)), (Some(8), Some(1)));
    }

    proptest! {
        /// Behaves like a HashMap under any mix of inserts and removes, with colliding keys.
        #[test]
        fn matches_a_hashmap(ops in prop::collection::vec((0u64..64, any::<bool>()), 1..2000)) {
            let mut m = BlockMap::with_max_len(64);
            let mut h: HashMap<u64, u32> = HashMap::new();
            for (i, (k, ins)) in ops.into_iter().enumerate() {
                // Multiples of a power of two collide in the low bits.
                let key = k << 40;
                if ins && !h.contains_key(&key) {
                    m.insert_new(key, i as u32);
                    h.insert(key, i as u32);
                } else if !ins {
                    prop_assert_eq!(m.remove(key), h.remove(&key));
                }
                prop_assert_eq!(m.len(), h.len());
            }
            for (k, v) in &h {
                prop_assert_eq!(m.get(*k), Some(*v));
            }
            prop_assert_eq!(m.iter().count(), h.len());
        }

        /// `replace` and `insert_vacant` leave the table slot for slot as `remove` and
        /// `insert_new` do, with colliding keys.
        #[test]
        fn replace_lays_out_the_table_as_remove_then_insert(
            ops in prop::collection::vec((0u64..48, 0u64..48), 1..1500)
        ) {
            let (mut fast, mut slow) = (BlockMap::new(), BlockMap::new());
            let mut present: Vec<u64> = Vec::new();
            for (i, (k, pick)) in ops.into_iter().enumerate() {
                let key = k << 40;
                let Err(vacant) = fast.find(key) else { continue };
                if present.len() < 20 {
                    fast.insert_vacant(vacant, key, i as u32);
                    slow.insert_new(key, i as u32);
                } else {
                    let old = present.swap_remove(pick as usize % present.len());
                    let got = fast.replace(old, vacant, key, i as u32);
                    prop_assert_eq!(Some(got), slow.remove(old));
                    slow.insert_new(key, i as u32);
                }
                present.push(key);
                prop_assert_eq!(fast.len(), slow.len());
                let layout = |m: &BlockMap| {
                    m.slots.iter().map(|s| (s.value != EMPTY).then_some((s.key, s.value))).collect::<Vec<_>>()
                };
                prop_assert_eq!(layout(&fast), layout(&slow));
            }
        }

        /// A map that starts empty grows as needed and stays at most 1/4 full while small, 3/8
        /// once large.
        #[test]
        fn grows_from_empty(keys in prop::collection::hash_set(any::<u64>(), 1..3000)) {
            let mut m = BlockMap::new();
            for (i, &k) in keys.iter().enumerate() {
                m.insert_new(k, i as u32);
                prop_assert!(m.len() <= holds(m.slots()));
                prop_assert!(m.len() * 4 <= m.slots() || m.slots() > SPARSE_SLOTS);
            }
            for (i, &k) in keys.iter().enumerate() {
                prop_assert_eq!(m.get(k), Some(i as u32));
            }
        }
    }
}

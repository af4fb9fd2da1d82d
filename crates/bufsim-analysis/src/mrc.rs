//! Exact LRU miss ratio curve in one pass (Mattson et al. 1970): the misses of an LRU cache of
//! every size from one histogram of stack distances, O(log n) per access.
//!
//! misses(C) = cold misses + accesses whose stack distance exceeds C. This equals bufsim's own
//! LRU simulation at every size (tested on the bundled trace), since an LRU cache of C blocks
//! holds exactly the top C entries of the LRU stack.
//!
//! A trace that drops data (truncated or deleted files) breaks that inclusion: a cache that
//! loses a block holds a free frame until its next miss, while the stack closes up at once. The
//! dropped blocks leave the stack, so the curve counts their next accesses as cold; an access
//! to a block that the closed-up stack lifts above a cache's size is counted a hit where the
//! simulation may miss. The curve is then an estimate (`bufsim mrc` says so).

use serde::Serialize;

use bufsim_core::trace::Request;

use crate::access::{BlockAccess, Visitor};
use crate::stack::StackDistances;

/// Accesses kept in flight: each key's index slot is prefetched this many accesses before its
/// distance is computed (the index is far larger than the CPU caches on big traces).
const LOOKAHEAD: usize = 16;
/// Distances counted together: the histogram is as large as the footprint, so each count is a
/// cache miss; done in a tight batch, many of those misses overlap.
const BATCH: usize = 1024;

/// Builds the stack distance histogram of a stream of block accesses.
#[derive(Default)]
pub struct LruMrc {
    stack: StackDistances,
    /// Keys accessed but not yet processed, oldest at `head`.
    pending: [u64; LOOKAHEAD],
    head: usize,
    queued: usize,
    /// `hist[d]`: accesses at stack distance d (index 0 unused).
    hist: Vec<u64>,
    /// Distances not yet counted in `hist`.
    batch: Vec<u32>,
    cold: u64,
    accesses: u64,
    /// Most blocks the stack held at once (more than it ends with when the trace drops data).
    peak: usize,
    /// Blocks dropped from the stack.
    dropped: u64,
}

impl LruMrc {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one access. Its distance is computed a few accesses later (after its index slot
    /// was prefetched); order is kept, and [`finish`](Self::finish) processes the rest.
    #[inline]
    pub fn access(&mut self, key: u64) {
        self.stack.prefetch(key);
        if self.queued == LOOKAHEAD {
            self.stack.prefetch_counts(self.pending[(self.head + LOOKAHEAD / 2) % LOOKAHEAD]);
            let oldest = std::mem::replace(&mut self.pending[self.head], key);
            self.head = (self.head + 1) % LOOKAHEAD;
            self.process(oldest);
        } else {
            self.pending[(self.head + self.queued) % LOOKAHEAD] = key;
            self.queued += 1;
        }
    }

    /// The trace dropped the data of `key`: it leaves the stack, after every access before it.
    pub fn drop_key(&mut self, key: u64) {
        self.drain();
        if self.stack.remove(key) {
            self.dropped += 1;
        }
    }

    /// Processes every pending access, in order.
    fn drain(&mut self) {
        for i in 0..self.queued {
            let key = self.pending[(self.head + i) % LOOKAHEAD];
            self.process(key);
        }
        self.queued = 0;
        self.head = 0;
    }

    #[inline]
    fn process(&mut self, key: u64) {
        self.accesses += 1;
        match self.stack.access(key) {
            // Distances are at most the live blocks, which the stack keeps below 2^31.
            Some(d) => {
                self.batch.push(d as u32);
                if self.batch.len() == BATCH {
                    self.count_batch();
                }
            }
            None => {
                self.cold += 1;
                self.peak = self.peak.max(self.stack.len());
            }
        }
    }

    fn count_batch(&mut self) {
        let need = self.stack.len() + 1;
        if need > self.hist.len() {
            self.hist.resize(need.next_power_of_two(), 0);
        }
        for &d in &self.batch {
            self.hist[d as usize] += 1;
        }
        self.batch.clear();
    }

    pub fn finish(mut self) -> MissCurve {
        self.drain();
        self.count_batch();
        // The largest distance is the most blocks the stack ever held.
        let distinct = self.peak.max(self.stack.len());
        // misses[c] = cold + #{d > c}; no distance exceeds the distinct blocks.
        let mut misses = vec![0u64; distinct + 1];
        let mut acc = self.cold;
        for c in (0..=distinct).rev() {
            misses[c] = acc;
            acc += self.hist.get(c).copied().unwrap_or(0);
        }
        if let Some(m) = misses.first_mut() {
            *m = self.accesses;
        }
        MissCurve { accesses: self.accesses, cold: self.cold, misses, dropped: self.dropped }
    }
}

impl Visitor for LruMrc {
    #[inline]
    fn access(&mut self, a: &BlockAccess) {
        LruMrc::access(self, a.key);
    }

    fn dropped(&mut self, _r: &Request, keys: &mut dyn Iterator<Item = u64>) {
        keys.for_each(|k| self.drop_key(k));
    }
}

/// LRU misses at every cache size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissCurve {
    pub accesses: u64,
    /// First references (misses at every size).
    pub cold: u64,
    /// `misses[c]` for c = 0 ..= distinct blocks (beyond that, only cold misses).
    misses: Vec<u64>,
    /// Blocks the trace dropped from the stack (truncated or deleted files): when not 0 the
    /// curve is an estimate of LRU's (see the module's documentation).
    pub dropped: u64,
}

impl MissCurve {
    /// Distinct blocks (the size from which only cold misses remain).
    pub fn distinct(&self) -> u64 {
        (self.misses.len() - 1) as u64
    }

    /// LRU misses with a cache of `blocks` blocks.
    pub fn misses(&self, blocks: u64) -> u64 {
        self.misses.get(blocks as usize).copied().unwrap_or(self.cold)
    }

    pub fn hits(&self, blocks: u64) -> u64 {
        self.accesses - self.misses(blocks)
    }

    pub fn miss_ratio(&self, blocks: u64) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.misses(blocks) as f64 / self.accesses as f64
        }
    }

    /// Accesses at each stack distance d >= 1 (`[d - 1]`), recovered from the curve.
    pub fn distance_histogram(&self) -> Vec<u64> {
        self.misses.windows(2).map(|w| w[0] - w[1]).collect()
    }
}

/// Cache sizes worth printing: 1 block, then four sizes per doubling (2^(k/4), rounded), up to
/// and including the distinct blocks.
pub fn default_sizes(distinct: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut k = 0;
    loop {
        let s = (2f64.powf(k as f64 / 4.0)).round() as u64;
        if s >= distinct {
            break;
        }
        if sizes.last() != Some(&s) {
            sizes.push(s);
        }
        k += 1;
    }
    sizes.push(distinct.max(1));
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_curve() {
        // a b c a b c d a: distances -, -, -, 3, 3, 3, -, 4.
        let mut m = LruMrc::new();
        for k in [1, 2, 3, 1, 2, 3, 4, 1] {
            m.access(k);
        }
        let c = m.finish();
        assert_eq!(c.cold, 4);
        assert_eq!(c.distinct(), 4);
        assert_eq!((1..=5).map(|s| c.misses(s)).collect::<Vec<_>>(), vec![8, 8, 5, 4, 4]);
        assert_eq!(c.misses(0), 8);
        assert_eq!(c.distance_histogram(), vec![0, 0, 3, 1]);
        assert_eq!(c.hits(3), 3);
    }

    #[test]
    fn empty_stream() {
        let c = LruMrc::new().finish();
        assert_eq!((c.accesses, c.cold, c.distinct(), c.misses(10)), (0, 0, 0, 0));
        assert_eq!(c.miss_ratio(1), 0.0);
    }

    #[test]
    fn default_sizes_grow_geometrically() {
        assert_eq!(default_sizes(10), vec![1, 2, 3, 4, 5, 6, 7, 8, 10]);
        let s = default_sizes(1 << 20);
        assert_eq!(s.len(), 76); // 80 steps below 2^20, five of them rounding to a size already listed, plus 2^20
        assert_eq!(*s.last().unwrap(), 1 << 20);
        assert_eq!(default_sizes(0), vec![1]);
    }
}

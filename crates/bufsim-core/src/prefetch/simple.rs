//! The simplified prefetcher of the prefetching paper's Table 1 (§3).
//! Deviation: none in intent; the paper's prose leaves the "sequential" test open, and the rule
//! below is the one that reproduces every row of Table 1 for both OPT and LRU.
//!
//! Prefetching happens only on a miss, in one request with the demanded block: `min` blocks
//! in all (the demanded one included), or `max` when the stream looks sequential — the previous
//! demand access of the file was to a block that read-ahead had brought in, and the missed block
//! lies after it. Prefetching stops before a block already cached, and before an insertion that
//! would evict a block fetched together with this one.

use super::{state, BlockEvent, Plan, ReadAhead};

#[derive(Clone, Copy, Debug, Default)]
struct State {
    /// Previous demand access of the file, and whether read-ahead had brought that block in.
    last: Option<(u64, bool)>,
}

pub struct Simple {
    min: u64,
    max: u64,
    files: Vec<State>,
}

impl Simple {
    pub fn new(min: u64, max: u64) -> Self {
        Simple { min, max, files: Vec::new() }
    }
}

impl ReadAhead for Simple {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        let s = state(&mut self.files, ev.file);
        let last = s.last.replace((ev.block, ev.by_prefetch));
        if !ev.miss {
            return None;
        }
        let sequential = last.is_some_and(|(b, by_prefetch)| by_prefetch && ev.block > b);
        let n = if sequential { self.max } else { self.min };
        let mut p = Plan::clipped(ev.block + 1, n - 1, ev.file_blocks, true)?;
        p.stop_at_cached = true;
        p.stop_before_group_eviction = true;
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::*;

    #[test]
    fn sequential_after_a_prefetched_block() {
        let mut ra = Simple::new(3, 8);
        assert_eq!(ra.on_access(&ev(0, true)).unwrap().len, 2); // a: a b c
        assert!(ra.on_access(&ev(2, false)).is_none()); // c, brought by read-ahead
        assert_eq!(ra.on_access(&ev(4, true)).unwrap().len, 7); // e: after c, so 8 blocks
        let mut back = ev(1, true);
        back.by_prefetch = false;
        assert_eq!(ra.on_access(&back).unwrap().len, 2); // behind e: 3 blocks
    }
}

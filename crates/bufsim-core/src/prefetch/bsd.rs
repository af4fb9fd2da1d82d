//! 4.4BSD clustered read-ahead, as the prefetching paper describes it (§2.2).
//! Deviation: the kernel's read-ahead marker is modelled as the first block of the last
//! read-ahead cluster; "evicted before use" is detected as a miss inside that cluster.
//!
//! An access to block B is sequential if the previous access was to B or B-1. Sequential
//! accesses read ahead: the first time one block, doubling on each disk read up to `max`
//! (the cluster maximum) and never past the end of the file. A miss on a block of the last
//! read-ahead cluster means a prefetched block was evicted unused: the read-ahead is too
//! aggressive and its size halves. A non-sequential access reads no extra block (unlike Linux).

use super::{state, BlockEvent, Plan, ReadAhead};

#[derive(Clone, Copy, Debug, Default)]
struct State {
    last: Option<u64>,
    size: u64,
    /// The last read-ahead cluster.
    ra_start: u64,
    ra_end: u64,
}

pub struct Bsd {
    max: u64,
    files: Vec<State>,
}

impl Bsd {
    pub fn new(max: u64) -> Self {
        Bsd { max, files: Vec::new() }
    }
}

impl ReadAhead for Bsd {
    fn on_access(&mut self, ev: &BlockEvent) -> Option<Plan> {
        let max = self.max;
        let s = state(&mut self.files, ev.file);
        let b = ev.block;
        let sequential = s.last.is_some_and(|l| b == l || b == l + 1);
        s.last = Some(b);
        if !sequential {
            s.size = 1;
            s.ra_start = 0;
            s.ra_end = 0;
            return None;
        }
        if ev.miss && b >= s.ra_start && b < s.ra_end {
            s.size = (s.size / 2).max(1);
        }
        // Read ahead when the reader reaches the last cluster (or has run past it).
        if s.ra_end > s.ra_start && b < s.ra_start && b + 1 < s.ra_end {
            return None;
        }
        let start = (b + 1).max(s.ra_end);
        let plan = Plan::clipped(start, s.size.max(1), ev.file_blocks, ev.miss)?;
        s.ra_start = plan.start;
        s.ra_end = plan.start + plan.len;
        // Doubles on each disk read (the engine reads whatever of the plan is not cached).
        s.size = (s.size.max(1) * 2).min(max);
        Some(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::ev;
    use super::*;

    #[test]
    fn doubles_on_sequential_reads_and_stays_ahead() {
        let mut ra = Bsd::new(32);
        assert!(ra.on_access(&ev(5, true)).is_none()); // first access: not sequential
        let p = ra.on_access(&ev(6, true)).unwrap(); // 6 after 5: one block ahead
        assert_eq!((p.start, p.len), (7, 1));
        let p = ra.on_access(&ev(7, false)).unwrap(); // reached the cluster: 2 more
        assert_eq!((p.start, p.len), (8, 2));
        let p = ra.on_access(&ev(8, false)).unwrap();
        assert_eq!((p.start, p.len), (10, 4));
        assert!(ra.on_access(&ev(9, false)).is_none()); // before the cluster at 10
        let p = ra.on_access(&ev(10, false)).unwrap();
        assert_eq!((p.start, p.len), (14, 8));
    }

    #[test]
    fn halves_when_a_prefetched_block_was_lost_and_stops_when_random() {
        let mut ra = Bsd::new(32);
        for b in 0..20 {
            ra.on_access(&ev(b, b == 0));
        }
        // The size has grown; a miss inside the last cluster halves it.
        let s0 = ra.files[0].size;
        let start = ra.files[0].ra_start;
        ra.on_access(&ev(start, true));
        assert!(ra.files[0].size <= s0 / 2 * 2 && ra.files[0].size < 2 * s0);
        assert!(ra.on_access(&ev(900, true)).is_none());
    }
}
